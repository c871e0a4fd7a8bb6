"""The `%pip` line magic of code-interpreter kernels: pip in the kernel's environment, which
startup.py points at the template's wheelhouse (PIP_NO_INDEX, PIP_FIND_LINKS) and the
workdir's .packages (PIP_PREFIX, PYTHONPATH); there is no network in here.

startup.py loads this file on the first `%pip`, so kernels start without it."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import site
import subprocess
import sys
from importlib import metadata

# pip's options that take a value (the next word is not a requirement).
TAKES_VALUE = frozenset(
    "-r --requirement -c --constraint -e --editable -t --target --prefix --root -f --find-links"
    " -i --index-url --extra-index-url --platform --python-version --implementation --abi --src"
    " --report --upgrade-strategy --progress-bar --log --cache-dir -C --config-settings"
    " --no-binary --only-binary --global-option --trusted-host --proxy".split()
)


class PackageNotAvailableOffline(Exception):
    pass


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def offered() -> dict[str, str]:
    """Each distribution in the wheelhouse: canonical name → version."""
    wheelhouse = os.environ.get("PIP_FIND_LINKS", "")
    found = {}
    for entry in sorted(os.listdir(wheelhouse)) if os.path.isdir(wheelhouse) else []:
        if entry.endswith(".whl"):
            name, version = entry.split("-")[:2]
            found[canonical(name)] = version
    return found


def not_offline(requirement: str) -> PackageNotAvailableOffline:
    packages = ", ".join(f"{name} {version}" for name, version in offered().items()) or "none"
    return PackageNotAvailableOffline(
        f"{requirement} is not available offline: this sandbox has no network. Packages it can"
        f" install: {packages}. An administrator adds packages to"
        " sandboxes/templates/code-interpreter/wheelhouse.txt or SANDBOX_EXTRA_WHEELS and runs"
        " `make template`."
    )


def first_missing(args: list[str]) -> str | None:
    """The first requirement named in ``args`` (pip install's) that is neither in the wheelhouse
    nor installed; options, their values, paths and URLs are left for pip to judge."""
    have = offered()
    previous = ""
    for arg in args:
        option, previous = previous, arg
        if arg.startswith("-") or option in TAKES_VALUE or "/" in arg:
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", arg)
        if match is None or canonical(match.group()) in have:
            continue
        try:
            metadata.distribution(match.group())
        except metadata.PackageNotFoundError:
            return arg
    return None


def pip(line: str) -> None:
    """`%pip ARGS`: run pip, print what it says, and make what it installed importable at once.

    Raises PackageNotAvailableOffline for a requirement the wheelhouse cannot meet (before pip
    runs, when the name alone says so), RuntimeError when pip fails otherwise."""
    __tracebackhide__ = True
    args = shlex.split(line)
    installing = args[:1] == ["install"]
    if installing and (name := first_missing(args[1:])):
        raise not_offline(name)
    process = subprocess.Popen(
        [sys.executable, "-m", "pip", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    output = []
    for out in process.stdout:
        output.append(out)
        print(out, end="", flush=True)
    status = process.wait()
    importlib.invalidate_caches()
    for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if folder and os.path.isdir(folder):
            site.addsitedir(folder)  # runs its .pth files; the folder is on sys.path already
    if (
        status
        and installing
        and (found := re.search(r"No matching distribution found for (\S+)", "".join(output)))
    ):
        raise not_offline(found.group(1))
    if status:
        raise RuntimeError(f"pip {' '.join(args[:1])} failed (exit status {status}); its output is above")
