"""The capture job: transcripts in, turns, tool calls and conversation memories out.

For each transcript file:
  1. stat it; skip it cheaply if (device, inode, size, mtime) match its cursor;
  2. decide where to start: at the cursor's offset when the file only grew; at 0
     when it shrank, its first line changed or its inode changed (a rewrite; the
     idempotency keys make re-reading harmless); a file that appears under a new
     name with a known inode takes over the old name's cursor (a rotation);
  3. read complete new lines (in windows of `window_bytes`), normalise, drop noise,
     keep only turns not stored yet, redact, chunk;
  4. in ONE transaction: sessions, turns, tool calls, memories and the cursor.

Capture stores first and embeds later: it never calls the embedding model for its
conversation memories. They are keyword-searchable as soon as the window commits
(hybrid search ranks a memory without a vector by its keyword score) and get their
vectors from `Brain.embed_pending` (`maxmem embed`, which the scheduled tick runs
right after capture), so a hook or a first run over months of transcripts is bound
by reading and writing, not by the model. (A vector already in the embeddings cache
is used at once.) Only the few core memories that commit triggers write (a decision,
a lesson: short texts) go through `Brain.remember_item`, which embeds them when the brain has
an embedder so that a restated decision updates the one stored; the hooks open
brain.db with the embedder off, so there nothing waits on the model at all.

Capture fails open: a file that cannot be read is reported and skipped, its cursor
untouched, and the run goes on (a cron job must never be broken by one bad file).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import iso, parse_time
from ..errors import DatabaseError, MaxmemError
from ..files import open_regular
from ..jobs.runs import record_run
from ..redact import Redactor
from ..triggers.commit import commit_new_turns
from . import openclaw_store, readers, store
from .chunker import ChunkTurn, chunk
from .lines import head_hash
from .model import CaptureFormatError, Parsed, ReadContext, ToolCall, Turn
from .roots import CaptureSettings, Source, agents_folders, describe_roots, discover, sources_for_path
from .text import truncate

if TYPE_CHECKING:
    from ..brain import Brain

log = logging.getLogger("maxmem")

SCANNED = "scanned_to"  # in a cursor's state: no newline from its offset up to this one
LEAD_TURNS = 2  # stored turns offered to the chunker as overlap for a run's first chunk
TITLE_CHARS = 120


@dataclass
class FileReport:
    path: str
    format: str
    status: str = "read"  # read, unchanged, new-name, skipped, error, would-read (dry run)
    start: int = 0
    end: int = 0
    new_turns: int = 0
    tool_calls: int = 0
    memories: int = 0
    redactions: int = 0
    skipped_lines: int = 0
    unknown_records: int = 0
    note: str | None = None


@dataclass
class CaptureReport:
    files: int = 0
    read: int = 0
    unchanged: int = 0
    new_turns: int = 0
    tool_calls: int = 0
    memories: int = 0
    redactions: int = 0
    skipped_lines: int = 0
    unknown_records: int = 0
    embedding_pending: int = 0  # memories in brain.db without a vector after the run
    errors: int = 0
    seconds: float = 0.0
    dry_run: bool = False
    stopped: bool = False  # the time budget ran out: the rest is read by the next run
    roots: list[str] = field(default_factory=list)  # where it looked (without --path)
    details: list[FileReport] = field(default_factory=list)

    def add(self, detail: FileReport) -> None:
        self.details.append(detail)
        self.files += 1
        self.read += detail.status in ("read", "would-read")
        self.unchanged += detail.status == "unchanged"
        self.errors += detail.status == "error"
        self.new_turns += detail.new_turns
        self.tool_calls += detail.tool_calls
        self.memories += detail.memories
        self.redactions += detail.redactions
        self.skipped_lines += detail.skipped_lines
        self.unknown_records += detail.unknown_records

    def summary(self) -> str:
        """The one line `maxmem capture` prints."""
        verb = "would add" if self.dry_run else "added"
        parts = [
            f"capture: {self.files} files ({self.read} read, {self.unchanged} unchanged)",
            f"{verb} {self.new_turns} turns and {self.memories} memories",
            f"{self.redactions} secrets redacted",
            f"{self.skipped_lines} bad lines skipped",
        ]
        if self.unknown_records:
            parts.append(f"{self.unknown_records} unknown records ignored")
        if self.embedding_pending:
            parts.append(f"{self.embedding_pending} memories wait for vectors (maxmem embed gives them)")
        if self.errors:
            parts.append(f"{self.errors} files failed")
        if self.stopped:
            parts.append("stopped at its time budget (the next run goes on from there)")
        line = ", ".join(parts) + f" in {self.seconds:.1f} s"
        if not self.files and self.roots:
            line += "; looked in " + ", ".join(self.roots)
        return line

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Conflict(Exception):
    """Another writer changed this file's cursor or session meanwhile: read again."""


