"""A read-only connection's sessions refuse writes; a read-write one's do not."""

from tests.connections_kernel.conftest import Server
from tests.connections_kernel.template_shell import TemplateShell
from tests.servers.database import ORDER_ROWS

COUNT = "print(int(sql('w', 'select count(*) as n from orders')['n'][0]))"


def test_a_read_only_connection_refuses_a_write(shell: TemplateShell, server: Server):
    server.attach(shell)
    refused = shell.run("sql('w', \"insert into orders (id, customer, amount) values (9001, 'x', 1)\")")
    assert refused.error is not None
    assert "read-only transaction" in refused.error["message"].lower().replace("read only", "read-only")
    deleted = shell.run("sql('w', 'delete from orders')")
    assert deleted.error is not None
    assert shell.run(COUNT).stdout.strip() == str(ORDER_ROWS)


def test_a_read_write_connection_writes(shell: TemplateShell, server: Server):
    server.attach(shell, changes={"read_only": False})
    written = shell.run("sql('w', \"insert into orders (id, customer, amount) values (9001, 'x', 1)\")")
    assert written.error is None
    assert shell.run(COUNT).stdout.strip() == str(ORDER_ROWS + 1)
    assert shell.run("sql('w', 'delete from orders where id = 9001')").error is None
    assert shell.run(COUNT).stdout.strip() == str(ORDER_ROWS)
