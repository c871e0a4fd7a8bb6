"""What every benchmark script does around its measurements: a time budget, a scratch folder
the sandbox user can reach, clean-up on Ctrl-C or SIGTERM, and the report printed and saved."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

from tests.sandboxd_process import SandboxdProcess

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def sandboxd(folder: Path, settings: dict[str, str], *, root: Path = ROOT) -> Iterator[SandboxdProcess]:
    """A running sandboxd of ``root``'s checkout with ``settings``, its data and log in ``folder``;
    stopped after (its workdirs' mounts live in its own mount namespace and go with it)."""
    folder.mkdir(parents=True)
    server = SandboxdProcess(
        data_dir=folder / "data", log_path=folder / "sandboxd.log", settings=settings, root=root
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()


def template_python(name: str = "code-interpreter") -> str:
    """The built template's own Python (make setup builds it under var/templates)."""
    return str(ROOT / "var" / "templates" / name / "venv" / "bin" / "python")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def step(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(f"stopped by signal {signum}")


def run(name: str, budget: int, report: Callable[[Path, str], str]) -> int:
    """Call ``report(folder, load_at_start)`` within ``budget`` seconds; print and save its text."""
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(budget)
    started, load_at_start = time.monotonic(), load_average()
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    folder.chmod(0o755)  # the unprivileged sandbox user must reach the workdirs below
    try:
        text = report(folder, load_at_start)
    except KeyboardInterrupt:
        print("interrupted; every process the benchmark started has been stopped", file=sys.stderr)
        return 130
    except BaseException:
        _keep_logs(folder, name)
        raise
    finally:
        signal.alarm(0)
        shutil.rmtree(folder, ignore_errors=True)
    print(text)
    results = ROOT / "benchmarks" / "results" / f"{name}.md"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(text)
    step(f"done in {time.monotonic() - started:.0f} s; written to {results.relative_to(ROOT)}")
    return 0


def _keep_logs(folder: Path, name: str) -> None:
    """The failed run's service logs, kept out of the scratch folder that is about to go."""
    logs = sorted(folder.rglob("*.log"))
    if logs:
        kept = Path(tempfile.mkdtemp(prefix=f"bench-{name}-failed-"))
        for log in logs:
            shutil.copy(log, kept / log.name)
        step(f"the services' logs are kept in {kept}")
