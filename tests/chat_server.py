"""An OpenAI-compatible chat completions server of the tests' own on 127.0.0.1.

`ChatServer(reply)` answers `POST /v1/chat/completions` (not streamed) with the text
`reply(body)` returns, and records every request (tests/model_servers.py's base).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from model_servers import ModelServer, Request, Text


class ChatServer(ModelServer):
    def __init__(self, reply: Callable[[dict[str, Any]], str]) -> None:
        super().__init__(reply=lambda body: Text(reply(body)))

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if not path.endswith("/chat/completions"):
            return 404, {"Content-Type": "application/json"}, b'{"error": {"message": "not here"}}'
        answer = self.reply(body)
        text = answer.text if isinstance(answer, Text) else ""
        payload = {"id": f"chatcmpl-{self.next_id()}", "object": "chat.completion", "created": 0,
                   "model": body.get("model", ""),
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]
