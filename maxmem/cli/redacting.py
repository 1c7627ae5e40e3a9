"""`maxmem redact-test FILE`: what the redactor would take out of FILE, and why.
The rules are those of the config ([redact], docs/redact.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..redact import Redactor, RedactSettings
from ..redact.report import describe, summary
from .common import State, emit, json_option, pass_state


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
    raw = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    text = raw.decode("utf-8", "surrogateescape")  # undecodable bytes go through unchanged
    redactor = Redactor(RedactSettings.from_config(state.config), cache_size=0)
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


COMMANDS = [redact_test]
