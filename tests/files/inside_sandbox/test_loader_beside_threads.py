"""The describer's loader replaces an earlier run's package in ``sys.modules`` while the kernel's
other threads may import (a user's thread, a library's): reading sys.modules must not fail with
"dictionary changed size during iteration", which stopped a file's reader in a fresh-clone run."""

from __future__ import annotations

import sys
import threading

from analyst.files.inside_sandbox.loader import _load_package


def test_the_loader_survives_another_thread_changing_sys_modules(monkeypatch):
    monkeypatch.setattr(sys, "modules", {**sys.modules, **{f"filler_{n}": sys for n in range(5000)}})
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    stop = threading.Event()

    def importer() -> None:  # each of its turns leaves sys.modules one module larger, or smaller
        names = [f"_loader_test_churn_{n}" for n in range(1000)]
        while not stop.is_set():
            for name in names:
                sys.modules[name] = sys
            for name in names:
                del sys.modules[name]

    churn = threading.Thread(target=importer)
    churn.start()
    try:
        for _ in range(30):
            _load_package("_loader_test_package", {"one": "VALUE = 1\n"})
    finally:
        stop.set()
        churn.join()
        sys.setswitchinterval(old_interval)
    assert sys.modules["_loader_test_package.one"].VALUE == 1
