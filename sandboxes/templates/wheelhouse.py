"""A template's wheelhouse: extra wheels fetched at build time, which `%pip install` in a kernel
installs from with no network (the template's wheelhouse.txt plus SANDBOX_EXTRA_WHEELS)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

LIST_FILE = "wheelhouse.txt"
EXTRA_ENV = "SANDBOX_EXTRA_WHEELS"
VERSION_CLAUSE = re.compile(r"[<>=!~]")


class WheelhouseError(RuntimeError):
    """The wheelhouse cannot be built; the message says which package and why."""


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``Foo_Bar`` is ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def extra_requirements(value: str) -> list[str]:
    """An administrator's additions: requirement specifiers (no spaces inside one) separated by
    spaces or commas. A piece that starts with a version operator continues the specifier before
    it, so ``"tabulate, pyjanitor>=0.30,<1"`` is ``["tabulate", "pyjanitor>=0.30,<1"]``.
    """
    specifiers: list[str] = []
    for piece in re.split(r"[\s,]+", value.strip()):
        if not piece:
            continue
        if specifiers and VERSION_CLAUSE.match(piece):
            specifiers[-1] += "," + piece
        else:
            specifiers.append(piece)
    return specifiers


def listed_requirements(list_file: Path) -> list[str]:
    """The requirement lines of a wheelhouse.txt (comments and blank lines dropped)."""
    if not list_file.exists():
        return []
    lines = (line.split("#", 1)[0].strip() for line in list_file.read_text().splitlines())
    return [line for line in lines if line]


def fingerprint(list_file: Path, extra: list[str], venv_fingerprint: str) -> dict[str, object]:
    """What the wheelhouse was built from: the list, the additions and the virtualenv it serves
    (its dependencies are resolved against what that virtualenv already holds)."""
    listing = list_file.read_bytes() if list_file.exists() else b""
    return {"list": hashlib.sha256(listing).hexdigest(), "extra": extra, "venv": venv_fingerprint}


def read_marker(marker: Path) -> dict[str, object] | None:
    try:
        return json.loads(marker.read_text())
    except (OSError, ValueError):
        return None


def build(
    python: Path, requirements: list[str], dest: Path, *, log: Callable[[str], None] = print
) -> list[str]:
    """Fill ``dest`` with wheels of ``requirements`` and of their dependencies that the
    virtualenv of ``python`` does not already hold, for that interpreter; return their file names.

    Dependencies are resolved against the installed packages (pip's dry run), so nothing in
    the wheelhouse replaces a package of the template. Raises WheelhouseError when pip cannot
    resolve or fetch them, or when one would need another version of an installed package.
    """
    staging = Path(tempfile.mkdtemp(prefix=".wheelhouse-", dir=dest.parent))
    try:
        wheels = _resolve(python, requirements, staging) if requirements else []
        if wheels:
            _pip(python, "download", "--no-deps", "--only-binary=:all:", "-d", str(staging), *wheels)
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    dest.chmod(0o755)
    names = sorted(path.name for path in dest.glob("*.whl"))
    log(f"wheelhouse: {len(names)} wheels ({', '.join(wheels) or 'none'})")
    return names


def _resolve(python: Path, requirements: list[str], workdir: Path) -> list[str]:
    """``name==version`` of each distribution pip would add to the virtualenv for ``requirements``."""
    listing = workdir / "requirements.in"
    listing.write_text("\n".join(requirements) + "\n")
    report = workdir / "report.json"
    _pip(python, "install", "--dry-run", "--only-binary=:all:", "--report", str(report), "-r", str(listing))
    planned = json.loads(report.read_text())["install"]
    listing.unlink()
    report.unlink()
    installed = _installed(python)
    wheels = []
    for item in planned:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if canonical(name) in installed:
            raise WheelhouseError(
                f"the wheelhouse would need {name} {version}, but the template has {name}"
                f" {installed[canonical(name)]}: choose versions of {', '.join(requirements)} that work"
                " with the template's requirements.txt"
            )
        wheels.append(f"{name}=={version}")
    return wheels


def _installed(python: Path) -> dict[str, str]:
    out = _pip(python, "list", "--format=json", quiet=False)  # -q would silence the list too
    return {canonical(dist["name"]): dist["version"] for dist in json.loads(out)}


def _pip(python: Path, *args: str, quiet: bool = True) -> str:
    command = [str(python), "-m", "pip", "--disable-pip-version-check", *(["-q"] if quiet else []), *args]
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    if result.returncode != 0:
        lines = result.stderr.splitlines()
        errors = [line for line in lines if line.startswith("ERROR")] or lines[-20:]
        raise WheelhouseError(
            f"`pip {args[0]}` for the wheelhouse failed (exit status {result.returncode}):\n"
            + "\n".join(errors)
            + f"\n(the list is the template's {LIST_FILE} and {EXTRA_ENV})"
        )
    return result.stdout
