"""Text clean-up shared by the readers: content blocks, injected markup, truncation."""

from __future__ import annotations

import re
from typing import Any

from ..envelopes import strip_reminders

IMAGE = "[image]"
DOCUMENT = "[document]"

# Markup that agents inject into user turns; never typed by the human (Claude Code's
# system reminders are maxmem.envelopes' to remove).
_INJECTED = re.compile(
    r"<(local-command-caveat|local-command-stdout|local-command-stderr|"
    r"command-name|command-message|command-args|task-notification|environment_context|"
    r"user_instructions|permissions instructions|INSTRUCTIONS)>.*?</\1>",
    re.DOTALL,
)
_BASE64_IMAGE = re.compile(r"data:(?:image|application)/[\w.+-]+;base64,[A-Za-z0-9+/=\s]{64,}")
_BLANK_RUNS = re.compile(r"\n{3,}")


def blocks_text(content: Any, *, text_types: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """Join the text of a message's content: a string, or a list of typed blocks.

    Images and documents become a short placeholder; thinking, signatures and other
    block types are left out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in text_types and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind in ("image", "input_image", "image_url"):
            parts.append(IMAGE)
        elif kind == "document":
            parts.append(DOCUMENT)
    return "\n".join(part for part in parts if part)


def clean(text: str) -> str:
    """Remove injected markup and inline base64 payloads; tidy whitespace."""
    if not text:
        return ""
    if "<" in text:
        text = strip_reminders(_INJECTED.sub("", text))
    if "base64," in text:
        text = _BASE64_IMAGE.sub(IMAGE, text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


def only_placeholders(text: str) -> bool:
    """True when nothing but image/document placeholders is left."""
    rest = text.replace(IMAGE, "").replace(DOCUMENT, "")
    return not rest.strip()


def truncate(text: str, limit: int) -> str:
    """Keep the head and the tail of a long text (errors and totals live at the end)."""
    if limit <= 0 or len(text) <= limit:
        return text
    marker = f"\n…[{len(text) - limit} characters cut]…\n"
    head = max(0, (limit * 2) // 3)
    tail = max(0, limit - head)
    return text[:head] + marker + (text[-tail:] if tail else "")
