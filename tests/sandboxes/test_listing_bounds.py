"""A folder listing is bounded and paginated, and read off sandboxd's event loop: listing a folder
of 200,000 files answers one page with a cursor to the next while another sandbox runs cells."""

from __future__ import annotations

import threading
import time

import pytest

from sandboxes import InvalidRequest

FILES = 200_000
MAKE_FILES = f"""
import os
os.makedirs("many", exist_ok=True)
for i in range({FILES}):
    open(f"many/f{{i:06d}}", "w").close()
os.makedirs("many/a-folder")
"""


def test_a_huge_folder_lists_a_page_at_a_time_while_others_run(make_sandbox):
    crowded, neighbour = make_sandbox(), make_sandbox()
    assert crowded.run_code(MAKE_FILES, timeout=120).error is None
    calls, worst, stop = 0, 0.0, threading.Event()

    def keep_running() -> None:
        nonlocal calls, worst
        while not stop.is_set():
            started = time.monotonic()
            assert neighbour.run_code("1 + 1").text == "2"
            worst = max(worst, time.monotonic() - started)
            calls += 1

    runner = threading.Thread(target=keep_running)
    runner.start()
    try:
        first = crowded.files.list("many")
        second = crowded.files.list("many", cursor=first.next_cursor)
        last = crowded.files.list("many", limit=10, cursor=str(FILES - 9))
    finally:
        stop.set()
        runner.join()
    print(f"the neighbour ran {calls} cells while the folder was listed; its worst round trip {worst:.3f} s")
    assert calls >= 1
    assert len(first) == 1000 and first.truncated and first.next_cursor == "1000"
    assert first[0].name == "a-folder" and first[0].type == "dir"  # folders first, then by name
    assert [entry.name for entry in first[1:3]] == ["f000000", "f000001"]
    assert first[1].path == "many/f000000" and first[1].type == "file"
    assert len(second) == 1000 and second[0].name == "f000999"
    assert [entry.name for entry in last] == [f"f{i:06d}" for i in range(FILES - 10, FILES)]
    assert not last.truncated and last.next_cursor is None
    assert crowded.run_code("6 * 7").text == "42"


def test_a_small_folder_is_one_page(sandbox):
    sandbox.files.write("data/a.csv", b"x")
    listing = sandbox.files.list("data")
    assert [entry.name for entry in listing] == ["a.csv"]
    assert not listing.truncated and listing.next_cursor is None
    assert isinstance(listing, list)  # files.list(path) is the list it always was


@pytest.mark.parametrize(
    "arguments", [{"limit": 0}, {"limit": 10_001}, {"cursor": "-1"}, {"cursor": "x"}, {"cursor": "9" * 40}]
)
def test_a_bad_page_is_refused_and_the_service_serves_on(sandbox, arguments):
    with pytest.raises(InvalidRequest):
        sandbox.files.list(".", **arguments)
    assert sandbox.files.list(".") == []
    assert sandbox.run_code("6 * 7").text == "42"
