"""The import graph of our own packages, read from the source: who imports whom, and its circles.

Every import counts, at the top of a module or inside a function: a lazy import that hides a circle
is still a circle. `python -m tests.import_graph` prints the circles and each room's arrows.
"""

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP_PACKAGES = ("analyst", "sandboxes")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules(top: str) -> dict[str, Path]:
    return {
        module_name(path): path
        for path in sorted((ROOT / top).rglob("*.py"))
        if "migrations" not in path.parts
    }


def _targets(node: ast.AST, current: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ours an import statement loads (`from a import b` loads a.b when b is one)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        base = current.split(".") if is_package else current.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        parent = ".".join(base + ([node.module] if node.module else []))
    else:
        parent = node.module or ""
    found = {parent}
    for alias in node.names:
        candidate = f"{parent}.{alias.name}"
        if candidate in known:
            found.add(candidate)
    return found


def module_graph(tops: tuple[str, ...] = TOP_PACKAGES) -> dict[str, set[str]]:
    """Each module of ours and the modules of ours it imports (a package's __init__ is its name)."""
    modules: dict[str, Path] = {}
    for top in tops:
        modules.update(all_modules(top))
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for loaded in _targets(node, name, is_package, known):
                target = loaded
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    imported.add(target)
        graph[name] = imported
    return graph


def room_of(module: str, depth: int) -> str:
    """The room a module stands in: its package `depth` levels below the top (or itself, if shallower)."""
    return ".".join(module.split(".")[: depth + 1])


def room_graph(graph: dict[str, set[str]], depth: int = 1) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, imported in graph.items():
        here = room_of(module, depth)
        rooms[here]
        for target in imported:
            there = room_of(target, depth)
            if (
                there != here
                and not here.startswith(there + ".")
                and there.split(".")[0] == here.split(".")[0]
            ):
                rooms[here].add(there)
    return dict(rooms)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> None:
    graph = module_graph()
    for label, g in (("modules", graph), ("rooms", room_graph(graph))):
        print(f"{label}: {len(g)}, arrows {sum(len(v) for v in g.values())}")
        for part in circles(g):
            print("  circle:", " ↔ ".join(part))
    for room, targets in sorted(room_graph(graph).items()):
        print(f"{room} → {', '.join(sorted(targets)) or '-'}")


if __name__ == "__main__":
    main()
