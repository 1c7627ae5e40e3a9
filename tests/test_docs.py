"""docs/cli.md and docs/schema.md are generated from the code and must not go stale; the
README and docs/index.md point only at pages that exist, and the index lists every page."""

from __future__ import annotations

import re
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


def test_the_docs_index_lists_every_page_and_links_only_to_files_that_exist():
    index = (ROOT / "docs" / "index.md").read_text()
    linked = set(re.findall(r"\]\(([^)#]+)", index))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages - linked == set(), f"docs/index.md does not list {sorted(pages - linked)}"
    missing = [link for link in linked if not (ROOT / "docs" / link).resolve().exists()]
    assert missing == [], f"docs/index.md links to missing files: {missing}"


def test_the_readme_is_short_and_links_only_to_files_that_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 220
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text)
    missing = [link for link in links if not (ROOT / link).exists()]
    assert links and missing == [], f"README links to missing files: {missing}"


def test_config_doc_matches_the_code():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_config_doc.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def documented_settings() -> dict[str, set[str]]:
    """docs/config.md's keys per section ("" for the top level)."""
    found: dict[str, set[str]] = {}
    section = ""
    for line in (ROOT / "docs" / "config.md").read_text().splitlines():
        if m := re.match(r"## \[([\w.]+)\]", line):
            section = m.group(1)
        elif m := re.match(r"\| `(\w+)` \|", line):
            found.setdefault(section, set()).add(m.group(1))
    return found


def test_config_doc_names_every_setting_and_variable():
    from maxmem.settings import SECTIONS, TriggerTable

    documented = documented_settings()
    keys = {(name, key) for name, (_, cls) in SECTIONS.items() for key in cls.keys()}
    keys |= {("triggers.NAME", key) for key in TriggerTable.keys()}
    assert len(keys) > 60, keys
    missing = sorted(f"[{s}] {k}" for s, k in keys if k not in documented.get(s, set()))
    assert missing == [], f"docs/config.md lacks (run  python scripts/make_config_doc.py): {missing}"
    variables = {v for p in (ROOT / "maxmem").rglob("*") if p.is_file() and p.suffix != ".pyc"
                 for v in re.findall(r"\bMAXMEM_[A-Z_]+[A-Z]\b", p.read_text(encoding="utf-8", errors="ignore"))}
    text = (ROOT / "docs" / "config.md").read_text()
    assert sorted(v for v in variables if f"`{v}`" not in text) == []


def is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent that is a module, not a package
        return False


def test_the_modules_the_docs_name_exist():
    """A module path in README, CONTRIBUTING or docs/ (`maxmem/search/hybrid.py`, `python -m
    maxmem.hooks.server`, `from maxmem.hooks.recall import recall`, `maxmem.jobs.runs.record_run`)
    names a module that exists and, after an import, names that it has."""
    import importlib

    stale = []
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        where = page.relative_to(ROOT)
        for path in re.findall(r"\bmaxmem/[\w/]+\.py\b", text):
            if not (ROOT / path).is_file():
                stale.append(f"{where}: {path}")
        for module in re.findall(r"python -m (maxmem[\w.]*)", text):
            if not is_module(module):
                stale.append(f"{where}: python -m {module}")
        for module, names in re.findall(r"^from (maxmem[\w.]*) import ([\w, ]+)$", text, re.M):
            if not is_module(module):
                stale.append(f"{where}: from {module} import")
                continue
            found = importlib.import_module(module)
            stale += [f"{where}: from {module} import {n}" for n in names.replace(" ", "").split(",")
                      if not hasattr(found, n) and not is_module(f"{module}.{n}")]
        for dotted in re.findall(r"`(maxmem(?:\.\w+)+)", text):
            parts = dotted.split(".")
            if not is_module(f"maxmem.{parts[1]}"):
                continue  # not a module of maxmem: the shared PostgreSQL schema's `maxmem.memories`, …
            at = len(parts)
            while not is_module(".".join(parts[:at])):
                at -= 1
            value: object = importlib.import_module(".".join(parts[:at]))
            for name in parts[at:]:
                value = getattr(value, name, None)
            if value is None:
                stale.append(f"{where}: {dotted}")
    assert stale == [], "the docs name modules or names that do not exist:\n" + "\n".join(stale)