@dataclass
class _Batch:
    turns: list[tuple[Turn, int]] = field(default_factory=list)  # new turns with their seq
    calls: list[tuple[str, ToolCall]] = field(default_factory=list)  # standalone calls
    items: list[dict[str, Any]] = field(default_factory=list)  # conversation memories
    max_seqs: dict[str, int] = field(default_factory=dict)
    redactions: int = 0


def run_capture(
    brain: Brain,
    paths: Sequence[str | Path] | None = None,
    format: str | None = None,
    dry_run: bool = False,
    settings: CaptureSettings | None = None,
    progress: Callable[[CaptureReport, int, int], None] | None = None,
    deadline: float | None = None,
    record_as: str = "capture",
    sources: Sequence[Source] | None = None,
) -> CaptureReport:
    """Capture new transcript lines into `brain`; returns what was done.

    paths: files or folders to read instead of the configured roots (with `format`,
    or each file's format guessed). dry_run: read and count, write nothing.
    progress(report, done, total): called after each of the `total` transcripts found
    (`report` holds the counts so far).
    deadline: a time.monotonic() value; files are taken oldest first and each is
    committed window by window (settings.window_bytes), and once the deadline has
    passed no further window starts (the first one always does, so every run makes
    progress): the cursors keep the place for the next run.
    record_as: the job name its run is recorded under for `maxmem doctor` and the
    due-logic ("hook:claude-code" for a hook's one-transcript capture, so it does not
    count as the scheduled capture of every root).
    sources: the transcripts to read, as found already (an OpenClaw hook's one
    session in its store), instead of `paths` or the roots.
    """
    started = time.monotonic()
    settings = settings or agents_folders(brain.config.capture)
    report = CaptureReport(dry_run=dry_run)
    if sources:
        sources = list(sources)
    elif paths:
        sources = [s for p in paths for s in sources_for_path(Path(p), format)]
    else:
        sources = discover(settings)
        report.roots = describe_roots(settings) + openclaw_store.describe(settings.openclaw_dirs or ())
    job = _Job(brain, settings, dry_run, deadline)
    ordered = _by_mtime(sources)
    for done, source in enumerate(ordered, start=1):
        if report.details and job.out_of_time():  # at least one window per run: progress
            report.stopped = True
            break
        detail = job.capture_file(source)
        if detail is not None:
            report.add(detail)
        if progress:
            progress(report, done, len(ordered))
    if not dry_run:
        report.embedding_pending = brain.pending_count()
    report.stopped = report.stopped or job.stopped
    report.seconds = time.monotonic() - started
    log.debug("%s", report.summary())  # the caller prints or logs it (the daemon: once)
    if not dry_run:  # for `maxmem doctor`: when capture last ran and whether it worked
        record_run(brain.db, record_as, report.errors == 0, report.summary(), brain.clock)
    return report


def _by_mtime(sources: list[Source]) -> list[Source]:
    def mtime(source: Source) -> float:
        try:
            return source.path.stat().st_mtime
        except OSError:
            return 0.0
    # Archives first: a rotated file's tail is read under its new name before the
    # fresh file that took its old name claims the path.
    return sorted(sources, key=lambda s: (not s.archived, mtime(s), str(s.path)))


