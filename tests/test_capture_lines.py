"""The line reader: complete lines only, from a byte offset; bad lines counted and skipped."""

from __future__ import annotations

import io
import json

from maxmem.capture.lines import LineReader, head_hash


def read(data: bytes, offset: int = 0, limit: int | None = None) -> tuple[list, LineReader]:
    reader = LineReader(io.BytesIO(data), offset, limit)
    return list(reader), reader


def test_partial_last_line_is_not_consumed_even_if_it_parses():
    data = b'{"a": 1}\n{"b": 2}\n{"c": 3}'
    records, reader = read(data)
    assert [r.value for r in records] == [{"a": 1}, {"b": 2}]
    assert reader.end == data.index(b'{"c"')


def test_reading_resumes_at_the_offset_and_offsets_are_absolute():
    data = b'{"a": 1}\n{"b": 2}\n'
    first, reader = read(data[:12])  # '{"a": 1}\n{"b'
    assert [r.value for r in first] == [{"a": 1}]
    second, reader2 = read(data, reader.end)
    assert [r.value for r in second] == [{"b": 2}]
    assert second[0].offset == 9 and second[0].end == len(data) == reader2.end


def test_malformed_lines_are_counted_skipped_and_consumed():
    data = b'{"a": 1}\nnot json\n[1, 2]\n\n{"b": 2}\n'
    records, reader = read(data)
    assert [r.value for r in records] == [{"a": 1}, {"b": 2}]
    assert reader.stats.malformed == 2  # the text and the non-object
    assert reader.stats.lines == 5
    assert reader.end == len(data)


def test_invalid_utf8_is_replaced_and_counted():
    data = b'{"text": "caf\xe9 ok"}\n'
    records, reader = read(data)
    assert records[0].value == {"text": "caf\ufffd ok"}
    assert reader.stats.invalid_utf8 == 1


def test_nul_bytes_are_removed_and_counted():
    # A crash can leave NUL padding before the next record is appended.
    data = b'\x00\x00\x00{"a": 1}\n\x00\x00\n{"b": 2}\n'
    records, reader = read(data)
    assert [r.value for r in records] == [{"a": 1}, {"b": 2}]
    assert reader.stats.nul_bytes == 2
    assert reader.stats.malformed == 0


def test_crlf_line_endings():
    records, _ = read(b'{"a": 1}\r\n{"b": 2}\r\n')
    assert [r.value for r in records] == [{"a": 1}, {"b": 2}]


def test_limit_stops_at_the_size_seen_when_the_file_was_stat_ed():
    data = b'{"a": 1}\n{"b": 2}\n'
    records, reader = read(data, 0, limit=12)
    assert [r.value for r in records] == [{"a": 1}]
    assert reader.end == 9


def test_lines_longer_than_a_read_block():
    big = "x" * (3 << 20)
    data = json.dumps({"big": big}).encode() + b"\n" + b'{"b": 2}\n'
    records, reader = read(data)
    assert records[0].value["big"] == big and records[1].value == {"b": 2}
    assert reader.end == len(data)


def test_head_hash_ignores_appends_but_sees_rewrites():
    one = io.BytesIO(b'{"type": "session", "id": "a"}\n{"x": 1}\n')
    grown = io.BytesIO(b'{"type": "session", "id": "a"}\n{"x": 1}\n{"x": 2}\n')
    other = io.BytesIO(b'{"type": "session", "id": "b"}\n{"x": 1}\n')
    assert head_hash(one) == head_hash(grown) != head_hash(other)


def test_a_line_of_100_mb_is_skipped_in_one_pass_without_being_held(tmp_path):
    """A broken transcript (one endless line, as a crash or a stray binary write leaves)
    is read once, holding no more than a line may be: the next line is read, the long
    one counted."""
    import tracemalloc

    from maxmem.capture.lines import MAX_LINE_BYTES

    path = tmp_path / "broken.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(MAX_LINE_BYTES + (36 << 20))  # zeros, no newline
        handle.seek(0, 2)
        handle.write(b'\n{"type": "user", "n": 1}\n')
    tracemalloc.start()
    try:
        with open(path, "rb") as stream:
            reader = LineReader(stream, name=str(path))
            records = list(reader)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.value for r in records] == [{"type": "user", "n": 1}]
    assert reader.stats.malformed == 1 and reader.end == path.stat().st_size
    assert peak < MAX_LINE_BYTES + (8 << 20), peak  # what a line may hold, never the whole 100 MB


def test_a_reader_given_where_an_earlier_one_looked_reads_only_past_it():
    """`scanned` says no newline lies between the offset and it: the next reader reads on
    from there, and reads the line's head back only once its newline is found."""

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, size=-1):
            data = super().read(size)
            self.read_bytes += len(data)
            return data

    head = b'{"a": "' + b"x" * 3000
    first = Counting(head)
    reader = LineReader(first, 0)
    assert list(reader) == [] and reader.end == 0 and reader.scanned == len(head)
    grown = Counting(head + b"x" * 1000)
    again = LineReader(grown, 0, scanned=reader.scanned)
    assert list(again) == [] and again.scanned == len(head) + 1000
    assert grown.read_bytes == 1000  # what the first reader saw is not read again
    data = head + b"x" * 1000 + b'"}\n{"b": 2}\n'
    whole = Counting(data)
    last = LineReader(whole, 0, scanned=again.scanned)
    assert [r.value for r in last] == [{"a": "x" * 4000}, {"b": 2}]
    assert last.end == last.scanned == len(data)
    assert whole.read_bytes == len(data)  # the rest once, and the head read back once


def test_a_line_too_long_to_hold_is_skipped_without_reading_its_head_back(tmp_path):
    from maxmem.capture.lines import MAX_LINE_BYTES

    path = tmp_path / "broken.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(MAX_LINE_BYTES + 10)  # zeros, no newline: looked at by an earlier run
        handle.seek(0, 2)
        handle.write(b'\n{"n": 1}\n')
    with open(path, "rb") as stream:
        reader = LineReader(stream, 0, scanned=MAX_LINE_BYTES + 10)
        assert [r.value for r in reader] == [{"n": 1}]
    assert reader.stats.malformed == 1 and reader.end == path.stat().st_size
