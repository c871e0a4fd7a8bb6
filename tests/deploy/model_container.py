"""The deployment test's model container: tests/fakes/model_server.py serving Anthropic's API on
its container's every address (port 8080, where the worker's ANTHROPIC_BASE_URL points), and a
control port (8081, published on the host's loopback) through which the test queues replies and
reads the requests the worker made.

Control API: ``POST /replies`` with ``[{"reply": "anthropic_text", "args": [...], "kwargs": {...}}]``
queues replies built by the fake's functions of that name; ``GET /requests`` lists the requests
(``{"path", "json"}``); ``GET /pending`` counts the replies not yet taken.
"""

from __future__ import annotations

import json
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes import model_server
from tests.fakes.model_server import Reply, ScriptedModelServer

MODEL_PORT = 8080
CONTROL_PORT = 8081
REPLIES = {
    "anthropic_text": model_server.anthropic_text,
    "anthropic_tool_call": model_server.anthropic_tool_call,
}


def reply_from(spec: dict[str, Any]) -> Reply:
    """One scripted reply from its JSON description; only the fake's Anthropic replies are taken."""
    make = REPLIES.get(spec.get("reply", ""))
    if make is None:
        raise ValueError(f"unknown reply {spec.get('reply')!r}; one of {sorted(REPLIES)}")
    return make(*spec.get("args", []), **spec.get("kwargs", {}))


class ControlHandler(BaseHTTPRequestHandler):
    server: ControlServer

    def do_POST(self) -> None:
        if self.path != "/replies":
            self._answer(404, {"error": f"no POST {self.path}"})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            replies = [reply_from(spec) for spec in body]
        except (ValueError, TypeError) as exc:
            self._answer(400, {"error": str(exc)})
            return
        self.server.model.script(*replies)
        self._answer(200, {"pending": self.server.model.pending})

    def do_GET(self) -> None:
        model = self.server.model
        if self.path == "/pending":
            self._answer(200, {"pending": model.pending})
        elif self.path == "/requests":
            self._answer(200, [{"path": r.path, "json": r.json} for r in list(model.requests)])
        else:
            self._answer(404, {"error": f"no GET {self.path}"})

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


class ControlServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, model: ScriptedModelServer) -> None:
        super().__init__(("0.0.0.0", CONTROL_PORT), ControlHandler)
        self.model = model


def main() -> None:
    model = ScriptedModelServer(host="0.0.0.0", port=MODEL_PORT, expect_all_used=False)
    model.start()
    control = ControlServer(model)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    threading.Thread(target=control.serve_forever, daemon=True).start()
    print(f"scripted model on :{MODEL_PORT}, control on :{CONTROL_PORT}", flush=True)
    stopped.wait()
    control.shutdown()
    model.stop()


if __name__ == "__main__":
    main()