def capture_redactor(brain: Brain, settings: CaptureSettings) -> Redactor:
    """The brain's redactor ([redact] and [capture] redact_patterns), or one with the
    extra patterns of settings made elsewhere. Capture redacts even when
    redact_on_remember is off: turns and tool calls are raw text no one reviewed."""
    mine = {p.pattern for p in brain.redactor.settings.patterns}
    if set(settings.redact_patterns) <= mine:
        return brain.redactor  # its cache also serves Brain's redaction of the same chunks
    return Redactor(brain.redactor.settings.with_patterns(settings.redact_patterns))


class _Job:
    def __init__(self, brain: Brain, settings: CaptureSettings, dry_run: bool,
                 deadline: float | None = None) -> None:
        self.brain = brain
        self.db = brain.db
        self.settings = settings
        self.dry_run = dry_run
        self.deadline = deadline
        self.stopped = False
        self.redactor = capture_redactor(brain, settings)

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    # -- one file --------------------------------------------------------------------------
    def capture_file(self, source: Source) -> FileReport | None:
        path = os.path.abspath(source.path)
        if openclaw_store.is_store(path):
            return self.capture_store(source, path)
        detail = FileReport(path=path, format=source.format)
        for _ in range(3):
            try:
                return self._capture(source, path, detail)
            except _Conflict:
                log.info("capture: %s changed under another writer; reading it again", path)
                detail = FileReport(path=path, format=source.format)
            except Exception as exc:  # fail open: one bad file never stops the run
                log.debug("capture: %s failed", path, exc_info=True)
                return self._failed(path, detail, exc)
        detail.status, detail.note = "skipped", "kept changing under another writer; next run"
        return detail

    def capture_store(self, source: Source, path: str) -> FileReport:
        """An OpenClaw store: each session with rows past its cursor, as a transcript of
        its own (maxmem.capture.openclaw_store); one report for the store."""
        detail = FileReport(path=path, format=source.format, status="unchanged")
        try:
            with openclaw_store.open_store(path) as opened:
                for looked, session in enumerate(opened.ordered(source.session)):
                    if looked and self.out_of_time():  # the first one always: progress
                        self.stopped = True
                        detail.note = "stopped at the time budget; the rest next run"
                        break
                    self._store_session(opened, session, detail)
        except openclaw_store.StoreError as exc:
            detail.status, detail.note = "skipped", str(exc)
            log.warning("capture: %s", exc)  # its one line; the store is read again next run
            return detail
        except Exception as exc:  # fail open: one bad store never stops the run
            log.debug("capture: %s failed", path, exc_info=True)
            return self._failed(path, detail, exc)
        if detail.new_turns or detail.end:
            detail.status = "would-read" if self.dry_run else "read"
        return detail

    def _store_session(self, opened: openclaw_store.Store, session: openclaw_store.StoreSession,
                       detail: FileReport) -> None:
        """Read one store session past its cursor (its last seq read); `detail.end` counts
        the rows read."""
        key = opened.key(session.session_id)
        for _ in range(3):
            cursor = store.get_cursor(self.db, key)
            after, state = (cursor.byte_offset, dict(cursor.state)) if cursor is not None else (-1, {})
            if after == session.head:
                return
            if after > session.head:  # rewritten (a rewind): again from the start, known ids skipped
                after, state = -1, {}
            expected = (cursor.byte_offset, _copy(cursor.state)) if cursor is not None else None
            lineage = opened.lineage(session.session_id)
            try:
                for window in opened.windows(session, after, state, self.settings.tool_result_chars,
                                             iso(self.brain.clock.now())):
                    openclaw_store.drop_copies(self.db, window.parsed, lineage)
                    new_cursor = store.Cursor(path=key, format="openclaw", device=None, inode=None,
                                              size=window.end, mtime_ns=None, head_hash=None,
                                              byte_offset=window.end, settled=True,
                                              state=_copy(window.parsed.state))
                    expected = self._window(window.parsed, new_cursor, expected, None, window.skipped, detail)
                    detail.end += window.end - after
                    after = window.end
                    if self.out_of_time():
                        self.stopped = True
                        break
                return
            except _Conflict:
                log.info("capture: %s changed under another writer; reading it again", key)

    def _failed(self, path: str, detail: FileReport, exc: BaseException) -> FileReport:
        message = f"{exc.__class__.__name__}: {exc}" if not isinstance(exc, MaxmemError) else str(exc)
        detail.status, detail.note = "error", message
        # info, not warning: the report carries it and `maxmem capture` prints it once
        log.info("capture: %s: %s", path, message)
        if isinstance(exc, DatabaseError) or self.dry_run:
            return detail
        try:
            store.set_error(self.db, path, message)
        except MaxmemError:
            pass
        return detail

    def _capture(self, source: Source, path: str, detail: FileReport) -> FileReport | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None  # vanished between discovery and now: nothing to do
        cursor = store.get_cursor(self.db, path)
        renamed_from = None
        if cursor is None:
            cursor = self._renamed(path, st)
            if cursor is not None:
                renamed_from = cursor.path
                detail.note = f"renamed from {renamed_from}"
        if cursor is None and source.archived and not openclaw_store.followed(self.db, path):
            return None  # an archive capture never followed: not a live transcript
        if cursor is not None and renamed_from is None and _unchanged(cursor, st):
            detail.status, detail.start = "unchanged", cursor.byte_offset
            detail.end = cursor.byte_offset
            return detail

        with open_regular(path, readers.TRANSCRIPT) as stream:  # a FIFO swapped in since: refused, not waited on
            opened = os.fstat(stream.fileno())
            head = head_hash(stream)
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
            raise _Conflict  # replaced between the stat and the open: look again
        fmt = source.format
        # A compressed rollout is replaced, never appended to: read whole, like a document.
        document = readers.is_document_format(fmt) or readers.is_compressed(path)
        state: dict[str, Any]
        if cursor is None or document:
            offset, state = 0, {}
        elif (cursor.inode != st.st_ino and renamed_from is None) or st.st_size < cursor.byte_offset \
                or (cursor.head_hash and cursor.head_hash != head) or cursor.format != fmt:
            offset, state = 0, {}
            detail.note = "rewritten: read again from the start"
        else:
            offset, state = cursor.byte_offset, dict(cursor.state)
        scanned = state.pop(SCANNED, offset)
        if document or not isinstance(scanned, int) or not offset <= scanned <= st.st_size:
            scanned = offset  # (a shrunk file's partial line is looked at again)
        if document and cursor is not None and cursor.byte_offset and detail.note is None:
            detail.note = "changed: read again whole"
        detail.start = offset
        idle = (self.brain.clock.now().timestamp() - st.st_mtime) >= self.settings.settle_seconds
        mtime_iso = iso(parse_time(st.st_mtime))
        expected = (cursor.byte_offset, _copy(cursor.state)) if cursor is not None else None

        while True:
            before = offset
            limit = st.st_size if document else min(st.st_size, offset + self.settings.window_bytes)
            result = self._read(path, fmt, offset, state, mtime_iso, limit, idle and limit >= st.st_size, scanned)
            if result.end <= before and limit < st.st_size:  # a line (or response) longer than a window
                limit = st.st_size
                result = self._read(path, fmt, offset, state, mtime_iso, limit, idle, result.scanned)
            if result.stats.stopped:  # the time ran out inside the line: looked at up to `scanned`
                limit = result.scanned
            parsed = result.parsed
            new_cursor = store.Cursor(
                path=path, format=fmt, device=st.st_dev, inode=st.st_ino, size=limit,
                mtime_ns=st.st_mtime_ns, head_hash=head, byte_offset=result.end,
                settled=idle and limit >= st.st_size, state=_with_scanned(parsed.state, result),
            )
            expected = self._window(parsed, new_cursor, expected, renamed_from, result.stats.malformed, detail)
            renamed_from = None
            offset, state, scanned = result.end, _copy(parsed.state), result.scanned
            if limit >= st.st_size or offset <= before:
                if result.stats.stopped:
                    self.stopped = True
                    detail.note = "stopped at the time budget inside one long line; the next run looks on"
                break
            if self.out_of_time():  # the cursor is saved at `offset`: the next run goes on
                self.stopped = True
                detail.note = "stopped at the time budget; the rest next run"
                break
        detail.end = offset
        if detail.end == detail.start and not detail.new_turns:
            detail.status = "unchanged"  # only a partial line or a held-back response waits
        elif self.dry_run:
            detail.status = "would-read"
        log.info("capture: %s: %d new turns, %d memories", path, detail.new_turns, detail.memories)
        return detail

    def _window(self, parsed: Parsed, cursor: store.Cursor, expected: tuple[int, dict[str, Any]] | None,
                renamed_from: str | None, skipped: int, detail: FileReport) -> tuple[int, dict[str, Any]] | None:
        """Store one window's new turns with its cursor (not in a dry run) and count them;
        returns the cursor's (offset, state) the next window expects to find."""
        batch = self._prepare(parsed, cursor.path, cursor.format)
        if not self.dry_run:
            self._commit(batch, parsed, cursor, expected, renamed_from, cursor.path, skipped)
            expected = (cursor.byte_offset, _copy(cursor.state))
            self._commit_triggers(batch, parsed)
        # Counted once stored: a window whose commit failed (a locked brain.db) is not.
        detail.skipped_lines += skipped
        detail.unknown_records += sum(parsed.unknown.values())
        detail.new_turns += len(batch.turns)
        detail.tool_calls += sum(len(t.tool_calls) for t, _ in batch.turns if t.role != "tool") \
            + len(batch.calls)
        detail.memories += len(batch.items)
        detail.redactions += batch.redactions
        return expected

    def _commit_triggers(self, batch: _Batch, parsed: Parsed) -> None:
        """The six commit triggers in the turns just stored become core memories
        (maxmem.triggers; after the turns' transaction, and failing open)."""
        if not batch.turns:
            return
        turns = [{"role": t.role, "content": t.text, "key": t.key, "session_id": t.session_id,
                  "agent": getattr(parsed.sessions.get(t.session_id), "agent", None), "at": t.timestamp}
                 for t, _ in batch.turns]
        try:
            result = commit_new_turns(self.brain, turns)
        except Exception as exc:  # the turns are stored; triggers must not fail the file
            log.warning("capture: committing triggers failed: %s", exc)
            log.debug("capture: triggers failed", exc_info=True)
            return
        if result["detections"]:
            log.info("capture: %d triggers: %d added to core, %d updated", result["detections"],
                     result["added"], result["updated"])

    def _renamed(self, path: str, st: os.stat_result) -> store.Cursor | None:
        """The cursor of a file that was renamed to `path` (same inode, old name gone)."""
        for old in store.cursors_by_inode(self.db, st.st_dev, st.st_ino, path):
            try:
                still_there = os.stat(old.path).st_ino == st.st_ino
            except OSError:
                still_there = False
            if not still_there:
                return old
        return None

    def _read(self, path: str, fmt: str, offset: int, state: dict[str, Any], mtime_iso: str,
              limit: int, final: bool, scanned: int) -> readers.ReadResult:
        ctx = ReadContext(path, mtime_iso, final=final, tool_result_chars=self.settings.tool_result_chars,
                          deadline=self.deadline)
        try:
            return readers.read(path, fmt, offset, state, ctx, limit, scanned)
        except CaptureFormatError:
            raise
        except UnicodeError as exc:
            raise CaptureFormatError(f"cannot decode ({exc})") from None

    # -- turning records into rows -----------------------------------------------------------
    def _prepare(self, parsed: Parsed, path: str, fmt: str) -> _Batch:
        """Keep only turns not stored yet; redact; number; chunk. Reads, never writes."""
        batch = _Batch()
        stored_fingerprints = store.existing_fingerprints(self.db, [t.fingerprint for t in parsed.turns])
        by_session: dict[str, list[Turn]] = defaultdict(list)
        for turn in parsed.turns:
            by_session[turn.session_id].append(turn)
        seen_fingerprints: set[str] = set()
        calls_here: dict[tuple[str, str], ToolCall] = {}
        for session_id, turns in by_session.items():
            stored_keys = store.existing_keys(self.db, session_id, [t.key for t in turns])
            seen_keys: set[str] = set()
            seq = batch.max_seqs[session_id] = store.max_seq(self.db, session_id)
            for turn in turns:
                if (turn.key in stored_keys or turn.key in seen_keys or turn.fingerprint in stored_fingerprints
                        or turn.fingerprint in seen_fingerprints):
                    continue
                seen_keys.add(turn.key)
                seen_fingerprints.add(turn.fingerprint)
                turn.text, n = self.redactor.redact_json(turn.text)
                batch.redactions += n
                for call in turn.tool_calls:
                    batch.redactions += self._redact_call(call)
                    if turn.role != "tool":  # the issuing half, with name and arguments
                        calls_here[(session_id, call.call_id)] = call
                seq += 1
                batch.turns.append((turn, seq))
        stored_calls: dict[str, set[str]] = defaultdict(set)
        for session_id, call in parsed.calls:
            known = stored_calls.get(session_id)
            if known is None:
                known = stored_calls[session_id] = set(store.known_calls(
                    self.db, session_id, [c.call_id for s, c in parsed.calls if s == session_id]))
            n = self._redact_call(call)
            if call.call_id not in known:
                batch.redactions += n
            calls_here[(session_id, call.call_id)] = call
            batch.calls.append((session_id, call))
        for session in parsed.sessions.values():
            if session.title:
                session.title, _ = self.redactor.redact(session.title)
                session.title = truncate(session.title, TITLE_CHARS)
            if session.cwd:
                session.cwd, _ = self.redactor.redact(session.cwd)
        batch.items = self._memories(batch, parsed, path, fmt, calls_here)
        return batch

    def _redact_call(self, call: ToolCall) -> int:
        """Secrets out of a call's arguments (JSON text: decoded, redacted, encoded again,
        so an escaped secret is found) and result, before the arguments are cut to their length limit (a
        secret cut in two would no longer be recognised)."""
        count = 0
        if call.arguments:
            arguments, n = self.redactor.redact_json(call.arguments)
            call.arguments = truncate(arguments, self.settings.tool_argument_chars)
            count += n
        if call.result:
            call.result, n = self.redactor.redact_json(call.result)
            count += n
        return count

    def _memories(self, batch: _Batch, parsed: Parsed, path: str, fmt: str,
                  calls_here: dict[tuple[str, str], ToolCall]) -> list[dict[str, Any]]:
        by_session: dict[str, list[ChunkTurn]] = defaultdict(list)
        missing: dict[str, list[str]] = defaultdict(list)
        for turn, seq in batch.turns:
            item = ChunkTurn(seq=seq, role=turn.role, text=turn.text, timestamp=turn.timestamp,
                             entry_ids=list(turn.entry_ids), speaker=turn.speaker)
            if turn.role == "tool" and turn.tool_calls:
                result = turn.tool_calls[0]
                call = calls_here.get((turn.session_id, result.call_id))
                item.tool_status = result.status
                item.tool_name = result.name or (call.name if call else None)
                item.tool_arguments = call.arguments if call and call is not result else None
                if item.tool_name is None or item.tool_arguments is None:
                    missing[turn.session_id].append(result.call_id)
            else:
                item.calls = [(c.name, c.arguments) for c in turn.tool_calls]
            by_session[turn.session_id].append(item)
        # Results whose call was read in an earlier run: name and arguments from the table.
        for session_id, call_ids in missing.items():
            known = store.known_calls(self.db, session_id, call_ids)
            wanted = set(call_ids)
            for item, (turn, _) in zip(by_session[session_id],
                                       [(t, s) for t, s in batch.turns if t.session_id == session_id]):
                if item.role == "tool" and turn.tool_calls and turn.tool_calls[0].call_id in wanted:
                    row = known.get(turn.tool_calls[0].call_id)
                    if row:
                        item.tool_name = item.tool_name or row["name"]
                        item.tool_arguments = item.tool_arguments or row["arguments"]
        items: list[dict[str, Any]] = []
        for session_id, turns in by_session.items():
            session = parsed.sessions[session_id]
            lead = store.last_turns(self.db, session_id, LEAD_TURNS)
            for piece in chunk(turns, self.settings.chunk_tokens, self.settings.overlap_tokens,
                               lead=lead):
                items.append({
                    "content": piece.text,
                    "category": "conversation",
                    "kind": "exchange",
                    "title": session.title,
                    "tags": ["capture", fmt],
                    "importance": self.settings.importance,
                    "created_at": piece.started_at,
                    "source": "capture",
                    "agent": session.agent,
                    "session_id": session_id,
                    "metadata": {
                        "session_id": session_id,
                        "agent": session.agent,
                        "format": fmt,
                        "turn_range": [piece.first_seq, piece.last_seq],
                        "entry_ids": piece.entry_ids,
                        "source_file": path,
                        "ended_at": piece.ended_at,
                    },
                })
        return items

    # -- storing ----------------------------------------------------------------------------
    def _commit(self, batch: _Batch, parsed: Parsed, cursor: store.Cursor,
                expected: tuple[int, dict[str, Any]] | None, renamed_from: str | None, path: str,
                skipped: int) -> None:
        now = iso(self.brain.clock.now())
        with self.db.atomic():
            current = store.get_cursor(self.db, renamed_from or path)
            found = (current.byte_offset, current.state) if current is not None else None
            if found != expected:
                raise _Conflict()
            for session_id, seq in batch.max_seqs.items():
                if store.max_seq(self.db, session_id) != seq:
                    raise _Conflict()
            if renamed_from is not None:
                store.rename_cursor(self.db, renamed_from, path)
            new_by_session: dict[str, int] = defaultdict(int)
            last_time: dict[str, str] = {}
            for turn, _ in batch.turns:
                new_by_session[turn.session_id] += 1
                last_time[turn.session_id] = max(last_time.get(turn.session_id, ""), turn.timestamp)
            for session in parsed.sessions.values():
                store.upsert_session(self.db, session, source_file=path,
                                     updated_at=last_time.get(session.id),
                                     new_turns=new_by_session.get(session.id, 0))
            for turn, seq in batch.turns:
                turn_id = store.insert_turn(self.db, turn, seq, path)
                if turn_id is None:
                    log.debug("capture: turn %s of %s already stored", turn.key, turn.session_id)
                    continue
                for call in turn.tool_calls:
                    store.upsert_call(self.db, turn.session_id, call, turn_id)
            for session_id, call in batch.calls:
                store.upsert_call(self.db, session_id, call, None)
            if batch.items:  # stored first, embedded later (embed_pending): see the docstring
                # A chunk is the record of what was said when (its turns, its time): one
                # that restates an earlier chunk is kept beside it, not folded into it.
                self.brain.remember_many(batch.items, embed=False, near=False)
            store.save_cursor(self.db, cursor, turns=len(batch.turns), skipped=skipped, now=now)


def _with_scanned(state: dict[str, Any], result: readers.ReadResult) -> dict[str, Any]:
    """The state a cursor keeps: the reader's, and how far past the cursor's offset the
    file holds no newline when that is further (the next run looks on from there)."""
    kept = _copy(state)
    if result.scanned > result.end:
        kept[SCANNED] = result.scanned
    return kept


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    """A deep copy through JSON: what the cursor row will hold."""
    return json.loads(json.dumps(state, sort_keys=True))


def _unchanged(cursor: store.Cursor, st: os.stat_result) -> bool:
    """Nothing to do: same file, same size and time, and nothing held back for later."""
    same = (cursor.device, cursor.inode, cursor.size, cursor.mtime_ns) == (
        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    return same and (cursor.settled or cursor.byte_offset >= st.st_size)
