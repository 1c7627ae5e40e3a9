"""Retention's reports as text: a run's one line for cron logs, the dry run's lines, and
the growth table."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def summary(report: Mapping[str, Any]) -> str:
    """One line for cron logs."""
    parts = [f"{c} {n}" for c, n in report["deleted"].items() if n]
    text = f"retention: deleted {report['deleted_total']} memories"
    if parts:
        text += f" ({', '.join(parts)})"
    turns = report.get("transcripts") or {}
    if turns.get("turns") or turns.get("tool_calls"):
        text += f", {turns.get('turns', 0)} turns and {turns.get('tool_calls', 0)} tool calls"
    files = report.get("archives") or ([report["archive"]] if report.get("archive") else [])
    text += f"; archived {report['archived']} rows"
    if len(files) == 1:
        text += f" to {files[0]}"
    elif files:
        text += f" to {len(files)} files ({files[0]} … {Path(files[-1]).name})"
    resumed = report.get("resumed") or {}
    if resumed.get("archives"):
        text += (f"; finished an interrupted run ({resumed['memories']} memories already archived "
                 f"in {len(resumed['archives'])} file(s), now deleted)")
    if report["archives_pruned"]:
        text += f"; pruned {len(report['archives_pruned'])} old archive(s)"
    freed = report["size_before"] - report["size_after"]
    if report["vacuumed"]:
        text += f"; vacuumed, freed {freed / 1e6:.1f} MB"
    return text


def plan_lines(result: Mapping[str, Any]) -> list[str]:
    """The dry run as lines of text."""
    lines = [(f"dry run at {result['now']} ({result['timezone']}): "
              f"{result['expired']} memories would go, {result['expired_bytes'] / 1e6:.2f} MB "
              "(run with --apply to archive and delete them)")]
    for category, c in result["categories"].items():
        keep = "forever" if c["keep_days"] is None else f"{c['keep_days']:g} days"
        line = f"  {category:<12} keep {keep:<10} {c['count']:>7} memories {c['bytes'] / 1e6:>8.2f} MB"
        if c["cutoff"]:
            line += f"   expired {c['expired']:>6} ({c['expired_bytes'] / 1e6:.2f} MB), before {c['cutoff'][:10]}"
            if c["protected"]:
                line += f", {c['protected']} pinned/trigger kept"
        lines.append(line)
    if result["transcripts"]:
        t = result["transcripts"]
        lines.append(f"  transcripts: {t['turns']} turns and {t['tool_calls']} tool calls would go")
    if result["oldest"]:
        lines.append("  oldest that would go:")
        for item in result["oldest"]:
            lines.append(f"    #{item['id']} {item['created_at'][:10]} {item['category']}/{item['kind']}: "
                         f"{item['text']}")
    for archive_path in result.get("interrupted", []):
        lines.append(f"  an interrupted run was writing {archive_path}: --apply finishes it first")
    for archive_path in result["archives_to_prune"]:
        lines.append(f"  old archive that would be removed: {archive_path}")
    return lines


def growth_lines(result: Mapping[str, Any]) -> list[str]:
    months = result["months"]
    lines = [f"memories created per month since {result['since'][:10]} (and total now):"]
    lines.append(f"  {'category':<13}" + "".join(f"{m:>9}" for m in months) + f"{'total':>10}")
    for category, per in result["per_month"].items():
        cells = "".join(f"{per.get(m, {}).get('memories', 0):>9}" for m in months)
        lines.append(f"  {category:<13}{cells}{result['totals'][category]['memories']:>10}")
    return lines
