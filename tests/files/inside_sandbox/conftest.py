"""The describer run as production runs it: its cell (describer_source, as the worker sends it) run
in a fresh code context of a real sandbox (real sandboxd, real kernel of the code-interpreter
template), the report parsed from the one line it prints."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyst.files.describer_cell import describer_source
from sandboxes import CodeContext, Sandbox
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process

SOURCE = describer_source()
FILES = Path(__file__).resolve().parent / "files"

# Room for a 200 MB CSV and the frame loaded from it; a report of up to 200 KB on stdout.
SETTINGS = {
    **TEST_SETTINGS,
    "SANDBOXD_DISK_LIMIT": "768M",
    "SANDBOXD_MEMORY_LIMIT": "2G",
    "SANDBOXD_STDOUT_LIMIT": "1M",
    "SANDBOXD_MAX_UPLOAD": "64M",
    "SANDBOXD_CELL_TIMEOUT": "120",
}


@dataclass
class Described:
    """A report, and the kernel it was made in (where its ``load`` calls are run)."""

    report: dict
    context: CodeContext

    @property
    def table(self) -> dict:
        assert len(self.report["tables"]) >= 1, self.report
        return self.report["tables"][0]

    def run(self, code: str) -> str:
        """Run ``code`` in the describer's kernel; its stdout."""
        execution = self.context.run_code(code, timeout=120)
        assert execution.error is None, execution.error.traceback
        return execution.stdout

    def loaded(self, table: dict) -> tuple[int, int]:
        """The shape of the frame ``table["load"]`` gives, run in the same kernel."""
        assert table["error"] is None and table["load"], table
        return tuple(json.loads(self.run(f"_frame = {table['load']}\nprint(json.dumps(list(_frame.shape)))")))

    def dtypes(self) -> dict[str, str]:
        """The last loaded ``_frame``'s dtypes, by column name."""
        return self.value("{str(name): str(dtype) for name, dtype in _frame.dtypes.items()}")  # type: ignore[return-value]

    def value(self, expression: str) -> object:
        """``expression`` (over the last loaded ``_frame``) evaluated in the kernel, as JSON."""
        return json.loads(self.run(f"print(json.dumps({expression}, default=str))"))


@pytest.fixture(scope="session")
def describer_sandboxd() -> Iterator[SandboxdProcess]:
    with own_sandboxd_process(SETTINGS, prefix="sandboxd-describe-") as process:
        yield process


@pytest.fixture(scope="module")
def box(describer_sandboxd: SandboxdProcess) -> Iterator[Sandbox]:
    """One sandbox per test module: each test names its files apart."""
    sandbox = Sandbox.create(url=describer_sandboxd.url, token=describer_sandboxd.token, ttl_seconds=1800)
    yield sandbox
    sandbox.kill()
    sandbox.close()


@pytest.fixture(scope="module")
def describer_context(box: Sandbox) -> Iterator[CodeContext]:
    """A code context of its own, as the worker makes for each description (one per module
    here, for speed: each run defines everything it uses afresh)."""
    context = box.create_code_context()
    yield context
    context.close()


@pytest.fixture
def describe(box: Sandbox, describer_context: CodeContext) -> Callable[..., Described]:
    """describe(name, content=None, options=None, limits=None): write ``content`` (bytes) to
    data/<name> (unless None: the file is there already), run the describer on it exactly as
    the worker does, and return the report with its kernel."""

    def run(
        name: str, content: bytes | None = None, options: dict | None = None, limits: dict | None = None
    ) -> Described:
        path = f"data/{name}"
        if content is not None:
            box.files.write(path, content)
        return run_describer(
            describer_context, {"path": path, "options": options or {}, "limits": limits or {}}
        )

    return run


def run_describer(context: CodeContext, request: dict) -> Described:
    """The worker's cell: the describer's, then main(json.loads(<request>))."""
    execution = context.run_code(f"{SOURCE}\nmain(json.loads({json.dumps(request)!r}))", timeout=120)
    assert execution.error is None, execution.error.traceback
    lines = execution.stdout.splitlines()
    assert len(lines) == 1, execution.stdout
    return Described(json.loads(lines[0]), context)


@pytest.fixture
def make_in_sandbox(box: Sandbox) -> Callable[[str], str]:
    """Run ``code`` in the sandbox's default kernel (its libraries write real files: openpyxl,
    pyarrow, pandas); its stdout."""

    def make(code: str) -> str:
        execution = box.run_code(f"import os\nos.makedirs('data', exist_ok=True)\n{code}", timeout=120)
        assert execution.error is None, execution.error.traceback
        return execution.stdout

    return make


def fetched(name: str) -> bytes:
    """A file from tests/files/inside_sandbox/files (see SOURCES.md there)."""
    return (FILES / name).read_bytes()
