"""The layout explains the design: no import circles, no private names across modules,
and a write goes down the floors once.

The floors are the import graph's (the import-graph tool named by MAXMEM_IMPORT_GRAPH,
which also counts imports inside functions): a module's floor is one above the highest it imports. The
write-path tests trace every call between maxmem's modules while a trigger commit, a
`remember` and a capture batch run, and check that no call climbs to a higher floor and
that no module is entered twice on one call stack (A -> B -> A).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from maxmem import Brain, Clock
from maxmem.capture import CaptureSettings, run_capture
from maxmem.triggers.commit import commit

ROOT = Path(__file__).resolve().parent.parent
# The import-graph tool is not part of maxmem: MAXMEM_IMPORT_GRAPH names it (scripts/test passes it on).
GRAPH_ENV = "MAXMEM_IMPORT_GRAPH"
PACKAGE = ROOT / "maxmem"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
# Frames that only pass a call through: db.guarded's wrapper (a decorator of Brain's
# public methods) and contextlib's generator of db.atomic.
PASS_THROUGH = {("maxmem.store.db", "wrapper")}


def import_graph() -> str:
    graph = os.environ.get(GRAPH_ENV)
    if not graph:
        pytest.skip(f"{GRAPH_ENV} is not set: it names the import-graph tool these tests run")
    if not Path(graph).is_file():
        pytest.skip(f"{GRAPH_ENV}={graph}: no such file")
    result = subprocess.run([sys.executable, graph, "maxmem"], capture_output=True, text=True, cwd=ROOT)
    return result.stdout


def floors() -> dict[str, int]:
    found: dict[str, int] = {}
    for line in import_graph().splitlines():
        if m := re.match(r"floor\s+(\d+): (.+)", line):
            found.update({name: int(m.group(1)) for name in m.group(2).split(", ")})
    return found


def test_no_import_circles_and_no_private_names_across_modules():
    out = import_graph()
    assert re.search(r"\b0 circles, 0 private names imported", out), out
    assert not re.search(r"^(circle|private):", out, re.M), out


# The ground floor knows no domain; the faces are on top, and only the entry points and
# the daemon (which runs every job, the PostgreSQL push included) start one of them.
GROUND = {"maxmem.errors", "maxmem.clock", "maxmem.config", "maxmem.settings", "maxmem.agents", "maxmem.keys",
          "maxmem.sealed", "maxmem.files", "maxmem.inert", "maxmem.memory",
          "maxmem.store.db", "maxmem.store.migrations", "maxmem.archive", "maxmem.jsonl"}
FACES = ("maxmem.cli", "maxmem.mcp", "maxmem.sync", "maxmem.browse")
STARTERS = {"maxmem.__main__", "maxmem.entry", "maxmem.jobs.daemon"}


def imported_modules() -> dict[str, set[str]]:
    """Each module of maxmem -> the modules of maxmem it imports (anywhere in it)."""
    names = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in PACKAGE.rglob("*.py")}
    found: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                targets |= {f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
        found[name] = {t for t in targets if t in names and t not in (name, "maxmem")}
    return found


def is_face(name: str) -> bool:
    return any(name == face or name.startswith(face + ".") for face in FACES)


def test_no_import_climbs_a_floor():
    modules = imported_modules()
    assert GROUND <= set(modules)
    climbs = [f"{name} imports {target}" for name in sorted(GROUND) for target in sorted(modules[name] - GROUND)]
    climbs += [f"{name} imports {target}" for name, targets in sorted(modules.items())
               if not is_face(name) and name not in STARTERS for target in sorted(targets) if is_face(target)]
    assert climbs == []


def test_no_module_uses_another_modules_private_attributes():
    """`brain._record` and the like: private names reached through an object."""
    pattern = re.compile(r"\b(?!self\b|cls\b)([a-z][a-z_]*)\._[a-z]\w*")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#", 1)[0]
            for m in pattern.finditer(code):
                if m.group(1) not in ("re", "sys", "os", "reader", "_constants", "_parser"):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def module_of(frame: FrameType) -> str | None:
    path = Path(frame.f_code.co_filename)
    try:
        relative = path.resolve().relative_to(ROOT)
    except ValueError:
        return None
    if relative.parts[0] != "maxmem":
        return None
    name = ".".join(relative.with_suffix("").parts)
    return name.removesuffix(".__init__")


@contextmanager
def traced(calls: list[tuple[list[str], str]]) -> Iterator[None]:
    """Record, for every call into a maxmem module from maxmem code, the modules on the
    stack (collapsed, outermost first) and the callee's module."""

    def stack_of(frame: FrameType | None) -> list[str]:
        modules: list[str] = []
        while frame is not None:
            name = module_of(frame)
            if name is not None and (name, frame.f_code.co_name) not in PASS_THROUGH:
                if not modules or modules[-1] != name:
                    modules.append(name)
            frame = frame.f_back
        return modules[::-1]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = module_of(frame)
        if callee is None or (callee, frame.f_code.co_name) in PASS_THROUGH:
            return
        stack = stack_of(frame.f_back)
        if stack:
            calls.append((stack, callee))

    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)


