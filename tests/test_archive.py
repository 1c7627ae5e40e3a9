"""archive.py: archives written whole or not at all; damaged ones read as far as they go."""

from __future__ import annotations

import gzip
import io
import json
import stat
import zlib
from pathlib import Path

import pytest

from maxmem import Brain, FixedClock
from maxmem.archive import ArchiveError, check, read, record_key, temporary, write
from maxmem.errors import InvalidInput


def _records(n: int, start: int = 0) -> list[dict]:
    return [{"uid": f"uid-{i:05d}", "content": f"memory {i} " + "ü words " * 8, "category": "daily"}
            for i in range(start, start + n)]


def old_style_archive(path: Path, batches: list[list[dict]]) -> None:
    """What maxmem up to 0.x wrote: one gzip stream, a Z_SYNC_FLUSH after each batch."""
    with open(path, "wb") as raw:
        gz = gzip.GzipFile(fileobj=raw, mode="wb")
        text = io.TextIOWrapper(gz, encoding="utf-8")
        for batch in batches:
            for record in batch:
                text.write(json.dumps(record, ensure_ascii=False) + "\n")
            text.flush()
            gz.flush(zlib.Z_SYNC_FLUSH)
        text.close()


def test_write_is_whole_private_and_verified(tmp_path):
    path = tmp_path / "brain.retention-20260101T000000Z.jsonl.gz"
    records = _records(700)
    assert write(path, records) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not temporary(path).exists()
    with gzip.open(path, "rt", encoding="utf-8") as handle:  # any gzip reader takes it
        assert [json.loads(line) for line in handle] == records
    reading = read(path)
    assert reading.complete and reading.lines == 700 and reading.note() is None
    with pytest.raises(ArchiveError, match="exists already"):
        write(path, _records(1))
    assert read(path).lines == 700


def test_write_replaces_a_leftover_temporary_and_never_keeps_one(tmp_path):
    path = tmp_path / "a.jsonl.gz"
    temporary(path).write_bytes(b"\x1f\x8b half of something")  # a killed run's
    write(path, _records(3))
    assert not temporary(path).exists() and read(path).lines == 3


def test_a_failed_write_leaves_no_file(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the archive folder should be")
    with pytest.raises(ArchiveError, match="cannot write the archive .*nothing was deleted"):
        write(blocker / "a.jsonl.gz", _records(3))
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-folder"]


@pytest.mark.parametrize("cut", [0.2, 0.5, 0.77, 0.999])
def test_a_truncated_old_archive_gives_its_complete_lines(tmp_path, cut):
    path = tmp_path / "old.jsonl.gz"
    batches = [_records(300, start=300 * b) for b in range(4)]
    old_style_archive(path, batches)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(EOFError), gzip.open(path, "rt") as handle:  # what `maxmem import` met before
        handle.read()
    reading = read(path)
    assert not reading.complete and "truncated" in (reading.problem or "")
    everything = [r for batch in batches for r in batch]
    assert 0 < reading.lines <= 1200
    assert reading.records == everything[: reading.lines]  # a prefix, nothing invented
    note = reading.note() or ""
    assert f"recovered the {reading.lines} complete line(s)" in note and str(path) in note
    assert check(path).lines == reading.lines  # type: ignore[union-attr]


def test_a_truncation_at_a_sync_point_loses_no_line(tmp_path):
    path = tmp_path / "old.jsonl.gz"
    old_style_archive(path, [_records(10), _records(10, start=10)])
    data = path.read_bytes()
    # the sync-flush marker 00 00 ff ff ends each batch: cut right after the first one
    end = data.index(b"\x00\x00\xff\xff") + 4
    path.write_bytes(data[:end])
    reading = read(path)
    assert (reading.complete, reading.lines, reading.lost_bytes) == (False, 10, 0)


def test_damaged_data_mid_stream_keeps_what_comes_before(tmp_path):
    path = tmp_path / "bad.jsonl.gz"
    write(path, _records(2000))
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    reading = read(path)
    assert not reading.complete and reading.problem and reading.problem.startswith("damaged")
    assert reading.records == _records(2000)[: reading.lines]


def test_concatenated_gzip_members_and_plain_jsonl(tmp_path):
    both = tmp_path / "two.jsonl.gz"
    both.write_bytes(gzip.compress(b'{"uid": "a"}\n') + gzip.compress(b'{"uid": "b"}\n'))
    assert [r["uid"] for r in read(both).records] == ["a", "b"]
    plain = tmp_path / "export.jsonl"
    plain.write_bytes(b'\xef\xbb\xbf{"uid": "a"}\n\n{"uid": "b"}')  # a BOM, a blank line, no final newline
    reading = read(plain)
    assert reading.complete and [r["uid"] for r in reading.records] == ["a", "b"]


def test_a_bad_line_in_a_whole_file_is_still_an_error(tmp_path):
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"uid": "a"}\nnot json\n{"uid": "b"}\n'))
    with pytest.raises(InvalidInput, match=r"x.jsonl.gz:2: not valid JSON"):
        read(path)
    assert "x.jsonl.gz:2" in str(check(path))
    path.write_bytes(gzip.compress(b'[1, 2]\n'))
    with pytest.raises(InvalidInput, match="not a JSON object"):
        read(path)
    with pytest.raises(InvalidInput, match="cannot read"):
        read(tmp_path / "missing.jsonl.gz")


def test_record_keys():
    assert record_key({"uid": "u1"}) == ("memories", "u1")
    assert record_key({"_table": "turns", "id": 4}) == ("turns", 4)
    assert record_key({"_table": "tool_calls", "session_id": "s", "call_id": "c"}) == ("tool_calls", "s", "c")


def test_a_recovered_archive_imports(tmp_path):
    path = tmp_path / "old.jsonl.gz"
    old_style_archive(path, [_records(50), _records(50, start=50)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 3 // 4])
    reading = read(path)
    with Brain.open(tmp_path / "restored.db", embedder="none", clock=FixedClock("2026-01-01T00:00:00Z")) as b:
        counts = b.import_records(reading.records)
        assert counts["added"] == reading.lines > 50
