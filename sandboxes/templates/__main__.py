"""`python -m sandboxes.templates build [NAME ...] [--dir DIR]`: build kernel runtimes.

SANDBOX_EXTRA_WHEELS (requirement specifiers separated by spaces or commas) adds packages to
each template's wheelhouse, beside its wheelhouse.txt.
"""

import argparse
import os
import sys
from pathlib import Path

from sandboxes import templates
from sandboxes.templates import wheelhouse


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m sandboxes.templates")
    parser.add_argument("command", choices=["build"])
    parser.add_argument("names", nargs="*", default=templates.available())
    parser.add_argument("--dir", default=os.environ.get("SANDBOXD_TEMPLATES_DIR", "var/templates"))
    args = parser.parse_args()
    extra = wheelhouse.extra_requirements(os.environ.get(wheelhouse.EXTRA_ENV, ""))
    for name in args.names:
        try:
            templates.get(name, Path(args.dir).resolve()).build(extra_wheels=extra)
        except wheelhouse.WheelhouseError as exc:
            sys.exit(f"template {name}: {exc}")


if __name__ == "__main__":
    main()
