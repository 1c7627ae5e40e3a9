"""The repository speaks of maxmem only, and needs nothing beside it.

No tracked file refers to a tracker's tickets or to the sessions in which the code was
written, and every relative path a tracked file names resolves inside the checkout. An
agent's session is the product's own word ("the current session") and is not matched.
Data files that quote the world (transcripts, labelled corpora) and the CI script, which
belongs to the machine it runs on, are not read.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NARRATION = re.compile("|".join([
    r"\bissues?\s+\d",                                   # a ticket by number
    r"\b(?:this|earlier|later|previous|next|first|last|prior)\s+sessions?\b",  # the product: "the current session"
    r"\bsessions?\s+\d+\b",
]), re.IGNORECASE)
CLIMBING = re.compile(r"(?<![\w.~/])(?:\.\./)+[\w.-]+(?:/[\w.-]+)*")
LINK = re.compile(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)")

SKIPPED = ("tests/fixtures/", "tests/data/", "bench/data/", ".ci/")
NOT_TRACKED = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", "out"}


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return listed.stdout.splitlines()
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not NOT_TRACKED & set(p.relative_to(ROOT).parts)]


def text_files(root: Path, names: list[str]) -> list[tuple[str, list[str]]]:
    read = []
    for name in names:
        path = root / name
        if name.startswith(SKIPPED) or not path.is_file():
            continue
        try:
            read.append((name, path.read_text(encoding="utf-8").splitlines()))
        except UnicodeDecodeError:
            continue  # images, the sample brain
    return read


def narration(files: list[tuple[str, list[str]]]) -> list[str]:
    return [f"{name}:{number}: {line.strip()[:160]}" for name, lines in files
            for number, line in enumerate(lines, 1) if NARRATION.search(line)]


def paths_outside(root: Path, files: list[tuple[str, list[str]]]) -> list[str]:
    """Relative paths that climb out of the checkout, and Markdown links to missing files."""
    found = []
    for name, lines in files:
        folder = (root / name).parent
        for number, line in enumerate(lines, 1):
            named = CLIMBING.findall(line)
            if name.endswith(".md"):
                named += LINK.findall(line)
            for path in named:
                target = (folder / path).resolve()
                if not target.is_relative_to(root.resolve()) or not target.exists():
                    found.append(f"{name}:{number}: {path}")
    return found


def test_no_tracked_file_narrates_how_maxmem_was_written():
    found = narration(text_files(ROOT, tracked_files()))
    assert not found, "rewrite as a statement about maxmem, or delete:\n" + "\n".join(found)


def test_every_relative_path_stays_inside_the_checkout():
    found = paths_outside(ROOT, text_files(ROOT, tracked_files()))
    assert not found, "paths a checkout does not hold:\n" + "\n".join(found)


def test_the_path_check_finds_a_path_beside_the_checkout_and_a_dead_link(tmp_path):
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    (tmp_path / "beside").mkdir()
    (root / "README.md").write_text("[Design](docs/design.md) and [Gone](docs/gone.md)\n")
    (root / "docs" / "design.md").write_text("[Back](../README.md)\n")
    beside = "/".join(["..", "beside"])  # spelled apart, or this file would name it itself
    (root / "run.py").write_text(f'TOOL = "{beside}"\nHOME = "~/{beside}"\n')
    files = text_files(root, ["README.md", "docs/design.md", "run.py"])
    assert paths_outside(root, files) == ["README.md:1: docs/gone.md", f"run.py:1: {beside}"]


def test_the_agents_sessions_and_the_users_tickets_are_not_narration():
    for product in ("Include the current session's latest exchanges.", "## Current session (s-1)",
                    "captures the current session's transcript", "session_id, --session-id",
                    "The login bug is tracked as issue #12", "migration 0005_session_context",
                    "the exchanges of the current session not committed yet",
                    "memories already shown in the current session (by an earlier prompt"):
        assert not NARRATION.search(product), product
