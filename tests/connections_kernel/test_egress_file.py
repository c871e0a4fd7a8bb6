"""egress.json is read when first needed and again whenever it changed: new connections, ports
and secrets take effect without a restart; the session's env is set before each cell."""

from tests.connections_kernel import configs
from tests.connections_kernel.template_shell import TemplateShell
from tests.sandboxd_process import free_port
from tests.servers.database import Database

CHECK = "import _analyst_connections, json; print(json.dumps(_analyst_connections.check('w')))"


def test_a_changed_file_is_read_again(shell: TemplateShell, postgres: Database):
    assert shell.run("connection('w')").error["type"] == "UnknownConnection"
    shell.set_egress({"w": configs.postgres(postgres)}, {"w": free_port()})
    assert shell.run(CHECK).value()["category"] == "refused"
    shell.set_egress({"w": configs.postgres(postgres)}, {"w": postgres.port})
    assert shell.run(CHECK).value()["ok"] is True
    assert shell.run("print(len(sql('w', 'select id from orders')))").stdout.strip() == "50"


def test_the_session_env_is_set_before_each_cell_and_removed_when_gone(shell: TemplateShell):
    read = "import os; print(os.environ.get('SERVICE_TOKEN'))"
    assert shell.run(read).stdout.strip() == "None"
    shell.set_egress({}, {}, env={"SERVICE_TOKEN": "tok-123"})
    assert shell.run(read).stdout.strip() == "tok-123"
    shell.set_egress({}, {}, env={"SERVICE_TOKEN": "tok-456"})
    assert shell.run(read).stdout.strip() == "tok-456"
    shell.set_egress({}, {}, env={})
    assert shell.run(read).stdout.strip() == "None"
