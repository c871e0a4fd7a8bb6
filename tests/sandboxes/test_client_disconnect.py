"""A caller that drops the stream mid-cell gets the cell interrupted; the context stays usable."""

import json

import httpx


def test_dropped_stream_interrupts_the_cell(sandbox, sandboxd):
    sandbox.run_code("kept = 1")
    path = f"/sandboxes/{sandbox.sandbox_id}/contexts/default/execute"
    code = "import time\nprint('started', flush=True)\nfor _ in range(600): time.sleep(0.1)\nkept = 2"
    headers = {"Authorization": f"Bearer {sandboxd.token}"}
    with httpx.Client(base_url=sandboxd.url, headers=headers, timeout=30) as http:
        with http.stream("POST", path, json={"code": code}) as response:
            first = json.loads(next(response.iter_lines()))
            assert first == {"type": "stdout", "text": "started\n"}
    # The next cell waits for the interrupted one to end, then sees its state as it was.
    assert sandbox.run_code("kept").text == "1"
