"""Every benchmark script still imports what it uses: they run only under `make bench`, so a
name renamed or moved in the code (snapshot.py lost two that way) went unseen until then."""

import importlib
from pathlib import Path

import pytest

BENCHMARKS = sorted(path.stem for path in (Path(__file__).parent.parent / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("name", BENCHMARKS)
def test_the_benchmark_imports(name, monkeypatch):
    monkeypatch.setattr("sys.argv", [f"benchmarks/{name}.py"])
    importlib.import_module(f"benchmarks.{name}")
