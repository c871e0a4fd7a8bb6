"""Every statement runs under the session's sql_timeout: the server stops a longer one."""

from tests.connections_kernel.conftest import Server
from tests.connections_kernel.template_shell import TemplateShell

SLEEP = {"postgres": "select pg_sleep(10)", "mariadb": "select sleep(10)"}
STOPPED = {
    "postgres": "canceling statement due to statement timeout",
    "mariadb": "max_statement_time exceeded",
}


def test_a_long_statement_is_stopped(shell: TemplateShell, server: Server):
    server.attach(shell, sql_timeout=1)
    stopped = shell.run(f"sql('w', {SLEEP[server.kind]!r})")
    assert stopped.error is not None
    assert STOPPED[server.kind] in stopped.error["message"]
    assert shell.run("print(len(sql('w', 'select id from orders')))").stdout.strip() == "50"
