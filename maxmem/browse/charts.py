"""The charts page: how the brain grows and what it weighs, drawn as SVG by pygal.

pygal is made for exactly this (SVG charts from Python, pure Python, maintained);
its SVG goes inline into the page. Its default tooltips script is fetched from the
web, so it is turned off (`js=[]`): the page works offline and loads nothing but
itself; values are printed on the bars instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pygal
from pygal.style import Style

from ..brain import Brain
from ..doctor import CATEGORY_SIZES_SQL
from ..memory import CATEGORIES
from ..retention.stats import growth
from .views import snapshot

COLOURS = ("#1f6f8b", "#99a8b2", "#e6a157", "#8a5a83", "#3b3b3b", "#b9c9a3", "#e0e0e0")
# core, daily, conversation, project; then vectors, the rest, free pages (the size chart)
STYLE = Style(background="white", plot_background="white", foreground="#333",
              foreground_strong="#111", foreground_subtle="#ccc", colors=COLOURS,
              font_family="Helvetica, Arial, sans-serif", title_font_size=16, label_font_size=11,
              legend_font_size=12, value_font_size=10)
COMMON: dict[str, Any] = {"style": STYLE, "js": [], "disable_xml_declaration": True, "width": 760,
                              "height": 320, "legend_at_bottom": True, "legend_at_bottom_columns": 4,
                              "print_values": False, "explicit_size": True}


def human(size: float) -> str:
    """Bytes as people read them: 812 B, 14.2 KB, 3.1 MB, 1.20 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.{2 if unit == 'GB' else 1}f} {unit}"
    return f"{size:.0f} B"


def month_names(since: str, now: datetime) -> list[str]:
    """Every month from `since` (ISO) to `now`, as YYYY-MM, none skipped."""
    year, month = int(since[:4]), int(since[5:7])
    out = []
    while (year, month) <= (now.year, now.month):
        out.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def growth_chart(data: Mapping[str, Any], now: datetime) -> str:
    """Memories stored now, per category, by the month they were made (stacked), and
    the running total as a line of its own chart below."""
    months = month_names(data["since"], now)
    chart = pygal.StackedBar(title="Memories per category, by month created", x_label_rotation=0,
                             **COMMON)
    chart.x_labels = months
    for category in CATEGORIES:
        per = data["per_month"].get(category, {})
        chart.add(category, [per.get(m, {}).get("memories", 0) for m in months])
    return str(chart.render(is_unicode=True))


def total_chart(data: Mapping[str, Any], now: datetime) -> str:
    """The number of memories stored, per category, at the end of each month (of those
    still stored: retention's deletions are not in brain.db any more)."""
    months = month_names(data["since"], now)
    chart = pygal.StackedLine(title="Memories stored (still kept), end of each month", fill=True,
                              **COMMON)
    chart.x_labels = months
    for category in CATEGORIES:
        per = data["per_month"].get(category, {})
        later = sum(v.get("memories", 0) for v in per.values())
        before = data["totals"].get(category, {}).get("memories", 0) - later
        running, series = before, []
        for m in months:
            running += per.get(m, {}).get("memories", 0)
            series.append(running)
        chart.add(category, series)
    return str(chart.render(is_unicode=True))


def size_chart(size: Mapping[str, Any], vector_bytes: int) -> str:
    """What brain.db holds: the text of each category, the vectors, and the rest
    (indexes, keyword index, transcripts, change log, embeddings cache), free pages."""
    text = {c: size["categories"].get(c, {}).get("text_bytes", 0) for c in CATEGORIES}
    rest = max(0, size["db_bytes"] - sum(text.values()) - vector_bytes - size["free_pages_bytes"])
    chart = pygal.Pie(title=f"brain.db: {human(size['db_bytes'])} on disk (+ WAL {human(size['wal_bytes'])})",
                      inner_radius=0.45, value_formatter=lambda v: human(v * 1e6),
                      legend_at_bottom_columns=3, **{k: v for k, v in COMMON.items()
                                                     if k != "legend_at_bottom_columns"})
    parts = [*((f"{c} text", text[c]) for c in CATEGORIES), ("vectors", vector_bytes),
             ("indexes, transcripts, log, cache", rest), ("free pages", size["free_pages_bytes"])]
    for label, value in parts:
        chart.add(f"{label}: {human(value)}", [value / 1e6])
    return str(chart.render(is_unicode=True))


def pending_chart(size: Mapping[str, Any]) -> str:
    """Per category: memories with a vector and those still waiting for one."""
    cats: Sequence[str] = CATEGORIES
    per = size["categories"]
    chart = pygal.StackedBar(title="Embeddings: done and pending, per category", print_values=True,
                             print_zeroes=False,
                             **{k: v for k, v in COMMON.items() if k != "print_values"})
    chart.x_labels = list(cats)
    chart.add("embedded", [per.get(c, {}).get("memories", 0) - per.get(c, {}).get("unembedded", 0)
                           for c in cats])
    chart.add("pending", [per.get(c, {}).get("unembedded", 0) for c in cats])
    return str(chart.render(is_unicode=True))


def file_sizes(brain: Brain) -> dict[str, Any]:
    """brain.db's size, its WAL's, its free pages, and per category the memories, their
    text bytes and how many wait for a vector: `maxmem doctor`'s sizes without the
    growth from the change log (a second per 100k memories: the jobs page has it)."""
    path = Path(brain.path)
    wal = Path(f"{path}-wal")
    per = {row["category"]: {"memories": row["memories"], "text_bytes": row["text_bytes"],
                             "unembedded": row["unembedded"] or 0}
           for row in brain.db.rows(CATEGORY_SIZES_SQL)}
    page_size = int(brain.db.scalar("PRAGMA page_size"))
    return {
        "db_bytes": path.stat().st_size if path.exists() else 0,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "free_pages_bytes": int(brain.db.scalar("PRAGMA freelist_count")) * page_size,
        "categories": {c: {**(row := per.get(c, {"memories": 0, "text_bytes": 0, "unembedded": 0})),
                           "text": human(row["text_bytes"])} for c in CATEGORIES},
    }


def charts(brain: Brain, months: int = 12) -> dict[str, Any]:
    """The four charts (SVG text) and the figures they were drawn from."""
    now = brain.clock.now()
    with snapshot(brain.db):
        grown = growth(brain, months=months)
        size = file_sizes(brain)
        vectors = int(brain.db.scalar("SELECT count(*) FROM vector_codes") or 0)
        dim = brain.db.get_meta("embedder_dim")
    vector_bytes = vectors * 4 * int(dim) if dim and str(dim).isdigit() else 0
    return {
        "svgs": {
            "growth": growth_chart(grown, now),
            "total": total_chart(grown, now),
            "size": size_chart(size, vector_bytes),
            "pending": pending_chart(size),
        },
        "growth": grown,
        "sizes": size,
        "vectors": vectors,
        "vector_bytes": vector_bytes,
        "vector_size": human(vector_bytes),
        "since_7d": (now - timedelta(days=7)).date().isoformat(),
    }
