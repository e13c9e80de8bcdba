"""A fault-injecting HTTP proxy in front of a real ``mlflow server``, for tests.

A small threaded HTTP server on 127.0.0.1 (a free port) forwards every request to the upstream
server, except the requests whose path contains ``match`` (all when empty), which get the fault
set with :meth:`FaultProxy.set`:

==================  ============================================================================
``pass``            forwarded unchanged
``slow``            forwarded after ``delay`` seconds
``hang``            the connection is accepted and never answered
``trickle``         status and headers at once, then the body one byte every ``interval`` seconds
``trickle_all``     the whole answer, status line and headers included, byte by byte
``status``          HTTP ``code`` with an MLflow-style JSON error (``message``, ``retry_after``)
``truncated``       the body cut at half with the full Content-Length, then the socket closed
``truncated_json``  the first half of the JSON body, framed as a complete answer
``html``            HTTP 200 with an HTML login page
``shape``           HTTP 200 with the upstream JSON changed by ``mutate(path, document)``
``reset``           the connection closed with a TCP reset before any answer
==================  ============================================================================

``times`` limits the fault to the first N matching requests (then they pass). ``hits`` counts the
requests per fault mode; ``sent`` the body bytes a trickle got out before the client left. Start
and stop it with ``with FaultProxy(upstream) as proxy:`` (the threads end with it).
"""

from __future__ import annotations

import http.server
import json
import socket
import struct
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from typing import Any

from local_http import LocalService

__all__ = ["FaultProxy"]

_HTML = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in</body></html>"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _upstream(self, method: str, body: bytes | None) -> tuple[int, str, bytes]:
        p = self.server.owner  # type: ignore[attr-defined]
        req = urllib.request.Request(p.upstream + self.path, data=body, method=method)
        req.add_header("Content-Type", self.headers.get("Content-Type") or "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                ctype = resp.headers.get("Content-Type", "application/json")
                return resp.status, ctype, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.headers.get("Content-Type", "application/json"), err.read()

    def _answer(self, status: int, ctype: str, data: bytes, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:  # noqa: C901 - one branch per fault mode
        p = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        mode, opts = p.fault_for(self.path)
        if mode == "hang":
            p.release.wait()
            self.close_connection = True
            return
        if mode == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if mode == "status":
            code = int(opts.get("code", 503))
            extra = {"Retry-After": str(opts["retry_after"])} if "retry_after" in opts else None
            doc = {"error_code": "TEMPORARILY_UNAVAILABLE",
                   "message": opts.get("message", f"injected {code}")}
            self._answer(code, "application/json", json.dumps(doc).encode(), extra)
            return
        if mode == "html":
            self._answer(200, "text/html; charset=utf-8", _HTML)
            return
        if mode == "slow" and p.release.wait(float(opts.get("delay", 1.0))):
            return
        status, ctype, data = self._upstream(method, body)
        if mode == "shape":
            data = json.dumps(opts["mutate"](self.path, json.loads(data))).encode()
        if mode == "truncated_json":
            data = data[: len(data) // 2]
        if mode == "truncated":
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if mode in ("trickle", "trickle_all"):
            self._trickle(status, ctype, data, float(opts.get("interval", 0.5)), mode)
            return
        self._answer(status, ctype, data)

    def _trickle(self, status: int, ctype: str, data: bytes, interval: float, mode: str) -> None:
        p = self.server.owner  # type: ignore[attr-defined]
        head = (f"HTTP/1.1 {status} OK\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(data)}\r\n\r\n").encode()  # fmt: skip
        if mode == "trickle":
            self.wfile.write(head)
            self.wfile.flush()
            head = b""
        self.close_connection = True
        for i in range(len(head) + len(data)):
            if p.release.wait(interval):
                return
            byte = (head + data)[i : i + 1]
            try:
                self.wfile.write(byte)
                self.wfile.flush()
            except OSError:
                return
            if i >= len(head):
                with p.lock:
                    p.sent += 1

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")


class FaultProxy(LocalService):
    """See the module docstring."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.mode, self.match, self.times, self.opts = "pass", "", None, {}
        self.hits: Counter[str] = Counter()
        self.sent = 0
        super().__init__(_Handler)

    @property
    def url(self) -> str:
        return self.base_url

    def set(self, mode: str, match: str = "", times: int | None = None,
            mutate: Callable[[str, Any], Any] | None = None,
            **opts: Any) -> FaultProxy:  # fmt: skip
        with self.lock:
            self.mode, self.match, self.times = mode, match, times
            self.opts = {**opts, **({"mutate": mutate} if mutate else {})}
            self.hits.clear()
            self.sent = 0
        return self

    def fault_for(self, path: str) -> tuple[str, dict]:
        with self.lock:
            if self.mode == "pass" or (self.match and self.match not in path):
                self.hits["pass"] += 1
                return "pass", {}
            if self.times is not None:
                if self.times <= 0:
                    self.hits["pass"] += 1
                    return "pass", {}
                self.times -= 1
            self.hits[self.mode] += 1
            return self.mode, dict(self.opts)

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        time.sleep(0)  # let handler threads see ``release``