def check_downward(action: Callable[[], Any]) -> int:
    levels = floors()
    calls: list[tuple[list[str], str]] = []
    with traced(calls):
        action()
    assert calls, "nothing was traced"
    climbs, revisits = set(), set()
    for stack, callee in calls:
        caller = stack[-1]
        if callee != caller and levels[callee] > levels[caller]:
            climbs.add(f"{caller} (floor {levels[caller]}) -> {callee} (floor {levels[callee]})")
        if callee != caller and callee in stack:
            revisits.add(" -> ".join([*stack, callee]))
    assert not climbs, sorted(climbs)
    assert not revisits, sorted(revisits)
    return len(calls)


def test_a_trigger_commit_goes_down_once(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "brain.db", embedder=local_embedder, clock=clock) as brain:
        commit(brain, "decision", "We decided to use PostgreSQL for the shared memory.", source_turns=["a"])

        def restated() -> None:
            commit(brain, "decision", "We decided to use PostgreSQL for the shared memory, again.",
                   source_turns=["b"])  # a near-duplicate: merged into the first
            commit(brain, "lesson", "Always snapshot the database before a migration.")

        assert check_downward(restated) > 100


def test_a_remember_goes_down_once(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "brain.db", embedder=local_embedder, clock=clock) as brain:
        brain.remember("My passport expires in March 2027.", category="core")

        def remember() -> None:
            brain.remember("Remember that my passport expires in March 2027.", category="core")  # merged
            brain.remember("The wifi at the cabin is called Seeblick_5G.", category="daily")

        assert check_downward(remember) > 100


def test_a_capture_batch_goes_down_once(tmp_path, hash_embedder):
    home = tmp_path / "home"
    shutil.copytree(FIXTURES, home)
    settings = CaptureSettings(openclaw_dirs=(home / "openclaw",), claude_dirs=(home / "claude-code",),
                               codex_dirs=(home / "codex",), settle_seconds=0)
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=Clock()) as brain:
        report: list[Any] = []
        assert check_downward(lambda: report.append(run_capture(brain, settings=settings))) > 100
        assert report[0].new_turns > 0


def test_every_command_module_registers_what_the_group_lists():
    """The group loads a family's module when one of its commands runs: FAMILIES must
    name exactly the commands each module defines."""
    import importlib

    from maxmem.cli import FAMILIES

    for family, names in FAMILIES.items():
        module = importlib.import_module(f"maxmem.cli.{family}")
        assert sorted(c.name for c in module.COMMANDS) == sorted(names), family
    assert {p.stem for p in (PACKAGE / "cli").glob("*.py")} - {"__init__", "common"} == set(FAMILIES)
