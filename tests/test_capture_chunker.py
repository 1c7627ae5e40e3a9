"""Chunking turns into conversation memories."""

from __future__ import annotations

from maxmem.capture.chunker import ChunkTurn, chunk, estimate_tokens, render


def turn(seq, role, text, **kw):
    return ChunkTurn(seq=seq, role=role, text=text, timestamp=f"2026-11-28T10:00:{seq:02d}.000Z",
                     entry_ids=[f"e{seq}"], **kw)


def sentence(n: int, word: str = "memory") -> str:
    return " ".join(f"{word}{i}" for i in range(n)) + "."


def test_short_session_is_one_chunk():
    turns = [turn(1, "user", "What port does the API use?"), turn(2, "assistant", "Port 8080.")]
    (only,) = chunk(turns)
    assert only.text == "user: What port does the API use?\n\nassistant: Port 8080."
    assert (only.first_seq, only.last_seq) == (1, 2)
    assert only.entry_ids == ["e1", "e2"]
    assert only.started_at == "2026-11-28T10:00:01.000Z" and only.ended_at == "2026-11-28T10:00:02.000Z"


def test_turns_are_not_split_and_chunks_overlap_by_the_last_turn():
    turns = [turn(i, "user" if i % 2 else "assistant", sentence(40, f"w{i}x")) for i in range(1, 13)]
    chunks = chunk(turns, target_tokens=350, overlap_tokens=85, max_tokens=480)
    assert 45 < estimate_tokens(render(turns[0])) < 80  # so exactly one turn fits the overlap
    assert len(chunks) > 2
    for c in chunks:
        assert estimate_tokens(c.text) <= 480
        for t in turns:  # a turn is either wholly in a chunk or not at all
            rendered = render(t)
            assert rendered in c.text or rendered[:40] not in c.text
    for previous, following in zip(chunks, chunks[1:]):
        assert following.first_seq == previous.last_seq  # one turn of overlap
    covered = {seq for c in chunks for seq in c.seqs}
    assert covered == set(range(1, 13))


def test_a_very_long_turn_is_split_at_paragraphs():
    paragraphs = [sentence(60, f"p{i}x") for i in range(8)]
    chunks = chunk([turn(1, "assistant", "\n\n".join(paragraphs))], target_tokens=350, max_tokens=480)
    assert len(chunks) > 1
    assert all(estimate_tokens(c.text) <= 480 for c in chunks)
    joined = " ".join(c.text for c in chunks)
    assert all(p in joined for p in paragraphs)  # every paragraph survives whole
    assert all(c.first_seq == c.last_seq == 1 for c in chunks)


def test_a_text_without_breaks_is_still_bounded():
    chunks = chunk([turn(1, "tool", "x" * 10000, tool_name="cat")], target_tokens=100, max_tokens=120)
    assert all(estimate_tokens(c.text) <= 130 for c in chunks)


def test_tool_results_are_rendered_truncated_with_call():
    output = "CONTAINER ID   PORTS\n" + "\n".join(f"c{i}   0.0.0.0:{5400 + i}->5432/tcp" for i in range(200))
    text = render(turn(3, "tool", output, tool_name="bash", tool_arguments='{"command": "docker ps"}',
                       tool_status="ok"))
    assert text.startswith("tool bash(command=docker ps): CONTAINER ID")
    assert "0.0.0.0:5400->5432/tcp" in text  # the head survives
    assert "0.0.0.0:5599->5432/tcp" in text  # and the tail
    assert len(text) < 1000
    failed = render(turn(4, "tool", "boom", tool_name="bash", tool_status="error"))
    assert failed == "tool bash (error): boom"


def test_assistant_calls_and_speakers_are_rendered():
    text = render(turn(2, "assistant", "Reading it.", calls=[("read", '{"path": "notes/a.md"}')]))
    assert text == "assistant: Reading it.\n→ read(path=notes/a.md)"
    assert render(turn(1, "user", "hallo", speaker="Lena")) == "user (Lena): hallo"


def test_estimate_counts_cjk_heavier_than_ascii():
    assert estimate_tokens("abcd" * 100) == 100
    assert estimate_tokens("火曜日" * 100) > 200


def test_lead_turns_give_overlap_but_no_chunk_of_their_own():
    lead = [turn(1, "user", "What port does the API use?")]
    (only,) = chunk([turn(2, "assistant", "Port 8080.")], lead=lead)
    assert only.text == "user: What port does the API use?\n\nassistant: Port 8080."
    assert (only.first_seq, only.last_seq) == (1, 2)
    assert chunk([], lead=lead) == []
    long_lead = [turn(1, "user", sentence(200))]  # too long to repeat: left out
    (alone,) = chunk([turn(2, "assistant", "Port 8080.")], lead=long_lead)
    assert alone.text == "assistant: Port 8080."
