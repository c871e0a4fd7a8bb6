"""_analyst_connections.check() and schema(), as the worker's silent cells call them: what the
server is and holds, or why it could not be reached, in a category and words."""

from tests.connections_kernel import configs
from tests.connections_kernel.conftest import Server
from tests.connections_kernel.template_shell import TemplateShell
from tests.sandboxd_process import free_port
from tests.servers.database import Database

CHECK = "import _analyst_connections, json; print(json.dumps(_analyst_connections.check('w')))"
SERVER_NAMES = {"postgres": "PostgreSQL", "mariadb": "MariaDB"}
ORDERS = {
    "postgres": {"name": "public.orders", "types": ["INTEGER", "TEXT", "NUMERIC(10, 2)"]},
    "mariadb": {"name": "shop.orders", "types": ["INTEGER", "VARCHAR(50)", "DECIMAL(10, 2)"]},
}


def test_check_names_the_server_and_its_tables(shell: TemplateShell, server: Server):
    server.attach(shell)
    checked = shell.run(CHECK).value()
    assert checked["ok"] is True
    assert SERVER_NAMES[server.kind] in checked["server"]
    expected = ORDERS[server.kind]
    columns = [
        {"name": n, "type": t} for n, t in zip(["id", "customer", "amount"], expected["types"], strict=True)
    ]
    assert checked["schema"]["tables"] == [{"name": expected["name"], "columns": columns}]
    schema = shell.run("print(json.dumps(_analyst_connections.schema('w')))").value()
    assert schema == checked["schema"]


def test_a_closed_port_is_refused(shell: TemplateShell, server: Server):
    server.attach(shell, port=free_port())
    checked = shell.run(CHECK).value()
    assert checked["ok"] is False
    assert checked["category"] == "refused"


def test_a_wrong_password_is_auth(shell: TemplateShell, mariadb: Database):
    shell.set_egress({"w": configs.mysql(mariadb, secret="not-the-password")}, {"w": mariadb.port})
    checked = shell.run(CHECK).value()
    assert (checked["ok"], checked["category"]) == (False, "auth")
    assert "Access denied" in checked["message"]
    assert "not-the-password" not in checked["message"]


def test_an_unknown_role_is_auth(shell: TemplateShell, postgres: Database):
    """Trust auth lets any password in: a role that does not exist is what Postgres refuses."""
    shell.set_egress({"w": configs.postgres(postgres, user="nobody_here")}, {"w": postgres.port})
    checked = shell.run(CHECK).value()
    assert (checked["ok"], checked["category"]) == (False, "auth")
    assert 'role "nobody_here" does not exist' in checked["message"]


def test_a_missing_database_is_not_found(shell: TemplateShell, postgres: Database):
    shell.set_egress({"w": configs.postgres(postgres, database="no_such_db")}, {"w": postgres.port})
    checked = shell.run(CHECK).value()
    assert (checked["ok"], checked["category"]) == (False, "not_found")
    assert 'database "no_such_db" does not exist' in checked["message"]


def test_an_unknown_name_is_not_found(shell: TemplateShell):
    checked = shell.run(CHECK).value()
    assert checked == {
        "ok": False,
        "category": "not_found",
        "message": "no connection named 'w' is attached to this session (attached: none)",
    }
