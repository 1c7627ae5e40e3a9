"""Harness envelopes come off before triggers and storage; their time is only a hint.

The samples are the verbatim shapes OpenClaw's gateway and channels write (with the
right weekday: 2026-11-28 is a Saturday), the metadata blocks of the OpenClaw fixture
and a Claude Code system reminder, driven through the real readers, capture, the
triggers and save-context.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from maxmem import Brain, Clock
from maxmem.capture import CaptureSettings, run_capture
from maxmem.compaction import save_context
from maxmem.envelopes import strip
from maxmem.triggers.detect import detect

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
OPENCLAW = FIXTURES / "openclaw/agents/main/sessions/5e0c7a2d-91b4-4f3e-8c62-1d7f3a9b0e54.jsonl"
CLAUDE = FIXTURES / "claude-code/projects/-home-user-proj/7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61.jsonl"

# (envelope as written, stamp, UTC time or None when the zone names no single offset, sender)
DOC_SAMPLES = [
    ("[Provider ... 2026-01-05T21:26Z] ", "2026-01-05T21:26Z", "2026-01-05T21:26:00.000Z", "Provider ..."),
    ("[Signal Alice +1555 2026-01-18 00:19 PST] ", "2026-01-18 00:19 PST", None, "Signal Alice +1555"),
    ("[Signal Alice +1555 2026-01-18 06:19 GMT+1] ", "2026-01-18 06:19 GMT+1", "2026-01-18T05:19:00.000Z",
     "Signal Alice +1555"),
    ("[Signal Alice +1555 +2m 2026-01-18T05:19Z] ", "2026-01-18T05:19Z", "2026-01-18T05:19:00.000Z",
     "Signal Alice +1555"),
    ("[Provider ... Mon 2026-01-05 16:26:34 PST] ", "Mon 2026-01-05 16:26:34 PST", None, "Provider ..."),
    ("[WhatsApp +1555 Sun 2026-01-18 00:19:42 PST] ", "Sun 2026-01-18 00:19:42 PST", None, "WhatsApp +1555"),
    ("[Wed 2026-01-28 22:30 EST] ", "Wed 2026-01-28 22:30 EST", None, None),
    ("[Sat 2026-11-28 19:00 GMT+1] ", "Sat 2026-11-28 19:00 GMT+1", "2026-11-28T18:00:00.000Z", None),
    ("[Sat 2026-11-28 23:45 GMT+5:30] ", "Sat 2026-11-28 23:45 GMT+5:30", "2026-11-28T18:15:00.000Z", None),
    ("[Sat 2026-11-28 18:00 UTC] ", "Sat 2026-11-28 18:00 UTC", "2026-11-28T18:00:00.000Z", None),
]
REMEMBER = "remember that my passport expires in March 2027"


def test_samples_carry_the_right_weekday():
    assert date(2026, 11, 28).strftime("%a") == "Sat"
    assert date(2026, 1, 18).strftime("%a") == "Sun" and date(2026, 1, 28).strftime("%a") == "Wed"


@pytest.mark.parametrize(("envelope", "stamp", "at", "sender"), DOC_SAMPLES, ids=[s[1] for s in DOC_SAMPLES])
def test_every_documented_shape_comes_off(envelope, stamp, at, sender):
    found = strip(envelope + REMEMBER)
    assert found.text == REMEMBER
    assert (found.stamp, found.at, found.sender, found.removed) == (stamp, at, sender, ("timestamp",))
    # and the "remember that …" trigger fires on what is left
    [detection] = detect(envelope + REMEMBER)
    assert (detection.trigger, detection.text) == ("remember", REMEMBER)


def test_a_wrong_weekday_or_an_abbreviation_gives_no_time():
    assert strip("[Fri 2026-11-28 19:00 GMT+1] hi").at is None, "2026-11-28 is a Saturday"
    assert strip("[Sat 2026-11-28 19:00 CET] hi").at is None
    assert strip("[Sat 2026-11-28 19:00] hi").at is None
    assert strip("[Sat 2026-11-28 19:00 GMT+1] hi").text == "hi"


def test_text_that_only_looks_like_an_envelope_is_kept():
    for text in ("plain [2026-01-01 10:00] not at the start", "[x] a task box", "[see 2026-01-01] a link",
                 "no envelope at all", "[2026-11-28 19:00]no space after the bracket"):
        assert strip(text).text == text and not strip(text).changed


def test_an_envelope_alone_and_a_stamp_before_metadata():
    assert strip("[Sat 2026-11-28 19:00 GMT+1]").text == ""
    message = OPENCLAW_FIRST_USER_TEXT()
    both = strip("[Sat 2026-11-28 10:58 GMT+1] " + message)
    assert both.text.startswith("Kannst du meine Notizen von gestern zusammenfassen?")
    assert both.removed == ("timestamp", "metadata") and both.sender == "Lena Okafor"


def OPENCLAW_FIRST_USER_TEXT() -> str:
    first = next(json.loads(line) for line in OPENCLAW.read_text("utf-8").splitlines()
                 if '"role":"user"' in line)
    return first["message"]["content"][0]["text"]


def test_the_fixtures_metadata_blocks_give_the_sender_and_the_time():
    found = strip(OPENCLAW_FIRST_USER_TEXT())
    assert found.text.startswith("Kannst du meine Notizen von gestern zusammenfassen?")
    assert "untrusted metadata" not in found.text and "message_id" not in found.text
    assert (found.sender, found.stamp) == ("Lena Okafor", "Sat 2026-11-28 10:58 GMT+1")
    assert found.at == "2026-11-28T09:58:00.000Z"  # the entry says 09:58:13.431Z: a hint, floored


def test_system_reminders_and_cron_time_come_off():
    text = ("<system-reminder>\nThe user opened the file src/invoicer/dates.py in the IDE. This may or may "
            "not be related to the current task.\n</system-reminder>\n" + REMEMBER)
    assert strip(text).text == REMEMBER and strip(text).removed == ("system-reminder",)
    assert strip(REMEMBER + "\n<system-reminder>cut off mid-way").text == REMEMBER
    cron = "Run the weekly review.\nCurrent time: Wednesday, January 28th, 2026 — 10:30 PM"
    assert strip(cron).text == "Run the weekly review."


# --- through capture: the reader, the store and the triggers --------------------------


def openclaw_entry(entry_id: str, parent: str, at: str, role: str, text: str) -> dict:
    message: dict = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message.update(api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
                       stopReason="stop")
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": at, "message": message}


@pytest.fixture
def openclaw_home(tmp_path: Path) -> Path:
    """The OpenClaw fixture, continued by a Gateway turn and a channel turn with envelopes."""
    target = tmp_path / "openclaw/agents/main/sessions" / OPENCLAW.name
    target.parent.mkdir(parents=True)
    # the fixture ends in a line cut mid-way (a reply being written): keep its whole lines
    lines = OPENCLAW.read_text("utf-8").splitlines(keepends=True)
    whole = [line for line in lines if line.endswith("\n")]
    last = json.loads(whole[-1])["id"]
    extra = [
        # minutes floored to 5 by the Gateway: the entry's own time is 18:03:27Z
        openclaw_entry("e1000001", last, "2026-11-28T18:03:27.120Z", "user",
                       "[Sat 2026-11-28 19:00 GMT+1] " + REMEMBER),
        openclaw_entry("e1000002", "e1000001", "2026-11-28T18:03:29.000Z", "assistant",
                       "Notiert: dein Pass läuft im März 2027 ab."),
        openclaw_entry("e1000003", "e1000002", "2026-11-28T18:10:02.500Z", "user",
                       "[Signal Lena Okafor +4915 Sat 2026-11-28 19:10:01 GMT+1] I prefer tea over coffee "
                       "in the mornings"),
        openclaw_entry("e1000004", "e1000003", "2026-11-28T18:10:04.000Z", "assistant", "Tee, verstanden."),
    ]
    target.write_text("".join(whole) + "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in extra),
                      encoding="utf-8")
    return tmp_path


def test_openclaw_capture_stores_and_commits_without_the_envelope(openclaw_home, tmp_path, hash_embedder):
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=Clock()) as brain:
        run_capture(brain, settings=CaptureSettings(openclaw_dirs=(openclaw_home / "openclaw",),
                                                    claude_dirs=(), codex_dirs=(), settle_seconds=0))
        turns = brain.db.rows("SELECT text, created_at, speaker FROM turns WHERE role = 'user' ORDER BY seq")
        stored = {t["text"]: t for t in turns}
        assert REMEMBER in stored and stored[REMEMBER]["created_at"] == "2026-11-28T18:03:27.120Z"
        tea = "I prefer tea over coffee in the mornings"
        assert stored[tea]["speaker"] == "Signal Lena Okafor +4915"
        everything = "\n".join(t["text"] for t in turns) + "\n".join(
            m.content for m in brain.list(limit=1000))
        assert "GMT+1]" not in everything and "untrusted metadata" not in everything

        [remembered] = brain.list(category="core", kind="remember")
        assert remembered.content == REMEMBER
        assert remembered.created_at == "2026-11-28T18:03:27.120Z", "the transcript's time, not the envelope's"
        [preference] = brain.list(category="core", kind="preference")
        assert preference.content.startswith(tea)


def test_claude_code_system_reminder_is_not_stored_and_does_not_block_triggers(tmp_path, hash_embedder):
    line = json.loads(CLAUDE.read_text("utf-8").splitlines()[31])  # a plain user line of the fixture
    line["message"]["content"] = (
        "<system-reminder>\nThe user opened the file /home/user/proj/src/invoicer/dates.py in the IDE. "
        "This may or may not be related to the current task.\n</system-reminder>\n"
        "remember that we always run the tests with -x before committing")
    reply = {**line, "type": "assistant", "uuid": "2e8274ef-6d09-4e06-a093-e2a274f96e13",
             "parentUuid": line["uuid"], "timestamp": "2026-11-28T10:03:20.000Z",
             "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01Ab", "type": "message",
                         "role": "assistant", "content": [{"type": "text", "text": "Noted."}],
                         "stop_reason": "end_turn"}}
    path = tmp_path / "claude/projects/-home-user-proj" / CLAUDE.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(line) + "\n" + json.dumps(reply) + "\n", encoding="utf-8")
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=Clock()) as brain:
        run_capture(brain, paths=[path], format="claude-code", settings=CaptureSettings(settle_seconds=0))
        [turn] = brain.db.rows("SELECT text, created_at FROM turns WHERE role = 'user'")
        assert turn["text"] == "remember that we always run the tests with -x before committing"
        [remembered] = brain.list(category="core", kind="remember")
        assert remembered.created_at == line["timestamp"]
        assert "system-reminder" not in "\n".join(m.content for m in brain.list(limit=100))


def test_save_context_strips_the_envelope_and_keeps_its_time_as_a_hint(brain):
    doc = {"session_id": "agent:main:main", "exchanges": [
        {"user_message": "[Sat 2026-11-28 19:00 GMT+1] " + REMEMBER, "assistant_response": "Noted.",
         "timestamp": "2026-11-28T18:03:27.120Z"},
        {"user_message": "[Signal Lena +4915 Sat 2026-11-28 19:20 GMT+1] and the ID card too",
         "assistant_response": "Both noted."},  # no timestamp of its own
    ]}
    save_context(brain, doc)
    first, second = brain.list(category="conversation", order="oldest")
    assert first.content == f"User: {REMEMBER}\n\nAssistant: Noted."
    assert first.created_at == "2026-11-28T18:03:27.120Z"
    assert first.metadata["envelope"] == {"time": "Sat 2026-11-28 19:00 GMT+1"}
    assert second.content.startswith("User: and the ID card too")
    assert second.created_at == "2026-11-28T18:20:00.000Z", "no timestamp: the envelope's, read in its zone"
    assert second.metadata["envelope"] == {"time": "Sat 2026-11-28 19:20 GMT+1", "sender": "Signal Lena +4915"}
    assert save_context(brain, doc).exchanges_already_saved == 2, "the same document is known again"
