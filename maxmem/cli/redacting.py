"""`maxmem redact-test FILE`: what the redactor would take out of FILE, and why;
`maxmem scrub`: the same rules over what is already stored.
The rules are those of the config ([redact], docs/redact.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import InvalidInput
from ..files import open_regular, read_at_most
from ..redact import Redactor
from ..redact.report import describe, summary
from ..scrub import report_lines, scrub
from .common import State, emit, json_option, pass_state

MAX_BYTES = 64 * 1024 * 1024  # what redact-test reads: a device or a huge file is refused, not read on


def _read_bounded(file: Path) -> bytes:
    """FILE's bytes (- for stdin), at most MAX_BYTES of them (InvalidInput past that)."""
    try:
        if str(file) == "-":
            raw = read_at_most(sys.stdin.buffer, MAX_BYTES)
        else:
            with open_regular(file) as handle:  # a FIFO or a device is refused, never waited on
                raw = read_at_most(handle, MAX_BYTES)
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}") from None
    if raw is None:
        raise InvalidInput(f"{file} holds more than {MAX_BYTES // (1024 * 1024)} MiB: redact-test reads at most "
                           "that much; give it a part of the file")
    return raw


@click.command("redact-test")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--redacted", is_flag=True, help="Print FILE as it would be stored instead of the list.")
@click.option("--reveal", is_flag=True, help="Show each secret in full (default: its first characters).")
@json_option
@pass_state
def redact_test(state: State, file: Path, redacted: bool, reveal: bool, as_json: bool) -> None:
    """Show what would be removed from FILE (- for stdin) before storing, and why.

    Uses the built-in rules plus [redact] in the config (patterns, allow,
    secret_names, ignore_names), so a rule can be checked before it is trusted.
    Each line: LINE:COLUMN, the kind shown in [REDACTED:kind], the rule, a preview.
    """
    raw = _read_bounded(file)
    text = raw.decode("utf-8", "surrogateescape")  # undecodable bytes go through unchanged
    redactor = Redactor(state.config.redact, cache_size=0)
    if redacted:
        cleaned, _ = redactor.redact(text)
        sys.stdout.buffer.write(cleaned.encode("utf-8", "surrogateescape"))
        sys.stdout.flush()
        return
    findings = redactor.findings(text)
    rows = describe(text, findings, reveal)
    emit({"file": str(file), "findings": rows, "count": len(rows)}, as_json, lambda d: [
        *(f"{r['line']}:{r['column']}  {r['kind']}  {r['rule']}  {r['preview']}" for r in d["findings"]),
        summary(findings),
    ])


@click.command("scrub")
@click.option("--dry-run", is_flag=True, help="Change nothing; report what would be removed.")
@click.option("--no-copies", is_flag=True, help="Leave the retention archives and the backups alone.")
@json_option
@pass_state
def scrub_(state: State, dry_run: bool, no_copies: bool, as_json: bool) -> None:
    """Remove secrets already stored, with the current redaction rules.

    For a brain.db written by an older maxmem (before a rule for a key's shape existed)
    or with redact_on_remember off. Goes over the memories (content, title, tags,
    metadata), the neighbour windows, the change log (history), the captured turns,
    tool calls and sessions, the embeddings cache, the retention archives and the
    backups in [backup] dir; memories whose text changed are re-embedded (or left
    pending). Then the keyword index is optimized, brain.db vacuumed and its WAL
    emptied. Reports counts per place and kind, never the secrets. A PostgreSQL copy
    gets the scrubbed memories at the next  maxmem sync.
    """
    report = scrub(state.brain(), dry_run=dry_run, copies=not no_copies)
    emit(report.to_dict(), as_json, lambda _: report_lines(report))
    if report.failed:
        sys.exit(1)


COMMANDS = [redact_test, scrub_]
