"""A local server that answers the W&B public API's GraphQL as the wandb package asks it (the
queries of ``wandb.Api()``, ``api.runs`` and ``run.scan_history`` in wandb 0.2x/0.3x), for the
``wandb://`` tests; no W&B server can run here.

A threaded HTTP server on 127.0.0.1 (a free port): ``POST /graphql`` answers ``Viewer`` and
``GetDefaultEntity`` (the login), ``Runs`` (a page of ``perPage`` runs after a cursor, with
``pageInfo``), ``RunHistoryKeys`` and ``HistoryPage`` (the history rows with ``minStep <= _step <
maxStep``, as JSON lines); ``RunParquetHistory`` gets no parquet files, so the package pages
through ``HistoryPage``. Other posts (the package's telemetry) get an empty 200.

Faults (:attr:`WandbServer.fault`): ``None``; ``"status"``: the first ``times`` GraphQL posts get
HTTP ``code``; ``"hang"``: every GraphQL post is read and never answered; ``"bad_key"``: HTTP 401
with W&B's error text. ``queries`` counts the posts per operation; ``keys`` the API keys seen;
``filters`` the run filters the listing was asked for; ``delay`` seconds each ``HistoryPage`` answer
waits (a server far away), ``most_at_once`` the most ``HistoryPage`` posts answered at one time.
Start and stop it with ``with WandbServer(runs) as server:``.
"""

from __future__ import annotations

import base64
import http.server
import json
import re
from collections import Counter
from typing import Any

from local_http import LocalService

__all__ = ["WandbServer", "remote_run"]


def remote_run(run_id: str, name: str, rows: list[dict], *, config: dict | None = None,
               group: str = "", tags: tuple[str, ...] = (), state: str = "finished") -> dict:
    """A run as the server holds it: its fields and its history rows (``_step`` in each)."""
    return {"id": run_id, "name": name, "rows": rows, "config": config or {}, "group": group,
            "tags": list(tags), "state": state}


def _node(run: dict, index: int) -> dict:
    last = max((r["_step"] for r in run["rows"]), default=-1)
    return {
        "id": base64.b64encode(f"Run:{index}".encode()).decode(), "projectId": "1",
        "tags": run["tags"], "name": run["id"], "displayName": run["name"], "sweepName": None,
        "state": run["state"], "group": run["group"] or None, "jobType": None, "commit": None,
        "readOnly": False, "createdAt": "2026-12-01T00:00:00", "heartbeatAt": "2026-12-01T01:00:00",
        "description": None, "notes": None, "historyLineCount": len(run["rows"]),
        "user": {"name": "tester", "username": "tester"},
        "config": json.dumps({k: {"value": v, "desc": None} for k, v in run["config"].items()}),
        "summaryMetrics": "{}", "systemMetrics": "{}", "lastHistoryStep": last,
        "historyKeys": {"lastStep": last, "keys": {}},
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/graphql":
            return self._send(200, b"")
        api = self.server.owner  # type: ignore[attr-defined]
        doc = json.loads(body)
        query, variables = doc.get("query", ""), doc.get("variables") or {}
        match = re.search(r"(?:query|mutation)\s+(\w+)", query)
        op = match.group(1) if match else "?"
        auth = self.headers.get("Authorization", "")
        with api.lock:
            api.queries[op] += 1
            if auth.startswith("Basic "):
                api.keys.add(base64.b64decode(auth[6:]).decode().partition(":")[2])
            fault, api.posts = api.fault, api.posts + 1
            failing = fault == "status" and api.posts <= api.times
        if fault == "hang":
            api.release.wait(60)
            return None
        if fault == "bad_key":
            return self._json(401, {"errors": [{"message": "user is not logged in"}]})
        if failing:
            return self._json(api.code, {"errors": [{"message": "Internal Server Error"}]})
        if op != "HistoryPage" or not api.delay:
            return self._json(200, {"data": api.answer(op, query, variables)})
        with api.lock:
            api.at_once += 1
            api.most_at_once = max(api.most_at_once, api.at_once)
        try:
            api.release.wait(api.delay)
            return self._json(200, {"data": api.answer(op, query, variables)})
        finally:
            with api.lock:
                api.at_once -= 1

    def _json(self, code: int, doc: Any) -> None:
        self._send(code, json.dumps(doc).encode())

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class WandbServer(LocalService):
    """See the module docstring."""

    def __init__(self, runs: list[dict], *, entity: str = "team", project: str = "rl",
                 fault: str | None = None, code: int = 500, times: int = 0,
                 delay: float = 0.0) -> None:
        self.runs, self.entity, self.project = runs, entity, project
        self.delay, self.at_once, self.most_at_once = delay, 0, 0
        self.fault, self.code, self.times = fault, code, times
        self.queries: Counter[str] = Counter()
        self.keys: set[str] = set()
        self.filters: list[Any] = []
        self._index: dict[str, int] = {}
        self.posts = 0
        super().__init__(_Handler)

    @property
    def url(self) -> str:
        return self.base_url

    def answer(self, op: str, query: str, v: dict) -> Any:
        if op in ("Viewer", "GetDefaultEntity"):
            return {"viewer": {"id": "u1", "entity": self.entity, "username": "tester",
                               "email": None, "flags": "{}", "teams": {"edges": []}}}
        if op == "Runs":
            self.filters.append(json.loads(v.get("filters") or "{}"))
            if (v.get("entity"), v.get("project")) != (self.entity, self.project):
                return {"project": None}
            start = int(v.get("cursor") or 0)
            page = self.runs[start:start + int(v.get("perPage") or 50)]
            end = start + len(page)
            edges = [{"node": _node(r, start + i), "cursor": str(start + i + 1)}
                     for i, r in enumerate(page)]
            return {"project": {"internalId": "1", "runCount": len(self.runs), "readOnly": False,
                                "runs": {"edges": edges, "pageInfo": {
                                    "endCursor": str(end), "hasNextPage": end < len(self.runs)}}}}
        if len(self._index) != len(self.runs):  # by id: a project of 20,000 runs answers at once
            self._index = {r["id"]: i for i, r in enumerate(self.runs)}
        index = next((self._index[n] for n in (v.get("name"), v.get("run"), v.get("runName"))
                      if n in self._index), None)
        run = None if index is None else self.runs[index]
        if run is None:
            return {"project": {"run": None}}
        if op == "RunParquetHistory":
            return {"project": {"run": {"parquetHistory": {"parquetUrls": [], "liveData": []}}}}
        if op == "HistoryPage":
            rows = [json.dumps(r) for r in run["rows"] if v["minStep"] <= r["_step"] < v["maxStep"]]
            return {"project": {"run": {"history": rows[: int(v["pageSize"])]}}}
        node = _node(run, index)
        return {"project": {"run": node, "internalId": "1", "readOnly": False}}
