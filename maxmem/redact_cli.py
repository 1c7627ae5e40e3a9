"""`maxmem redact-test FILE`: what the redactor would take out of FILE, and why.
Registered on the `maxmem` group by cli.py."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli import Context, cli, emit, json_option, pass_state


@cli.command("redact-test")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--redacted", is_flag=True, help="Print FILE as it would be stored instead of the list.")
@click.option("--reveal", is_flag=True, help="Show each secret in full (default: its first characters).")
@json_option
@pass_state
def redact_test(state: Context, file: Path, redacted: bool, reveal: bool, as_json: bool) -> None:
    """Show what would be removed from FILE (- for stdin) before storing, and why.

    Uses the built-in rules plus [redact] in the config (patterns, allow,
    secret_names, ignore_names), so a rule can be checked before it is trusted.
    Each line: LINE:COLUMN, the kind shown in [REDACTED:kind], the rule, a preview.
    """
    from .redact import Redactor, RedactSettings
    from .redact.report import describe, summary

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
