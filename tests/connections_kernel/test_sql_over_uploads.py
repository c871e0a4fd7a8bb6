"""sql(query) and %%sql with no name: DuckDB over the uploaded files, each a view by its stem."""

import json

from tests.connections_kernel.template_shell import TemplateShell

SALES_CSV = "region,units\nnorth,3\nsouth,5\nnorth,4\n"
REGIONS_JSON = json.dumps([{"region": "north", "manager": "ada"}, {"region": "south", "manager": "grace"}])


def uploaded(shell: TemplateShell) -> None:
    data = shell.workdir / "data"
    data.mkdir()
    (data / "sales.csv").write_text(SALES_CSV)
    (data / "regions.json").write_text(REGIONS_JSON)


def test_sql_with_one_argument_queries_the_uploads(shell: TemplateShell):
    uploaded(shell)
    shell.set_egress({}, {})
    joined = shell.run(
        "df = sql('select s.region, sum(units) as units, any_value(manager) as manager from sales s"
        " join regions using (region) group by s.region order by s.region')\n"
        "print(df.astype(str).values.tolist())"
    )
    assert joined.error is None
    assert joined.stdout.strip() == "[['north', '7', 'ada'], ['south', '5', 'grace']]"


def test_the_sql_cell_with_no_name_queries_the_uploads(shell: TemplateShell):
    uploaded(shell)
    cell = shell.run("%%sql -> big\nselect region, units from sales where units > 3 order by units")
    assert cell.error is None
    assert "Out[" in cell.stdout
    assert shell.run("print(big.values.tolist())").stdout.strip() == "[['north', 4], ['south', 5]]"


def test_uploads_are_cut_at_the_row_limit_too(shell: TemplateShell):
    uploaded(shell)
    shell.set_egress({}, {}, sql_max_rows=2)
    cut = shell.run("print(len(sql('select * from sales')))")
    assert cut.stdout.strip() == "2"
    assert cut.stderr == "notice: the result was cut at 2 rows (the session's limit)\n"


def test_a_huge_result_is_cut_without_being_fetched_whole(shell: TemplateShell):
    shell.set_egress({}, {}, sql_max_rows=5, sql_timeout=5)
    cut = shell.run("print(sql('select * from range(10000000000)')['range'].tolist())")
    assert (cut.stdout.strip(), cut.error) == ("[0, 1, 2, 3, 4]", None)
