"""Model servers of the tests' own on 127.0.0.1, for the real Claude Code and Codex CLIs.

`AnthropicServer` answers `POST /v1/messages` (streamed as server-sent events, or
one JSON message) and `/v1/messages/count_tokens`; `ResponsesServer` answers the
OpenAI Responses API (`POST /v1/responses`, streamed) as a custom Codex model
provider. Both record every request (path and JSON body) so a test can read what
reached the model, and answer with what `reply(body)` returns:

    Text("done")                              a text answer, end of turn
    ToolCall("mcp__maxmem__search", {...})    a tool call (Claude: tool_use)

`reply` sees the request body, so a test can script a second turn: call a tool on
the first request that lists it, answer in text once the tool's result is back.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    namespace: str | None = None  # Codex groups an MCP server's tools in a namespace


Reply = Text | ToolCall


@dataclass
class Request:
    method: str
    path: str
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """The whole body as text: what a test searches for a memory's words."""
        return json.dumps(self.body, ensure_ascii=False)


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


@dataclass
class ModelServer:
    """The HTTP part both share: a thread serving 127.0.0.1 on a free port."""

    reply: Callable[[dict[str, Any]], Reply] = field(default=lambda body: Text("ok"))
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.counter = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                outer.record("GET", self.path, {})
                status, headers, payload = outer.get(self.path)
                self.send(status, headers, payload)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                outer.record("POST", self.path, body)
                status, headers, payload = outer.post(self.path, body)
                self.send(status, headers, payload)

            def send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
                self.send_response(status)
                for key, value in {**headers, "Content-Length": str(len(payload))}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def record(self, method: str, path: str, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(Request(method, path, body))

    def next_id(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        return 404, {"Content-Type": "application/json"}, b'{"error": {"message": "not here"}}'

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        raise NotImplementedError

    def model_requests(self) -> list[Request]:
        raise NotImplementedError


class AnthropicServer(ModelServer):
    """The Messages API as Claude Code calls it (ANTHROPIC_BASE_URL=server.url)."""

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if path.startswith("/v1/messages/count_tokens"):
            return 200, {"Content-Type": "application/json"}, b'{"input_tokens": 100}'
        if not path.startswith("/v1/messages"):
            return 404, {"Content-Type": "application/json"}, b'{"type": "error"}'
        answer = self.reply(body)
        n = self.next_id()
        model = str(body.get("model") or "claude-test")
        if isinstance(answer, ToolCall):
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": answer.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(answer.arguments)}
            stop = "tool_use"
            whole = {**block, "input": answer.arguments}
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": answer.text}
            stop = "end_turn"
            whole = {"type": "text", "text": answer.text}
        usage = {"input_tokens": 100, "output_tokens": 10}
        if not body.get("stream"):
            message = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": model,
                       "content": [whole], "stop_reason": stop, "stop_sequence": None, "usage": usage}
            return 200, {"Content-Type": "application/json"}, json.dumps(message).encode()
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, _sse(events)

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.startswith("/v1/messages") and "count_tokens" not in r.path]


class ResponsesServer(ModelServer):
    """The Responses API as Codex calls a custom provider (base_url = server.url + "/v1")."""

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        if path.startswith("/v1/models"):
            return 200, {"Content-Type": "application/json"}, json.dumps(
                {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "tests"}]}).encode()
        return super().get(path)

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if not path.startswith("/v1/responses"):
            return 404, {"Content-Type": "application/json"}, b'{"error": {"message": "not here"}}'
        answer = self.reply(body)
        n = self.next_id()
        if isinstance(answer, ToolCall):
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{n:04d}", "call_id": f"call_{n:04d}",
                                    "name": answer.name, "arguments": json.dumps(answer.arguments),
                                    "status": "completed"}
            if answer.namespace:
                item["namespace"] = answer.namespace
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n:04d}", "status": "completed",
                    "content": [{"type": "output_text", "text": answer.text, "annotations": []}]}
        response = {"id": f"resp_{n:04d}", "object": "response", "status": "in_progress", "output": []}
        events = [("response.created", {"type": "response.created", "response": response}),
                  ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                  "item": {**item, "status": "in_progress"}})]
        if isinstance(answer, Text):
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                          "output_index": 0, "content_index": 0,
                                                          "delta": answer.text}))
        events += [
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                **response, "status": "completed", "output": [item],
                "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                          "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}}}),
        ]
        return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, _sse(events)

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.startswith("/v1/responses")]


def tool_names(request: Request) -> Iterator[str]:
    """The names of the tools a model request offers (Messages or Responses API; Codex
    may group MCP tools in a namespace)."""
    for tool in request.body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("name"):
            yield str(tool["name"])
        for inner in tool.get("tools") or []:
            if isinstance(inner, dict) and inner.get("name"):
                yield f"{tool.get('name', '')}/{inner['name']}"
