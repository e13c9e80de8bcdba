"""A local incoming-webhook server for the tests: a threaded HTTP server on 127.0.0.1 (a free
port) that records every POST body and answers as :attr:`WebhookServer.mode` says: ``ok`` (200,
``ok`` as Slack answers), ``status`` (HTTP ``code``, with ``Retry-After: retry_after`` when that
is set), ``hang`` (the request read, never answered), ``redirect`` (HTTP ``code`` with a Location
on this server: ``location``, by default ``/moved/`` + the secret, where posts are answered ``ok``). ``times``: the mode
holds for the first N requests only, then they are answered ``ok``. Every request's
Authorization header is kept in ``auths``, the paths of GETs in ``gets``.
Start and stop it with ``with WebhookServer() as hook:`` (its threads end with it).
"""

from __future__ import annotations

import http.server
import json
import time
from typing import Any

from local_http import LocalService

__all__ = ["WebhookServer"]


class _Handler(http.server.BaseHTTPRequestHandler):
    def _mode(self) -> tuple[str, int, float | None]:
        hook = self.server.owner  # type: ignore[attr-defined]
        with hook.lock:
            hook.hits += 1
            hook.auths.append(self.headers.get("Authorization"))
            hook.times_at.append(time.monotonic())
            if self.path.startswith("/moved/"):
                return "ok", 200, None
            if hook.times is not None and hook.hits > hook.times:
                return "ok", 200, None
            return hook.mode, hook.code, hook.retry_after

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        hook = self.server.owner  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode, code, retry_after = self._mode()
        if mode == "ok":
            with hook.lock:
                hook.posts.append(json.loads(body))
                hook.paths.append(self.path)
        if mode == "hang":
            hook.release.wait(60)
            return
        self.send_response(200 if mode == "ok" else code)
        if mode == "redirect":
            self.send_header("Location", hook.location)
        if mode == "status" and retry_after is not None:
            self.send_header("Retry-After", f"{retry_after:g}")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self) -> None:  # noqa: N802 - a redirected POST that became a GET
        hook = self.server.owner  # type: ignore[attr-defined]
        with hook.lock:
            hook.gets.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


class WebhookServer(LocalService):
    """See the module docstring; ``url`` holds a secret-looking path, as real webhooks do."""

    SECRET = "T0SECRET/B0SECRET/xyzzysecret"

    def __init__(self, mode: str = "ok", code: int = 500, *, retry_after: float | None = None,
                 times: int | None = None, location: str = f"/moved/{SECRET}") -> None:
        self.mode, self.code, self.retry_after, self.times = mode, code, retry_after, times
        self.location = location
        self.posts: list[dict] = []
        self.paths: list[str] = []
        self.gets: list[str] = []
        self.auths: list[str | None] = []
        self.times_at: list[float] = []
        self.hits = 0
        super().__init__(_Handler)

    @property
    def url(self) -> str:
        return f"{self.base_url}/services/{self.SECRET}"
