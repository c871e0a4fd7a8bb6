"""What a kernel can do to its own sandbox ends in an answer, never an unhandled error in sandboxd:
a malformed message parented to the cell, a file name that is not UTF-8, a folder tree deeper
than Python's recursion limit, a folder swapped for a link while a file is uploaded to it. After
each, the same client's next call works."""

from __future__ import annotations

import threading
from pathlib import Path

from sandboxes import FileNotFound, InvalidPath

# The cell publishes, as its own output (its parent header), a message of the wrong shape.
SEND_AS_THE_CELL = """
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, {kind!r}, {content!r}, parent=kernel.get_parent())
"""


MALFORMED = [
    ("display_data", {"data": "not an object", "metadata": {}}, "data must be an object"),
    ("execute_result", {"data": [1, 2], "metadata": {}, "execution_count": 1}, "data must be an object"),
    ("stream", {"name": "stdout"}, "a stream message needs"),
    ("stream", {"name": "../../etc", "text": "x"}, "a stream message needs"),
    ("error", {"ename": "E", "evalue": "v", "traceback": "not a list"}, "traceback must be a list"),
    ("error", {"ename": None, "evalue": "v", "traceback": []}, "needs an ename and an evalue"),
]


def test_a_malformed_message_from_the_cell_is_an_error_result(sandbox):
    for kind, content, said in MALFORMED:
        execution = sandbox.run_code(SEND_AS_THE_CELL.format(kind=kind, content=content) + "print('went on')")
        assert execution.error is not None and execution.error.name == "MalformedMessage", kind
        assert said in execution.error.value
        assert execution.stdout == "went on\n"
        assert sandbox.run_code("6 * 7").text == "42"


def test_a_name_that_is_not_utf8_is_listed_escaped(sandbox):
    sandbox.run_code(
        "import os; os.makedirs('odd'); open(b'odd/\\xff\\xfe.txt', 'w').close(); open('odd/ok', 'w')"
    )
    listing = sandbox.files.list("odd")
    assert sorted(entry.name for entry in listing) == ["\\xff\\xfe.txt", "ok"]
    assert "odd/\\xff\\xfe.txt" in [entry.path for entry in listing]
    snapshot = sandbox.snapshot()  # its walk and its archive take the name as it is
    assert snapshot.file_count == 2
    assert sandbox.files.read("odd/ok") == ""
    assert sandbox.run_code("6 * 7").text == "42"


# Made a level at a time: os.makedirs itself recurses, and fails at this depth.
DEEP_TREE = """
import os
os.mkdir("deep")
os.chdir("deep")
for _ in range(1200):
    os.mkdir("d")
    os.chdir("d")
open("leaf.txt", "w").write("bottom")
os.chdir("/home/user")
"""
READ_LEAF = "open('/'.join(['deep'] + ['d'] * 1200 + ['leaf.txt'])).read()"


def test_a_tree_deeper_than_the_recursion_limit_is_saved_and_removed(sandbox):
    assert sandbox.run_code(DEEP_TREE).error is None
    assert sandbox.snapshot().file_count == 1
    forked = sandbox.fork()
    try:
        assert forked.run_code(READ_LEAF).text == "'bottom'"
    finally:
        forked.kill()
        forked.close()
    sandbox.files.remove("deep")
    assert "deep" not in [entry.name for entry in sandbox.files.list(".")]
    assert sandbox.snapshot().file_count == 0  # and saves go on working
    assert sandbox.run_code("6 * 7").text == "42"


SWAP = """
import os, shutil, time
end, swaps = time.time() + {seconds}, 0
while time.time() < end:
    for step in (lambda: shutil.rmtree("data/x"), lambda: os.unlink("data/x"),
                 lambda: os.symlink("/", "data/x"), lambda: time.sleep(0.001),
                 lambda: os.unlink("data/x"), lambda: os.makedirs("data/x")):
        try:
            step()
        except OSError:
            pass
    swaps += 1
print(swaps)
"""


def test_a_folder_swapped_for_a_link_during_uploads_is_never_followed(sandbox, sandboxd):
    sandbox.run_code("import os; os.makedirs('data/x')")
    swapped = []
    swapper = threading.Thread(target=lambda: swapped.append(sandbox.run_code(SWAP.format(seconds=3))))
    swapper.start()
    outcomes = set()
    try:
        while swapper.is_alive():
            try:
                sandbox.files.write("data/x/f.csv", b"a,b\n" * 1000)
                outcomes.add("written")
            except (InvalidPath, FileNotFound) as exc:
                outcomes.add(type(exc).__name__)
    finally:
        swapper.join()
    print("upload outcomes:", sorted(outcomes), "swaps:", swapped[0].stdout.strip())
    assert swapped[0].error is None and int(swapped[0].stdout) > 100
    assert "InvalidPath" in outcomes  # some uploads met the link, and said so
    assert not list(sandboxd.view(Path("/")).glob("f*.csv")), "an upload followed the link to /"
    assert sandbox.files.write("data/y.csv", b"1").size == 1
    assert sandbox.run_code("6 * 7").text == "42"
