"""What a reader of a clone follows: the papers are cited by title (the numbered files they were
read from are not in the repository), and the README points to every guide to adding a part."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

# "paper 002", "Paper 004 (...)", "000_86231b468fed4b4e.txt", "shared/papers".
BY_NUMBER = re.compile(r"\b[Pp]apers? 00\d\b|\b00\d_[0-9a-f]{16}\.txt\b|shared/papers")


def reader_facing_files() -> list[Path]:
    files = [REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    # Code comments are read too: a newcomer opening a CC file meets its source first there.
    files += (REPO / "crates").rglob("*.rs")
    files += (REPO / "python").rglob("*.py")
    for folder in ("experiments", "examples"):
        for pattern in ("*.md", "*.toml", "*.py"):
            files += (REPO / folder).rglob(pattern)
    return sorted(files)


def test_papers_are_cited_by_title_not_by_file_number() -> None:
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in reader_facing_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if BY_NUMBER.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_readme_links_every_guide_to_adding_a_part() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for guide in sorted((REPO / "docs").rglob("adding.md")):
        assert f"]({guide.relative_to(REPO)})" in readme, guide
