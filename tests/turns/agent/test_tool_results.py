"""What the model reads of a cell: truncated output with a marker, tracebacks whole, charts or a
note, a table as its text (its data for the grid stays with the page)."""

from analyst.turns.agent.providers import ImagePart, TextPart
from analyst.turns.agent.tools import execution_text, tool_result
from sandboxes import Execution, ExecutionError, Result

PNG = "iVBORw0KGgo="


def test_long_output_is_truncated_with_a_marker():
    execution = Execution(stdout_parts=["x" * 10_000])
    text = execution_text(execution, limit=100)
    assert text.startswith("x" * 100)
    assert "[... 9900 more characters not shown to you; the user sees the whole output]" in text
    assert len(text) < 200


def test_the_traceback_is_kept_whole_after_truncated_output():
    traceback = "Traceback (most recent call last):\n" + "  frame\n" * 50 + "ValueError: bad"
    execution = Execution(stdout_parts=["y" * 1000], error=ExecutionError("ValueError", "bad", traceback))
    text = execution_text(execution, limit=10)
    assert text.endswith(traceback)


def test_charts_go_back_as_images_or_as_a_note():
    execution = Execution(results=[Result.from_bundle({"image/png": PNG, "text/plain": "<Figure>"})])
    with_images = tool_result("t1", execution, limit=1000, images=True)
    assert ImagePart("image/png", PNG) in with_images.content
    without = tool_result("t1", execution, limit=1000, images=False)
    assert not any(isinstance(part, ImagePart) for part in without.content)
    assert any(isinstance(p, TextPart) and "cannot see images" in p.text for p in without.content)


def test_a_tables_data_is_for_the_page_not_the_model():
    text = "   n\n0  0\n1  1"
    table = {"schema": {"fields": [{"name": "n", "type": "integer"}]}, "data": [{"n": 0}], "total_rows": 2}
    bundle = {"text/plain": text, "text/html": "<table></table>", "application/vnd.dataresource+json": table}
    execution = Execution(results=[Result.from_bundle(bundle, is_main_result=True)])
    assert tool_result("t1", execution, limit=1000, images=True).content == [TextPart(text.strip())]


def test_an_empty_cell_says_so():
    assert execution_text(Execution(), limit=100) == "(the cell ran and printed nothing)"
