"""`maxmem mcp`'s first answers, given before the MCP SDK is loaded.

A client (Codex, Claude Code) starts `maxmem mcp` and waits a grace period for its
answers to `initialize` and `tools/list`; a session that starts before has no maxmem
tools. Loading the SDK and pydantic takes seconds on a busy machine, and those two
answers never change for an install of maxmem. So the server's own answers to them
are kept (in maxmem's state folder, per install: maxmem's mcp.py and the SDK's files
as stamps), and the next start gives them at once, while the SDK loads:

- the client's stdin and stdout are moved aside; the SDK is given a pipe for each
  (fds 0 and 1), filled and drained by two threads;
- `initialize` is answered from what was kept (for a protocol version the server
  accepted before) and passed on to the SDK too, whose own answer is then dropped;
  `tools/list` is answered from what was kept until the SDK has answered `initialize`,
  then by the SDK; everything else goes to the SDK as it comes, in order;
- what the SDK writes goes to the client as it is, one line at a time.

Without kept answers (the first start of an install) everything goes to the SDK, and
its answers are kept for the next start. Only the standard library is imported here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .files import write_private

KEPT = "mcp-answers-{stamp}.json"


def install_stamp() -> str:
    """Which maxmem and which SDK answer: their files' modification times (no import)."""
    parts = [str(Path(__file__).with_name("mcp.py").stat().st_mtime_ns)]
    spec = importlib.util.find_spec("mcp")
    for location in (spec.submodule_search_locations or []) if spec else []:
        try:
            parts.append(f"{location}:{Path(location).stat().st_mtime_ns}")
        except OSError:
            pass
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@dataclass
class Kept:
    """The server's answers: its initialize result (for each protocol version it accepts
    in a handshake, the same but for the version) and tools/list's result."""

    initialize: dict[str, Any] | None = None
    versions: list[str] = field(default_factory=list)
    tools: dict[str, Any] | None = None

    @classmethod
    def load(cls, path: Path) -> Kept:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(data["initialize"], list(data["versions"]), data["tools"])
        except (OSError, ValueError, KeyError, TypeError):
            return cls()

    def save(self, path: Path) -> None:
        data = {"initialize": self.initialize, "versions": self.versions, "tools": self.tools}
        try:
            write_private(path, lambda handle: json.dump(data, handle))
        except OSError:
            pass  # kept next time, perhaps

    def initialize_result(self, version: str) -> dict[str, Any] | None:
        if self.initialize is None or version not in self.versions:
            return None
        return {**self.initialize, "protocolVersion": version}


def handshake_versions() -> list[str]:
    """The protocol versions the SDK accepts in an initialize handshake, once it is loaded
    (it is, when its answers are kept); none before."""
    version = sys.modules.get("mcp_types.version")
    return list(getattr(version, "HANDSHAKE_PROTOCOL_VERSIONS", ()))


