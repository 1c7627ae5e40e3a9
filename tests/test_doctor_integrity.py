"""maxmem doctor's integrity check on a real brain.db with flipped bytes: the quick check
between full checks, the full PRAGMA integrity_check once a day (or on --full), its
result and age recorded and reported."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from conftest import run_cli

from maxmem import Brain, Config, FixedClock
from maxmem.doctor import run_checks

T0 = "2026-11-30T12:00:00Z"


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MAXMEM_LOG_DIR", raising=False)


def make_brain(path: Path, count: int = 6) -> list[str]:
    with Brain.open(path, embedder="none", clock=FixedClock(T0)) as brain:
        uids = [brain.remember(f"the garden hose note number {i}", category="core").uid for i in range(count)]
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return uids


def flip(path: Path, object_name: str, needle: str) -> None:
    """Change one character of `needle` where it sits in the root page of `object_name`
    (a table or an index of brain.db): the page stays well formed, its content lies."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (object_name,)).fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * size
    at = data.find(needle.encode(), start, start + size)
    assert at >= 0, f"{needle} is not in the root page of {object_name}"
    data[at + 9] = ord("0") if data[at + 9] != ord("0") else ord("1")
    path.write_bytes(bytes(data))


def config_for(path: Path) -> Config:
    return Config.from_tables({}, db_path=path, embedder="none")


def integrity(path: Path, at: str, full: bool = False) -> dict:
    report = run_checks(config_for(path), clock=FixedClock(at), full=full)
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.parametrize("where", ["memories", "sqlite_autoindex_memories_1"])
def test_doctor_finds_a_flipped_table_page_and_a_flipped_index_page(tmp_path, where):
    path = tmp_path / "brain.db"
    uids = make_brain(path)
    first = integrity(path, T0)
    assert first["integrity"]["level"] == "ok" and "full check" in first["integrity"]["detail"]
    assert first["last integrity"]["detail"].startswith("ok")  # recorded as a run, with its age
    flip(path, where, uids[2])
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]  # what the quick check cannot see
    assert conn.execute("PRAGMA integrity_check").fetchall() != [("ok",)]
    conn.close()
    hour_later = integrity(path, "2026-11-30T13:00:00Z")  # between full checks: the quick one
    assert hour_later["integrity"]["ok"] and "quick check" in hour_later["integrity"]["detail"]
    day_later = integrity(path, "2026-12-01T12:30:00Z")  # a day on: the full check runs on its own
    check = day_later["integrity"]
    assert not check["ok"] and ("missing from index" in check["detail"] or "wrong # of entries" in check["detail"])
    assert "restore a backup" in check["detail"] and "\n" not in check["detail"]
    again = integrity(path, "2026-12-01T13:30:00Z")  # the quick check after it keeps the full check's word
    assert not again["integrity"]["ok"] and "the full check" in again["integrity"]["detail"]


def test_doctor_full_on_the_command_line_exits_1_with_one_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "brain.db"
    uids = make_brain(path)
    monkeypatch.setenv("MAXMEM_DB", str(path))
    code, out, _ = run_cli(["doctor", "--full"], capsys)
    assert "integrity: ok (full check" in out
    flip(path, "sqlite_autoindex_memories_1", uids[4])
    code, out, _ = run_cli(["doctor", "--full"], capsys)
    [line] = [line for line in out.splitlines() if line.split(" integrity:")[0].strip() in ("ok", "WARN", "FAIL")]
    assert code == 1 and line.startswith("FAIL integrity: the full check found:")


def test_a_full_check_past_its_budget_warns_and_the_quick_check_stands(tmp_path, monkeypatch):
    import maxmem.doctor as doctor

    path = tmp_path / "brain.db"
    make_brain(path, 300)
    monkeypatch.setattr(doctor, "FULL_CHECK_SECONDS", 0.0)
    check = integrity(path, T0, full=True)["integrity"]
    assert check["ok"] and check["level"] == "warn" and "did not finish within 0 s" in check["detail"]
    assert "the quick check ok" in check["detail"]
