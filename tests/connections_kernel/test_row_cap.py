"""At most sql_max_rows rows reach pandas; a notice says when a result was cut."""

from tests.connections_kernel.conftest import Server
from tests.connections_kernel.template_shell import TemplateShell
from tests.servers.database import ORDER_ROWS

QUERY = "print(sql('w', 'select id from orders order by id')['id'].tolist())"


def test_a_longer_result_is_cut_with_a_notice(shell: TemplateShell, server: Server):
    server.attach(shell, sql_max_rows=10)
    cut = shell.run(QUERY)
    assert cut.error is None
    assert cut.stdout.strip() == str(list(range(1, 11)))
    assert cut.stderr == "notice: the result was cut at 10 rows (the session's limit)\n"
    again = shell.run("print(len(sql('w', 'select id from orders where id <= 4')))")
    assert (again.stdout.strip(), again.stderr, again.error) == ("4", "", None)


def test_a_result_of_exactly_the_limit_is_whole(shell: TemplateShell, server: Server):
    server.attach(shell, sql_max_rows=ORDER_ROWS)
    whole = shell.run(QUERY)
    assert whole.stdout.strip() == str(list(range(1, ORDER_ROWS + 1)))
    assert whole.stderr == ""


def test_a_huge_result_is_cut_without_being_fetched_whole(shell: TemplateShell, server: Server):
    """Rows come from a server-side cursor, only as many as are kept: fetched whole, these
    billions would run into the statement timeout instead."""
    server.attach(shell, sql_max_rows=5, sql_timeout=5)
    huge = "select a.id from orders a, orders b, orders c, orders d, orders e, orders f"
    cut = shell.run(f"print(len(sql('w', {huge!r})))")
    assert (cut.stdout.strip(), cut.error) == ("5", None)
    assert cut.stderr == "notice: the result was cut at 5 rows (the session's limit)\n"
