"""A threaded HTTP server on 127.0.0.1 (a free port) inside the test process, for the tests' own
services (webhooks, a W&B API, a faulty proxy). ``with Service() as s:`` starts it and stops it
(its threads end with it: handlers waiting on ``release`` are let go first)."""

from __future__ import annotations

import http.server
import threading
from typing import Any


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: Any  # the LocalService the handlers answer for


class LocalService:
    """Base of a test service: ``self.server.owner`` in a handler is the service."""

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]) -> None:
        self.lock = threading.Lock()
        self.release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
