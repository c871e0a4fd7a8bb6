"""The template's IPython, with its startup run, in a subprocess on the host: the kernel's view of
connections (connections.py) tried against real servers without a sandbox, its egress.json
written by the test with ports pointing straight at them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

DRIVER = Path(__file__).with_name("shell_driver.py")


@dataclass
class Outcome:
    stdout: str
    stderr: str
    error: dict[str, str] | None

    def value(self) -> Any:
        """The JSON the cell printed last."""
        assert self.error is None, self.error
        return json.loads(self.stdout.strip().splitlines()[-1])


class TemplateShell:
    def __init__(self, workdir: Path) -> None:
        template = Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter"
        self.workdir = workdir
        self.egress_file = workdir.parent / "egress.json"
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(workdir),
            "SANDBOX_TEMPLATE": str(template),
            "MPLCONFIGDIR": str(workdir.parent / "mplconfig"),
            "ANALYST_EGRESS_FILE": str(self.egress_file),
            "PYTHONDONTWRITEBYTECODE": "1",  # nothing written into the built template
        }
        self.process = subprocess.Popen(
            [str(template / "venv" / "bin" / "python"), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=sys.stderr,
            cwd=workdir,
            env=env,
            text=True,
        )

    def set_egress(self, connections: dict[str, Any], ports: dict[str, int], **config: Any) -> None:
        """Write egress.json as sandboxd would (atomically), with no proxy: straight to the servers."""
        body = {"proxy": None, "ports": ports, "config": {"connections": connections, **config}}
        staged = self.egress_file.with_suffix(".tmp")
        staged.write_text(json.dumps(body))
        staged.replace(self.egress_file)

    def run(self, code: str) -> Outcome:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"code": code}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the template's shell died ({self.process.poll()})"
        return Outcome(**json.loads(line))

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
