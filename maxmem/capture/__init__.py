"""Transcript capture: agents' session files in, conversation memories out.

    from maxmem import Brain
    from maxmem.capture import run_capture
    with Brain.open("brain.db") as brain:
        report = run_capture(brain)              # the configured roots
        report = run_capture(brain, ["export/conversations.json"], format="chatgpt")
        print(report.summary())

One reader module per format (openclaw, claude_code, codex, jsonl, chatgpt,
markdown) turns records into `Session` / `Turn` / `ToolCall`; `lines` reads only
complete lines past a cursor; `chunker` cuts turns into memories; `store` owns the
capture tables; `job` runs it all; `roots` knows where transcripts live;
`openclaw_store` reads OpenClaw's SQLite transcript stores (2026.8.1 and later).
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use: the CLI reads FORMATS at start-up and must not pay for
# apsw and the job machinery (`maxmem --version` stays fast).
_EXPORTS = {
    "CaptureSettings": "roots", "Source": "roots", "agents_folders": "roots", "discover": "roots",
    "only_agent": "roots", "sessions_named": "roots", "sources_for_path": "roots", "CaptureReport": "job",
    "FileReport": "job",
    "run_capture": "job", "FORMATS": "model", "Session": "model", "ToolCall": "model",
    "Turn": "model",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'maxmem.capture' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
