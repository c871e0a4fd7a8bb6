"""README stays a front page a newcomer reads in minutes, and every link in it and in docs/ leads
somewhere."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_readme_is_at_most_350_lines_and_links_each_page_of_docs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 350
    linked = {(ROOT / target.split("#")[0]).resolve() for target in LINK.findall(readme)}
    for page in (ROOT / "docs").glob("*.md"):
        assert page.resolve() in linked, f"README does not link {page.relative_to(ROOT)}"


def test_every_relative_link_resolves_to_a_file():
    broken = []
    for page in pages():
        for target in LINK.findall(page.read_text()):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert broken == []
