"""`python -m sandboxes.templates build [NAME ...] [--dir DIR]`: build kernel runtimes."""

import argparse
import os
from pathlib import Path

from sandboxes import templates


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m sandboxes.templates")
    parser.add_argument("command", choices=["build"])
    parser.add_argument("names", nargs="*", default=templates.available())
    parser.add_argument("--dir", default=os.environ.get("SANDBOXD_TEMPLATES_DIR", "var/templates"))
    args = parser.parse_args()
    for name in args.names:
        templates.get(name, Path(args.dir).resolve()).build()


if __name__ == "__main__":
    main()
