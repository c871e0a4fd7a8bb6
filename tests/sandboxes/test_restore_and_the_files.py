"""A restore (a resume and a fork among them) leaves the workdir's files as they were saved.

It puts the files back while the kernel loads the namespace, so a namespace that refers to a
module among those files (the user's own, or a package they installed with %pip) must wait for
them rather than fail: thousands of small files written before the module make the wait certain,
as files go back folder by folder in name order and ``data/`` comes before ``zz_shapes/``. And a
variable that holds a file object, as ``with open(...) as f`` leaves one, must not write to its
file: dill reopened it in its mode, so "w" emptied the file at every restore."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from sandboxes import Sandbox
from tests.sandboxd_process import SandboxdProcess

A_MODULE_AFTER_MANY_FILES = """
import os, pathlib
os.makedirs('data', exist_ok=True)
for i in range(5_000):
    pathlib.Path(f'data/{i:05}.txt').write_text(str(i))
os.makedirs('zz_shapes', exist_ok=True)
pathlib.Path('zz_shapes/__init__.py').write_text(
    'class Square:\\n    def __init__(self, side):\\n        self.side = side\\n'
)
import zz_shapes
square = zz_shapes.Square(7)
"""

FILE_OBJECTS = """
with open('report.txt', 'w') as written:
    written.write('the whole report\\n')
with open('fresh.txt', 'x') as made:
    made.write('made once\\n')
log = open('log.txt', 'a')
log.write('first line\\n')
log.flush()
reading = open('report.txt')
reading.read(4)
"""


@pytest.fixture
def restore(sandboxd: SandboxdProcess) -> Iterator[object]:
    """``restore(sandbox)``: a new sandbox from a snapshot of ``sandbox``, killed after the test."""
    made: list[Sandbox] = []

    def from_snapshot(source: Sandbox) -> Sandbox:
        snapshot = source.snapshot()
        try:
            made.append(Sandbox.restore(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token))
        finally:
            Sandbox.delete_snapshot(snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token)
        return made[-1]

    yield from_snapshot
    for sandbox in made:
        sandbox.kill()
        sandbox.close()


def test_a_namespace_that_needs_a_restored_module_waits_for_it(make_sandbox, restore):
    source = make_sandbox()
    assert source.run_code(A_MODULE_AFTER_MANY_FILES, timeout=120).error is None
    restored = restore(source)
    assert {"square", "zz_shapes"} <= set(restored.restore_report.contexts[0].restored)
    again = restored.run_code("type(square).__module__, square.side, len(os.listdir('data'))")
    assert again.text == "('zz_shapes', 7, 5000)", again.error or again.text


def test_file_objects_come_back_without_writing_to_their_files(make_sandbox, restore):
    source = make_sandbox()
    assert source.run_code(FILE_OBJECTS).error is None
    restored = restore(restore(source))  # twice: what the first wrote, the second would see
    assert restored.restore_report.contexts[0].restored == ["log", "made", "reading", "written"]
    check = restored.run_code(
        "log.write('second line\\n'); log.close()\n"
        "(open('report.txt').read(), open('fresh.txt').read(), open('log.txt').read(),"
        " reading.read(), written.closed, made.closed)"
    )
    assert check.error is None, check.error
    assert ast.literal_eval(check.text) == (
        "the whole report\n",
        "made once\n",
        "first line\nsecond line\n",
        "whole report\n",
        True,
        True,
    )
