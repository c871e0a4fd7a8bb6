"""Templates: named, prebuilt kernel runtimes (a virtualenv and a startup file) kernels run in."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandboxes.templates import wheelhouse

SOURCE_DIR = Path(__file__).resolve().parent
READY_MARKER = "ready"
WHEELHOUSE_MARKER = "wheelhouse.ready"
# What a kernel reads from its template besides the virtualenv, copied in by build().
KERNEL_FILES = (
    "startup.py",
    "offline_pip.py",
    "data_tables.py",
    "chart_facts.py",
    "connections.py",
    "connection_sql.py",
    "connection_checks.py",
)
# How a virtualenv is laid out (bump when build() changes what it makes): part of its fingerprint.
VENV_LAYOUT = "2: relocatable scripts"
# A script's first lines that run it with the python in its own folder, wherever that is seen
# (the form pip itself writes for long paths, with the folder found at run time).
RELOCATABLE_SHEBANG = b"""#!/bin/sh
'''exec' "$(dirname -- "$0")/python" "$0" "$@"
' '''
"""
# Where a kernel sees its template: a fixed path, so no host path of ours shows inside.
MOUNT_POINT = Path("/opt/template")


class TemplateNotBuilt(RuntimeError):
    pass


@dataclass(frozen=True)
class Template:
    name: str
    root: Path  # the built template: <templates_dir>/<name>

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def startup_file(self) -> Path:
        return self.root / "startup.py"

    def kernel_files(self) -> list[str]:
        """The files of the template's source a kernel reads from the built template."""
        return [name for name in KERNEL_FILES if (self.source / name).exists()]

    @property
    def warm_up_code(self) -> str:
        """What pooled kernels run while they wait to be taken (the template's warm.py), or ""."""
        warm = self.source / "warm.py"
        return warm.read_text() if warm.exists() else ""

    def preload_code(self, *, warm_up: bool = True) -> str:
        """What a fork server imports once for all its kernels: the template's preload.py (what its
        startup file imports), then its warm-up unless that is turned off."""
        preload = self.source / "preload.py"
        imports = preload.read_text() if preload.exists() else ""
        return imports + "\n" + (self.warm_up_code if warm_up else "")

    def inside(self, path: Path) -> Path:
        """Where a kernel sees ``path``, a path under the built template."""
        return MOUNT_POINT / path.relative_to(self.root)

    @property
    def source(self) -> Path:
        return SOURCE_DIR / self.name

    def base_prefix(self) -> Path:
        """The interpreter install the virtualenv points at; kernels need it read-only too."""
        for line in (self.venv / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                return Path(value.strip()).parent.resolve()
        raise TemplateNotBuilt(f"template {self.name!r} has no pyvenv.cfg home")

    def runtime_binds(self) -> dict[Path, Path]:
        """Everything a kernel of this template must see, read-only: path inside → host path."""
        base = self.base_prefix()
        return {base: base, MOUNT_POINT: self.root.resolve()}

    @property
    def wheelhouse(self) -> Path:
        """Wheels a kernel may install with no network (`%pip install`), read-only inside."""
        return self.root / "wheelhouse"

    def fingerprint(self) -> str:
        """Identifies the virtualenv's contents: the requirements, the interpreter, the layout."""
        digest = hashlib.sha256((self.source / "requirements.txt").read_bytes())
        digest.update(sys.version.encode())
        digest.update(VENV_LAYOUT.encode())
        return digest.hexdigest()

    def wheelhouse_fingerprint(self, extra: list[str]) -> dict[str, object]:
        return wheelhouse.fingerprint(self.source / wheelhouse.LIST_FILE, extra, self.fingerprint())

    def _wheelhouse_is_current(self, extra: list[str] | None) -> bool:
        """Built from this wheelhouse.txt for this virtualenv (and, unless ``extra`` is None,
        these additions: a running sandboxd need not know which the build was given)."""
        built = wheelhouse.read_marker(self.root / WHEELHOUSE_MARKER)
        if built is None or not self.wheelhouse.is_dir():
            return False
        wanted = self.wheelhouse_fingerprint(extra or [])
        keys = ("list", "venv") if extra is None else ("list", "venv", "extra")
        return all(built.get(key) == wanted[key] for key in keys)

    def _venv_is_current(self) -> bool:
        marker = self.root / READY_MARKER
        return marker.exists() and marker.read_text() == self.fingerprint()

    def is_built(self) -> bool:
        return (
            self._venv_is_current()
            and self._wheelhouse_is_current(None)
            and self.startup_file.exists()
            and all(
                (self.root / name).exists()
                and (self.root / name).read_bytes() == (self.source / name).read_bytes()
                for name in self.kernel_files()
            )
        )

    def require_built(self) -> None:
        if not self.is_built():
            raise TemplateNotBuilt(
                f"sandbox template {self.name!r} is not built (or is out of date) in {self.root};"
                " run `make template`"
            )

    def build(self, *, extra_wheels: Sequence[str] = (), log: Callable[[str], None] = print) -> None:
        """Create the template's own virtualenv from requirements.txt and its wheelhouse from
        wheelhouse.txt plus ``extra_wheels``; each step is a no-op when current.

        Raises wheelhouse.WheelhouseError when a wheel cannot be resolved or fetched."""
        extra = list(extra_wheels)
        if not self._venv_is_current():
            log(f"building template {self.name} in {self.root} (a few minutes the first time)")
            if self.root.exists():
                shutil.rmtree(self.root)
            self.root.mkdir(parents=True)
            base_python = getattr(sys, "_base_executable", sys.executable)
            subprocess.run([base_python, "-m", "venv", str(self.venv)], check=True)
            pip = [str(self.python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
            subprocess.run([*pip, "-r", str(self.source / "requirements.txt")], check=True)
            subprocess.run([str(self.python), "-m", "compileall", "-q", str(self.venv)], check=False)
            _make_scripts_relocatable(self.venv)
            (self.root / READY_MARKER).write_text(self.fingerprint())
        if not self._wheelhouse_is_current(extra):
            requirements = wheelhouse.listed_requirements(self.source / wheelhouse.LIST_FILE) + extra
            log(f"fetching the wheelhouse of {self.name}: {' '.join(requirements) or 'nothing'}")
            wheelhouse.build(self.python, requirements, self.wheelhouse, log=log)
            (self.root / WHEELHOUSE_MARKER).write_text(json.dumps(self.wheelhouse_fingerprint(extra)))
        self._build_font_cache()
        for name in self.kernel_files():
            shutil.copyfile(self.source / name, self.root / name)
        log(f"template {self.name} is ready")

    @property
    def font_cache(self) -> Path:
        return self.root / "mplconfig"

    def _build_font_cache(self) -> None:
        """matplotlib's font list, made once here: each kernel's own config folder starts empty.

        (The list names matplotlib's own fonts relative to its data folder, so it holds wherever
        a kernel sees the template.)
        """
        if any(self.font_cache.glob("fontlist-*.json")):
            return
        env = {"MPLCONFIGDIR": str(self.font_cache), "PATH": os.environ.get("PATH", "")}
        code = "import matplotlib.font_manager"
        subprocess.run([str(self.python), "-c", code], check=True, env=env)


def _make_scripts_relocatable(venv: Path) -> None:
    """Point the virtualenv's scripts (pip, ipython...) at the python beside them, not at this
    host path: kernels see the template at MOUNT_POINT, where `!pip` must run too."""
    shebang = f"#!{venv / 'bin' / 'python'}".encode()
    for script in (venv / "bin").iterdir():
        if script.is_symlink() or not script.is_file():
            continue
        with script.open("rb") as file:
            first = file.readline()
            if not first.startswith(shebang) or b" " in first.strip():
                continue
            rest = file.read()
        script.write_bytes(RELOCATABLE_SHEBANG + rest)


def available() -> list[str]:
    return sorted(p.name for p in SOURCE_DIR.iterdir() if (p / "requirements.txt").exists())


def get(name: str, templates_dir: Path) -> Template:
    if name not in available():
        raise KeyError(name)
    return Template(name=name, root=templates_dir / name)
