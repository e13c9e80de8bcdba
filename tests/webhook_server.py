"""A local incoming-webhook server for the tests: a threaded HTTP server on 127.0.0.1 (a free
port) that records every POST body and answers as :attr:`WebhookServer.mode` says: ``ok`` (200,
``ok`` as Slack answers), ``status`` (HTTP ``code``), ``hang`` (the request read, never answered).
Start and stop it with ``with WebhookServer() as hook:`` (its threads end with it).
"""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

__all__ = ["WebhookServer"]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        hook = self.server.hook
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with hook.lock:
            hook.hits += 1
            mode, code = hook.mode, hook.code
            if mode == "ok":
                hook.posts.append(json.loads(body))
                hook.paths.append(self.path)
        if mode == "hang":
            hook.release.wait(60)
            return
        self.send_response(200 if mode == "ok" else code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    hook: WebhookServer


class WebhookServer:
    """See the module docstring; ``url`` holds a secret-looking path, as real webhooks do."""

    SECRET = "T0SECRET/B0SECRET/xyzzysecret"

    def __init__(self, mode: str = "ok", code: int = 500) -> None:
        self.mode, self.code = mode, code
        self.posts: list[dict] = []
        self.paths: list[str] = []
        self.hits = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.hook = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/services/{self.SECRET}"

    def __enter__(self) -> WebhookServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
