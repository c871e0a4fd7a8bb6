"""The inspector's report is kernel output, checked before anyone sees it: a kernel that patches
json.dumps cannot pass markup in odd places, oversized lists, strings or numbers, or fields of
its own to the variables panel, nor a table preview of another shape."""

from __future__ import annotations

import pytest

from sandboxes import InspectionFailed, Sandbox

FORGE = """
import json
_dumps = json.dumps
def forged(value, *args, **kwargs):
    if isinstance(value, dict) and ({keys} & set(value)):
        value = {forgery}
    return _dumps(value, *args, **kwargs)
json.dumps = forged
"""
UNFORGE = "json.dumps = _dumps"
ONE = '{"name": "x", "type": "int", "shape": None, "length": None, "size": 28, "table": False}'

LISTINGS = [
    '{**value, "variables": [{**v, "name": "<img src=x onerror=alert(1)>"} for v in value["variables"]]}',
    '{**value, "variables": [' + ONE + '] * 5000, "total": 5000}',
    '{**value, "variables": [{**v, "type": "T" * 5000} for v in value["variables"]]}',
    '{**value, "variables": [{**v, "type": "\\x1b]8;;evil.example\\x07"} for v in value["variables"]]}',
    '{**value, "variables": [{**v, "size": 10 ** 40} for v in value["variables"]]}',
    '{**value, "variables": [{**v, "size": -1} for v in value["variables"]]}',
    '{**value, "variables": [{**v, "shape": list(range(1000))} for v in value["variables"]]}',
    '{**value, "variables": [{**v, "html": "<b>"} for v in value["variables"]]}',
    '{**value, "variables": "everything"}',
    '{**value, "total": 0}',
    '{**value, "admin": True}',
]
PREVIEWS = [
    '{**value, "table": {**value["table"], "data": [{"a": "y" * 5000}]}}',
    '{**value, "table": {**value["table"], "data": [{"a": 1}] * 5000}}',
    '{**value, "table": {**value["table"], "data": [{"a": {"nested": [1]}}]}}',
    '{**value, "table": {**value["table"], "data": [{"<script>": 1}]}}',
    '{**value, "table": {"schema": {"fields": [{"name": str(i)} for i in range(500)]}, "data": []}}',
    '{**value, "table": {**value["table"], "html": "<script>alert(1)</script>"}}',
    '{"error": "failed", "message": "\\x1b[31m" * 100}',
]


def test_a_forged_listing_is_refused(sandbox: Sandbox) -> None:
    sandbox.run_code("x = 1")
    for forgery in LISTINGS:
        assert sandbox.run_code(FORGE.format(keys='{"variables"}', forgery=forgery)).error is None
        with pytest.raises(InspectionFailed) as raised:
            sandbox.default_context.variables()
        said = str(raised.value)
        assert "malformed" in said, forgery
        assert "<" not in said and "evil.example" not in said and len(said) < 600, forgery
        sandbox.run_code(UNFORGE)
        assert [v.name for v in sandbox.default_context.variables()] == ["x"]  # the same kernel, as before


def test_a_forged_preview_is_refused(sandbox: Sandbox) -> None:
    sandbox.run_code("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})")
    for forgery in PREVIEWS:
        assert sandbox.run_code(FORGE.format(keys='{"table", "error"}', forgery=forgery)).error is None
        with pytest.raises(InspectionFailed) as raised:
            sandbox.default_context.preview("df")
        said = str(raised.value)
        assert "<" not in said and "\x1b" not in said and len(said) < 600, forgery
        sandbox.run_code(UNFORGE)
        assert sandbox.default_context.preview("df").data == [{"index": 0, "a": 1}, {"index": 1, "a": 2}]


def test_a_report_in_shape_is_passed_on_rebuilt(sandbox: Sandbox) -> None:
    """Within the limits the kernel may say what it likes of itself; no more than the fields we know."""
    sandbox.run_code("x = 1")
    forgery = '{**value, "variables": [{**v, "type": "Anything"} for v in value["variables"]]}'
    sandbox.run_code(FORGE.format(keys='{"variables"}', forgery=forgery))
    [x] = sandbox.default_context.variables()
    assert (x.name, x.type) == ("x", "Anything")


def test_a_cell_that_prints_no_report_fails_plainly(sandbox: Sandbox) -> None:
    sandbox.run_code("import builtins\n_print = builtins.print\nbuiltins.print = lambda *a, **k: None")
    with pytest.raises(InspectionFailed, match="no report"):
        sandbox.default_context.variables()
    sandbox.run_code("builtins.print = _print")
    assert sandbox.run_code("x = 2\nx").text == "2"
