"""The state cell's report is kernel output, checked before anyone sees it: a kernel that patches
json.dumps cannot pass markup, thousands of names or odd fields into the snapshot's ``unsaved``
(it lands in the app's restore notice), and what the state cell prints is kept bounded."""

from __future__ import annotations

import pytest

from sandboxes import Sandbox, SnapshotFailed

# The user's code replaces json.dumps, which the state cell uses to print its report.
FORGE = """
import json
_dumps = json.dumps
def forged(value, *args, **kwargs):
    if isinstance(value, dict) and ("saved" in value or "restored" in value):
        value = {forgery}
    return _dumps(value, *args, **kwargs)
json.dumps = forged
"""
UNFORGE = "json.dumps = _dumps"


FORGERIES = [
    '{**value, "unsaved": {"<img src=x onerror=alert(1)>": "x"}}',
    '{**value, "unsaved": {f"v{i}": "gone" for i in range(5000)}}',
    '{**value, "unsaved": {"x" * 500: "gone"}}',
    '{**value, "unsaved": {"df": "\\x1b]8;;https://evil.example\\x07click\\x1b]8;;\\x07"}}',
    '{**value, "unsaved": ["df"]}',
    '{**value, "saved": "everything"}',
    '{**value, "size": -1}',
    '{**value, "admin": True}',
    '{"error": "failed", "message": "x" * 5000}',
    '{"error": "<b>", "message": "m"}',
]


def test_a_forged_save_report_fails_the_snapshot(sandbox: Sandbox) -> None:
    sandbox.run_code("df = 1")
    for forgery in FORGERIES:
        assert sandbox.run_code(FORGE.format(forgery=forgery)).error is None
        with pytest.raises(SnapshotFailed) as raised:
            sandbox.snapshot()
        said = str(raised.value)
        assert "malformed" in said, forgery
        assert "<" not in said and "evil.example" not in said and len(said) < 600, forgery
        sandbox.run_code(UNFORGE)
        assert "df" in sandbox.snapshot().contexts[0].saved  # the same kernel saves as before
    assert sandbox.run_code("6 * 7").text == "42"


def test_a_report_in_shape_is_what_the_kernel_said_and_no_more(sandbox: Sandbox, sandboxd) -> None:
    forgery = '{**value, "unsaved": {"not_really_lost": "the kernel says so"}}'
    sandbox.run_code(FORGE.format(forgery=forgery))
    snapshot = sandbox.snapshot()
    assert snapshot.contexts[0].unsaved == {"not_really_lost": "the kernel says so"}
    restored = Sandbox.restore(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
    try:
        assert restored.restore_report is not None
        assert restored.restore_report.unsaved == ["not_really_lost"]
        assert restored.run_code("6 * 7").text == "42"
    finally:
        restored.kill()
        restored.close()


def test_names_a_report_may_not_carry_are_left_out_of_the_state(sandbox: Sandbox) -> None:
    sandbox.run_code("kept = 1\nglobals()['not an identifier'] = 2\nglobals()['n' * 300] = 3")
    context = sandbox.snapshot().contexts[0]
    assert context.saved == ["kept"] and context.unsaved == {}
    assert sandbox.run_code("6 * 7").text == "42"


# A variable whose pickling prints 3 MiB before the state cell prints its report.
CHATTY = """
class Chatty:
    def __reduce__(self):
        for _ in range(3):
            print("x" * (1 << 20), flush=True)
        return (int, (7,))
chatty = Chatty()
"""


def test_the_state_cells_output_is_bounded_and_its_report_still_read(sandbox: Sandbox) -> None:
    sandbox.run_code(CHATTY)
    assert sandbox.snapshot().contexts[0].saved == ["Chatty", "chatty"]
    assert sandbox.run_code("6 * 7").text == "42"
