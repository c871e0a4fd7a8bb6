"""sql() and %%sql on an attached Postgres or MariaDB, reached at the port egress.json names."""

from tests.connections_kernel.conftest import Server
from tests.connections_kernel.template_shell import TemplateShell
from tests.servers.database import ORDER_ROWS


def test_sql_returns_the_rows_as_a_dataframe(shell: TemplateShell, server: Server):
    server.attach(shell)
    frame = shell.run(
        "import json\n"
        "df = sql('w', 'select id, customer, amount from orders order by id')\n"
        "last = df.iloc[-1].astype(str).tolist()\n"
        "print(json.dumps({'rows': len(df), 'columns': list(df.columns), 'last': last,"
        " 'amount': str(df['amount'].dtype)}))"
    ).value()
    assert frame == {
        "rows": ORDER_ROWS,
        "columns": ["id", "customer", "amount"],
        "last": [str(ORDER_ROWS), f"customer {ORDER_ROWS % 7}", str(ORDER_ROWS * 1.5)],
        "amount": "float64",
    }


def test_parameters_are_bound(shell: TemplateShell, server: Server):
    server.attach(shell)
    found = shell.run(
        "print(sql('w', 'select customer from orders where id = :id', id=10)['customer'].tolist())"
    )
    assert found.error is None
    assert found.stdout.strip() == "['customer 3']"


def test_sql_cell_shows_the_frame_and_stores_it(shell: TemplateShell, server: Server):
    server.attach(shell)
    cell = shell.run("%%sql w -> top\nselect id, amount from orders where id <= 3 order by id")
    assert cell.error is None
    assert "Out[" in cell.stdout and "4.5" in cell.stdout
    assert shell.run("print(top['id'].tolist())").stdout.strip() == "[1, 2, 3]"
    shell.run("%%sql w small\nselect id from orders where id = 7")
    assert shell.run("print(small['id'].tolist())").stdout.strip() == "[7]"


def test_the_engine_is_made_once_and_shows_no_password(shell: TemplateShell, server: Server):
    server.attach(shell)
    shown = shell.run(
        "import json\n"
        "engine = connection('w')\n"
        "with engine.connect() as c: pass\n"
        "print(json.dumps({'same': engine is connection('w'), 'shown': repr(engine) + str(engine.url)"
        " + repr(engine.url) + repr(engine.url._asdict())}))"
    ).value()
    assert shown["same"] is True
    assert server.db.password not in shown["shown"]
    assert server.db.user in shown["shown"]


def test_an_unknown_name_says_what_is_attached(shell: TemplateShell, server: Server):
    server.attach(shell, name="warehouse")
    failed = shell.run("sql('nope', 'select 1')")
    assert failed.error == {
        "type": "UnknownConnection",
        "message": "no connection named 'nope' is attached to this session (attached: warehouse)",
    }
    assert shell.run("connection('nope')").error["type"] == "UnknownConnection"
