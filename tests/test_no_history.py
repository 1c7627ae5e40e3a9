"""The product speaks of itself only: no tracked file narrates how maxmem was developed.

No reference to the project's issues ("issue 8", "(issue 16)"), to sessions of its
development ("until this session", "the earlier sessions' figures", "Session 2 levers"),
to a workspace a user does not have (`../shared`, `/work/shared`), to development notes
(`docs/notes/`), or to modules that no longer exist. "Session" meaning an agent's session
is the product's own word and is not matched; the few lines where a matching phrase is
about the product are allowed by name below.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HISTORY = re.compile("|".join([
    r"\bissues?\s+\d",                      # "issue 8", "issues 2 and 14"
    r"\(issues?\b",                          # "(issue 16)"
    r"\bthe issue's\b",
    r"\.\./shared\b", r"/work/shared\b",     # a workspace beside the checkout
    r"\bdocs/notes\b",
    r"\bsession_context\.py\b",              # now neighbours.py
    r"\bredact\.py\b",                       # now the package maxmem/redact/
    r"\bthis session\b",                     # the product says "the current session"
    r"\bearlier sessions?\b",
    r"\b(?:previous|last|next) sessions?\b",
    r"\bsessions? \d+\b",                    # "Session 2 levers", "session 5"
    r"\bthe lead\b",
    r"\bon main before\b",
]), re.IGNORECASE)

# Where a matching phrase is about the product: (path, text on the line).
ALLOWED = [
    # A released module rename, recorded for those who imported it.
    ("CHANGELOG.md", "`session_context.py` → `neighbours.py`"),
    # A renamed heading of the brief, recorded for those who read it.
    ("CHANGELOG.md", 'is headed "Current session" (was "This session")'),
]

# Data, not prose: transcripts, labelled corpora and probes that quote the world; and the
# CI script, which belongs to the machine it runs on, not to the product.
SKIPPED = ("tests/fixtures/", "tests/data/", "bench/data/", ".ci/")
NOT_TRACKED = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", "out"}


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return listed.stdout.splitlines()
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not NOT_TRACKED & set(p.relative_to(ROOT).parts)]


def history_lines() -> list[tuple[str, int, str]]:
    found = []
    for name in tracked_files():
        path = ROOT / name
        if name.startswith(SKIPPED) or name == "tests/test_no_history.py" or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # images, the sample brain
        for number, line in enumerate(text.splitlines(), 1):
            if HISTORY.search(line):
                found.append((name, number, line.strip()))
    return found


def allowed(name: str, line: str, entries: list[tuple[str, str]]) -> bool:
    return any(name == path and text in line for path, text in entries)


def test_no_tracked_file_narrates_the_projects_development():
    offending = [f"{name}:{number}: {line[:160]}" for name, number, line in history_lines()
                 if not allowed(name, line, ALLOWED)]
    assert not offending, ("development history in the product (rewrite as a statement about "
                           "maxmem, or delete):\n" + "\n".join(offending))


def test_every_allowed_entry_still_matches_a_line():
    lines = history_lines()
    stale = [f"{path}: {text!r}" for path, text in ALLOWED
             if not any(name == path and text in line for name, _, line in lines)]
    assert not stale, "no longer needed: delete from tests/test_no_history.py:\n" + "\n".join(stale)


def test_the_patterns_catch_history_and_leave_the_agents_sessions_alone():
    for history in ("Targets (issues 2 and 14): ingest", "decoded JSON (issue 16)",
                    "Until this session the benchmark timed", "The earlier sessions' figures",
                    'docs/notes/issue-8.md "Session 2 levers"', "../shared/tools/import-graph",
                    "the issue's target was 50 %", "| `redact.py` | secrets |"):
        assert HISTORY.search(history), history
    for product in ("Include the current session's latest exchanges.", "## Current session (s-1)",
                    "captures the current session's transcript", "tests/test_redact.py checks",
                    "The login bug is tracked as issue #12", "migration 0005_session_context",
                    "the exchanges of the current session not committed yet",
                    "memories already shown in the current session (by an earlier prompt"):
        assert not HISTORY.search(product), product
