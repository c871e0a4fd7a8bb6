"""The architecture's hard lines: the SDK's public surface, and who may import what."""

import ast
import subprocess
import sys
from pathlib import Path

import sandboxes
from tests.import_graph import circles, module_graph, room_graph

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_API = [
    "AsyncCodeContext",
    "AsyncFiles",
    "AsyncSandbox",
    "AuthenticationError",
    "CapacityExceeded",
    "CodeContext",
    "ContextBusy",
    "ContextNotFound",
    "ContextState",
    "EntryInfo",
    "Execution",
    "ExecutionError",
    "FileNotFound",
    "FileTooLarge",
    "Files",
    "InspectionFailed",
    "InvalidPath",
    "InvalidRequest",
    "NotFound",
    "QuotaExceeded",
    "RequestTimeout",
    "RestoreReport",
    "Resumed",
    "RestoredContext",
    "Result",
    "Sandbox",
    "SandboxError",
    "SandboxExpired",
    "SandboxInfo",
    "SandboxNotFound",
    "ServiceUnavailable",
    "SnapshotCorrupt",
    "SnapshotFailed",
    "SnapshotInfo",
    "SnapshotNotFound",
    "SnapshotTooLarge",
    "TablePreview",
    "TableRows",
    "TemplateNotFound",
    "VariableInfo",
    "VariableList",
    "VariableNotFound",
    "WriteInfo",
]


def imported_modules(folder: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_public_api_is_pinned():
    assert sorted(sandboxes.__all__) == sorted(PUBLIC_API)
    for name in PUBLIC_API:
        assert hasattr(sandboxes, name)


def test_the_sdk_imports_neither_jupyter_client_nor_django():
    code = (
        "import sys, sandboxes; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jupyter_client', 'zmq', 'django')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_the_sandbox_service_never_imports_django_or_the_app():
    for folder in ("server", "kernels", "drivers", "client", "templates"):
        for path, names in imported_modules(ROOT / "sandboxes" / folder).items():
            bad = {n for n in names if n.split(".")[0] in ("django", "analyst", "config")}
            assert not bad, f"{path} imports {bad}"


def test_the_web_app_reaches_sandboxes_only_through_the_sdk():
    for path, names in imported_modules(ROOT / "analyst").items():
        bad = {
            n
            for n in names
            if n.split(".")[0] in ("jupyter_client", "zmq")
            or n.startswith(("sandboxes.server", "sandboxes.kernels", "sandboxes.drivers"))
        }
        assert not bad, f"{path} imports {bad}"


def declared_imports(package: Path) -> set[str]:
    """The rooms a package's docstring says it may import ("May import: a, b and c.")."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    (line,) = [part for part in doc.split("\n\n") if part.startswith("May import:")]
    said = line.removeprefix("May import:").split("(")[0].replace("\n", " ").strip(" .")
    if said == "nothing of ours":
        return set()
    return {name.strip() for name in said.replace(" and ", ",").split(",") if name.strip()}


def test_no_import_circles_among_modules_or_rooms():
    graph = module_graph()
    assert circles(graph) == [], "modules that import each other, through every import (lazy ones too)"
    for depth in (1, 2, 3):
        assert circles(room_graph(graph, depth)) == [], f"packages {depth} deep that import each other"


def test_each_room_of_analyst_imports_only_what_its_docstring_allows():
    rooms = room_graph(module_graph(("analyst",)))
    names = {room.removeprefix("analyst.") for room in rooms}
    for package in sorted(p.parent for p in (ROOT / "analyst").glob("*/__init__.py")):
        if package.name == "migrations":
            continue
        allowed = declared_imports(package)
        assert allowed <= names, f"{package.name} names rooms that do not exist: {allowed - names}"
        used = {room.removeprefix("analyst.") for room in rooms[f"analyst.{package.name}"]}
        assert used <= allowed, f"analyst/{package.name} imports {used - allowed}, which it may not"


def test_analysts_root_holds_at_most_twelve_modules():
    assert len(list((ROOT / "analyst").glob("*.py"))) <= 12
