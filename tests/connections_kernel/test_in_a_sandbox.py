"""The kernel's side of connections in a real sandbox's kernel: nothing of it loads as the kernel
starts; DuckDB over uploads; what connection() made is left out of a snapshot, by name.

(A file connection, its egress.json written by the cell itself: no network is needed.)"""

from sandboxes import Sandbox

DRIVERS = ("sqlalchemy", "psycopg", "pymysql", "boto3", "botocore", "s3fs", "httpx", "duckdb")
SHOP = """
import json, os, sqlite3
os.makedirs('connections', exist_ok=True)
with sqlite3.connect('connections/shop.sqlite') as db:
    db.execute('create table items (id integer, name text)')
    db.executemany('insert into items values (?, ?)', [(1, 'pen'), (2, 'ink')])
with open('.egress.json', 'w') as file:
    json.dump({'proxy': None, 'ports': {}, 'config': {
        'connections': {'shop': {'kind': 'sqlite', 'url': '', 'secret': '', 'read_only': True}},
        'files': {'shop': 'connections/shop.sqlite'}}}, file)
os.environ['ANALYST_EGRESS_FILE'] = os.path.abspath('.egress.json')
del db, file
"""


def test_nothing_loads_at_start(sandbox: Sandbox):
    found = sandbox.run_code(
        f"import sys, json\nprint(json.dumps([m for m in sys.modules if m.split('.')[0] in {DRIVERS!r}]))\n"
        "print(callable(connection), callable(sql), '_analyst_connections' in sys.modules)"
    )
    assert found.error is None, found.error
    assert found.stdout == "[]\nTrue True True\n"


def test_sql_over_uploads(sandbox: Sandbox):
    sandbox.files.write("data/sales.csv", b"region,units\nnorth,3\nsouth,5\nnorth,4\n")
    cell = sandbox.run_code(
        "%%sql -> totals\nselect region, sum(units) as units from sales group by 1 order by 1"
    )
    assert cell.error is None, cell.error
    assert sandbox.run_code("totals.values.tolist()").text == "[['north', 7], ['south', 5]]"


def test_a_connection_is_not_kept_in_a_snapshot(sandbox: Sandbox):
    made = sandbox.run_code(SHOP + "engine = connection('shop')\nitems = sql('shop', 'select * from items')")
    assert made.error is None, made.error
    snapshot = sandbox.snapshot()
    assert list(snapshot.unsaved) == ["engine"]
    assert "not kept" in snapshot.unsaved["engine"]  # left out as a connection, never tried
    assert "items" in snapshot.contexts[0].saved
    refused = sandbox.run_code("sql('shop', \"insert into items values (3, 'nib')\")")
    assert refused.error is not None and "readonly" in refused.error.value


def test_a_cells_query_results_are_readable_after_it_hidden_and_dropped_by_the_next(sandbox: Sandbox):
    made = sandbox.run_code(
        SHOP + "print(sql('shop', 'select name from items where id = 1'))\n"
        "print(sql('shop', 'select name from items where id = 2'))"
    )
    assert made.error is None, made.error
    context = sandbox.default_context
    newest, older = (context.preview(f"_analyst_sql_{n}", rows=5).data for n in (1, 2))
    assert ([row["name"] for row in newest], [row["name"] for row in older]) == (["ink"], ["pen"])
    assert not [v.name for v in context.variables() if v.name.startswith("_analyst")]  # hidden
    snapshot = sandbox.snapshot()
    assert not [name for name in snapshot.contexts[0].saved if name.startswith("_analyst")]
    assert sandbox.run_code("x = 1").error is None
    assert sandbox.run_code("'_analyst_sql_1' in dir()").text == "False"  # the next cell dropped them