class Front:
    """The threads between the client and the SDK (see the module's description)."""

    def __init__(self, kept: Kept, path: Path) -> None:
        self.kept, self.path = kept, path
        self.client_in = os.fdopen(os.dup(0), "rb", buffering=0)
        self.client_out = os.fdopen(os.dup(1), "wb", buffering=0)
        sdk_in, self.to_sdk_fd = os.pipe()
        self.from_sdk_fd, sdk_out = os.pipe()
        os.dup2(sdk_in, 0)
        os.dup2(sdk_out, 1)
        os.close(sdk_in)
        os.close(sdk_out)
        self.lock = threading.Lock()
        self.ready = threading.Event()  # the SDK answered initialize
        self.greeted = threading.Event()  # the client had what was kept, or asked for more
        self.pending: dict[Any, str] = {}  # request id -> method, of requests whose answer is kept
        self.answered: set[Any] = set()  # ids of the initialize answered here: the SDK's answer is dropped
        self.changed = False
        self.reader = threading.Thread(target=self.read_client, name="maxmem-mcp-in", daemon=True)
        self.writer = threading.Thread(target=self.write_client, name="maxmem-mcp-out", daemon=True)
        self.reader.start()
        self.writer.start()

    def send(self, line: bytes) -> None:
        with self.lock:
            self.client_out.write(line)

    def answer(self, request: Mapping[str, Any]) -> bool:
        """Answer `request` from what was kept; whether it was."""
        method, ident = request.get("method"), request.get("id")
        if ident is None or self.ready.is_set():
            return False
        if method == "initialize":
            result = self.kept.initialize_result(str((request.get("params") or {}).get("protocolVersion")))
        elif method == "tools/list" and not (request.get("params") or {}).get("cursor"):
            result = self.kept.tools
        else:
            return False
        if result is None:
            return False
        self.send(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n")
        return True

    def read_client(self) -> None:
        with os.fdopen(self.to_sdk_fd, "wb", buffering=0) as to_sdk:
            for line in self.client_in:
                request = _message(line)
                if request is not None and request.get("id") is not None and request.get("method") not in (
                        "initialize", "tools/list"):
                    self.greeted.set()  # a request only the SDK answers
                if request is not None and request.get("method") in ("initialize", "tools/list"):
                    ident = request.get("id")
                    self.pending[ident] = json.dumps(
                        [request["method"], (request.get("params") or {}).get("protocolVersion")])
                    if self.answer(request):
                        if request["method"] == "tools/list":
                            self.pending.pop(ident, None)
                            self.greeted.set()
                            continue  # the SDK is not asked: its session needs no tools/list
                        self.answered.add(ident)
                try:
                    to_sdk.write(line if line.endswith(b"\n") else line + b"\n")
                except OSError:
                    return

    def write_client(self) -> None:
        with os.fdopen(self.from_sdk_fd, "rb", buffering=0) as from_sdk:
            for line in from_sdk:
                message = _message(line)
                ident = message.get("id") if message is not None else None
                if message is not None and "result" in message and ident in self.pending:
                    asked = json.loads(self.pending.pop(ident))
                    self.keep(asked, message["result"])
                    if asked[0] == "initialize":
                        self.ready.set()
                        if ident in self.answered:
                            self.answered.discard(ident)
                            continue  # answered already, from what was kept
                self.send(line)

    def keep(self, asked: list[Any], result: Any) -> None:
        method, version = asked
        if method == "initialize" and isinstance(result, dict) and result.get("protocolVersion") == version:
            common = {k: v for k, v in result.items() if k != "protocolVersion"}
            versions = handshake_versions() or sorted({*self.kept.versions, str(version)})
            if (self.kept.initialize, self.kept.versions) != (common, versions):
                self.kept.initialize, self.kept.versions = common, versions
                self.changed = True
        elif method == "tools/list" and isinstance(result, dict) and not result.get("nextCursor"):
            if self.kept.tools != result:
                self.kept.tools = result
                self.changed = True
        if self.changed and self.kept.tools is not None and self.kept.initialize is not None:
            self.kept.save(self.path)
            self.changed = False

    def wait_greeted(self, seconds: float) -> None:
        """Hold the SDK's loading back until the client has what was kept (at most
        `seconds`): importing it holds the interpreter in long stretches that would keep
        the answering thread waiting on a busy machine."""
        if self.kept.initialize is not None and self.kept.tools is not None:
            self.greeted.wait(seconds)

    def close(self) -> None:
        """After the SDK's server returned: what it wrote reaches the client."""
        try:
            os.close(1)  # the SDK's end of its output pipe: the writer thread reads to its end
        except OSError:
            pass
        self.writer.join(timeout=2)
        try:
            self.client_out.close()
        except OSError:
            pass


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def start(folder: Path) -> Front | None:
    """The front for `maxmem mcp`, its answers kept in `folder`; None where fds cannot be moved."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / KEPT.format(stamp=install_stamp())
        return Front(Kept.load(path), path)
    except OSError:
        return None


HELLO: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "maxmem-setup", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def prime(argv: list[str], env: Mapping[str, str], timeout: float = 120.0) -> bool:
    """Start `argv` (a `maxmem … mcp`) and ask it what a client asks first, so that its
    answers are kept before an agent's first start (setup does this); whether it answered.
    Its input stays open until it has answered (a server whose input ends stops)."""
    try:
        server = subprocess.Popen(argv, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
    except OSError:
        return False
    killer = threading.Timer(timeout, server.kill)
    killer.start()
    answered = False
    try:
        assert server.stdin is not None and server.stdout is not None
        for message in HELLO:
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
            while "id" in message:
                line = server.stdout.readline()
                if not line:
                    return False
                answer = _message(line)
                if answer is not None and answer.get("id") == message["id"]:
                    answered = "result" in answer
                    break
        return answered
    except OSError:
        return False
    finally:
        killer.cancel()
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
