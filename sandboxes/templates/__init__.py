"""Templates: named, prebuilt kernel runtimes (a virtualenv and a startup file) kernels run in."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent
READY_MARKER = "ready"
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

    @property
    def warm_up_code(self) -> str:
        """What pooled kernels run while they wait to be taken (the template's warm.py), or ""."""
        warm = self.source / "warm.py"
        return warm.read_text() if warm.exists() else ""

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

    def fingerprint(self) -> str:
        """Identifies the virtualenv's contents: the requirements and the interpreter."""
        digest = hashlib.sha256((self.source / "requirements.txt").read_bytes())
        digest.update(sys.version.encode())
        return digest.hexdigest()

    def _venv_is_current(self) -> bool:
        marker = self.root / READY_MARKER
        return marker.exists() and marker.read_text() == self.fingerprint()

    def is_built(self) -> bool:
        startup = self.source / "startup.py"
        return (
            self._venv_is_current()
            and self.startup_file.exists()
            and self.startup_file.read_bytes() == startup.read_bytes()
        )

    def require_built(self) -> None:
        if not self.is_built():
            raise TemplateNotBuilt(
                f"sandbox template {self.name!r} is not built (or is out of date) in {self.root};"
                " run `make template`"
            )

    def build(self, *, log=print) -> None:
        """Create the template's own virtualenv from requirements.txt; a no-op when current."""
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
            (self.root / READY_MARKER).write_text(self.fingerprint())
        self._build_font_cache()
        shutil.copyfile(self.source / "startup.py", self.startup_file)
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


def available() -> list[str]:
    return sorted(p.name for p in SOURCE_DIR.iterdir() if (p / "requirements.txt").exists())


def get(name: str, templates_dir: Path) -> Template:
    if name not in available():
        raise KeyError(name)
    return Template(name=name, root=templates_dir / name)
