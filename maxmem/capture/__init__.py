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
capture tables; `job` runs it all; `discover` knows where transcripts live.
"""

from __future__ import annotations

from .discover import CaptureSettings, Source, discover, sources_for_path
from .job import CaptureReport, FileReport, run_capture
from .model import FORMATS, Session, ToolCall, Turn

__all__ = [
    "FORMATS", "CaptureReport", "CaptureSettings", "FileReport", "Session", "Source", "ToolCall",
    "Turn", "discover", "run_capture", "sources_for_path",
]
