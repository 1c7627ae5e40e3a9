"""docs/cli.md and docs/schema.md are generated from the code and must not go stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_docs_match_the_code():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_readme_names_only_commands_that_exist():
    """Every `maxmem …` line in the README's code blocks names a real command."""
    import re

    from maxmem.cli import cli

    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    commands = set(cli.list_commands(None))  # type: ignore[arg-type]
    used = set()
    for block in blocks:
        for line in block.splitlines():
            for part in line.split("&&") + line.split(";"):
                words = part.split()
                if not words or words[0] != "maxmem":
                    continue
                rest = words[1:]
                while rest and rest[0] in ("--db", "--config", "--embedder", "--log-file"):
                    rest = rest[2:]
                if rest and not rest[0].startswith("-"):
                    used.add(rest[0])
    assert used, "no maxmem command found in the README"
    assert used - commands == set(), f"README mentions unknown commands: {used - commands}"
