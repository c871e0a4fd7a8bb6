"""`.env.example` lists every setting the app reads, as its first line says (`make setup` copies it)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READ = re.compile(r"""\benv(?:str|bool|int|float|secret|bytes|list)\(\s*["']([A-Z0-9_]+)["']""")


def test_every_variable_the_settings_read_is_in_env_example():
    listed = set(re.findall(r"^#? ?([A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    read = set(READ.findall((ROOT / "config" / "settings.py").read_text()))
    assert len(read) > 80, "the pattern still finds the settings"
    assert read - listed == set()
