"""A local incoming-webhook server for the tests: a threaded HTTP server on 127.0.0.1 (a free
port) that records every POST body and answers as :attr:`WebhookServer.mode` says: ``ok`` (200,
``ok`` as Slack answers), ``status`` (HTTP ``code``), ``hang`` (the request read, never answered).
Start and stop it with ``with WebhookServer() as hook:`` (its threads end with it).
"""

from __future__ import annotations

import http.server
import json
from typing import Any

from local_http import LocalService

__all__ = ["WebhookServer"]


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        hook = self.server.owner  # type: ignore[attr-defined]
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


class WebhookServer(LocalService):
    """See the module docstring; ``url`` holds a secret-looking path, as real webhooks do."""

    SECRET = "T0SECRET/B0SECRET/xyzzysecret"

    def __init__(self, mode: str = "ok", code: int = 500) -> None:
        self.mode, self.code = mode, code
        self.posts: list[dict] = []
        self.paths: list[str] = []
        self.hits = 0
        super().__init__(_Handler)

    @property
    def url(self) -> str:
        return f"{self.base_url}/services/{self.SECRET}"
