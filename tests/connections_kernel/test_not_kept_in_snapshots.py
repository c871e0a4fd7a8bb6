"""sandboxd's snapshot code (kernel_state.save, run in the kernel) leaves out what connection()
made, naming it as not kept: a connection holds the secret, and a restored kernel makes its own."""

import json
from pathlib import Path

import sandboxes.server.snapshots.kernel_state as kernel_state
from tests.connections_kernel import configs
from tests.connections_kernel.template_shell import TemplateShell
from tests.servers.database import Database


def test_connections_are_named_and_left_out(shell: TemplateShell, postgres: Database, tmp_path: Path):
    shell.set_egress({"w": configs.postgres(postgres)}, {"w": postgres.port})
    made = shell.run("engine = connection('w')\nframe = sql('w', 'select id from orders')\nkept = 7")
    assert made.error is None
    saved_to = tmp_path / "state.pkl"
    source = Path(kernel_state.__file__).read_text()
    saving = shell.run(_save_cell(source, saved_to))
    assert saving.error is None
    line = saving.stdout.strip().splitlines()[-1]
    report = json.loads(line.removeprefix(kernel_state.REPORT_PREFIX))
    assert report["saved"] == ["frame", "kept"]
    assert list(report["unsaved"]) == ["engine"]
    assert "not kept" in report["unsaved"]["engine"]
    assert postgres.password.encode() not in saved_to.read_bytes()


def test_a_broken_hook_keeps_nothing_out(shell: TemplateShell, tmp_path: Path):
    """A cell may replace the hook: one that raises, or answers what cannot be made a string,
    leaves everything to be saved as usual."""
    shell.run(
        "import sys\n"
        "class Odd:\n    def __str__(self): raise RuntimeError('no')\n"
        "sys.modules['__sandbox_not_kept__'].reason = lambda value: Odd() if value == 1 else 1 / 0\n"
        "one, two = 1, 2"
    )
    saving = shell.run(_save_cell(Path(kernel_state.__file__).read_text(), tmp_path / "state.pkl"))
    report = json.loads(saving.stdout.strip().splitlines()[-1].removeprefix(kernel_state.REPORT_PREFIX))
    assert {"one", "two"} <= set(report["saved"])
    assert report["unsaved"] == {}


def _save_cell(source: str, path: Path) -> str:
    """kernel_state's save() as sandboxd's silent cell runs it, in a namespace of its own."""
    save = f"__state__['save']({str(path)!r}, 1 << 30)"
    return f"__state__ = {{}}\nexec({source!r}, __state__)\n{save}\ndel __state__"
