"""What a kernel can do to its own sandbox ends in an answer, never an unhandled error in sandboxd:
a malformed message parented to the cell, a file name that is not UTF-8, a folder tree deeper
than Python's recursion limit, a folder swapped for a link while a file is uploaded to it. After
each, the same client's next call works."""

from __future__ import annotations

import pytest

# The cell publishes, as its own output (its parent header), a message of the wrong shape.
SEND_AS_THE_CELL = """
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, {kind!r}, {content!r}, parent=kernel.get_parent())
"""


@pytest.mark.parametrize(
    ("kind", "content", "said"),
    [
        ("display_data", {"data": "not an object", "metadata": {}}, "data must be an object"),
        ("execute_result", {"data": [1, 2], "metadata": {}, "execution_count": 1}, "data must be an object"),
        ("stream", {"name": "stdout"}, "a stream message needs"),
        ("stream", {"name": "../../etc", "text": "x"}, "a stream message needs"),
        ("error", {"ename": "E", "evalue": "v", "traceback": "not a list"}, "traceback must be a list"),
        ("error", {"ename": None, "evalue": "v", "traceback": []}, "needs an ename and an evalue"),
    ],
)
def test_a_malformed_message_from_the_cell_is_an_error_result(sandbox, kind, content, said):
    execution = sandbox.run_code(SEND_AS_THE_CELL.format(kind=kind, content=content) + "print('went on')")
    assert execution.error is not None and execution.error.name == "MalformedMessage"
    assert said in execution.error.value
    assert execution.stdout == "went on\n"
    assert sandbox.run_code("6 * 7").text == "42"
