"""Which MLflow store a source names: a tracking server, a backend database, an ``mlflow.db``
file or folder, or a legacy ``mlruns/`` folder (see :func:`resolve_source`).

The checks are cheap and never write: a sqlite file is opened read-only, a folder is looked at,
a server is not contacted. :func:`redact` keeps credentials out of messages and labels, and every
password met is remembered for :func:`saturate.ingest.redaction.redact`.
"""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from pathlib import Path

from saturate.errors import InputError
from saturate.ingest.mlflow_common import MlflowSource
from saturate.ingest.redaction import redact_uri, remember_uri, userinfo_split

DB_FILE = "mlflow.db"
LEGACY_FOLDER = "mlruns"
_DB_SCHEMES = ("sqlite", "postgresql", "postgres", "mysql", "mssql")
_SQLITE_MAGIC = b"SQLite format 3\x00"
# label (credentials masked) -> the URI it was made from, for writing back to the same store.
_URIS: dict[str, str] = {}


def redact(uri: str) -> str:
    """The URI without user:password@ (it goes into messages and the ``source`` column); a
    password with unencoded ``/``, ``#``, ``?`` or ``@`` is masked whole."""
    return redact_uri(uri)


def source_uri(label: str) -> str:
    """The URI a source label was made from in this process (the label itself otherwise): a
    label hides credentials, the URI keeps them for writing back."""
    return _URIS.get(label, label)


def _with_credentials(uri: str) -> str:
    """``uri`` remembered as holding secrets, with its userinfo percent-encoded where the user
    left ``/``, ``?``, ``#`` or ``@`` unencoded (so the password reaches the server intact)."""
    remember_uri(uri)
    parts = userinfo_split(uri)
    if parts is None:
        return uri
    head, userinfo, rest = parts
    user, sep, password = userinfo.partition(":")
    safe = "%!$&'()*+,;=-._~"
    encoded = urllib.parse.quote(user, safe=safe) + sep + urllib.parse.quote(password, safe=safe)
    return f"{head}{encoded}@{rest}"


def _scheme(text: str) -> str:
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*)://", text)
    return match.group(1).lower() if match else ""


def is_mlflow_sqlite(path: Path) -> bool:
    """True when ``path`` is a sqlite file holding MLflow's tables (opened read-only)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                return False
        uri = f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=2)
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False
    return {"experiments", "runs", "metrics"} <= names


def is_legacy_store(path: Path) -> bool:
    """True for an ``mlruns/``-like folder: experiment folders with meta.yaml, or a ``.trash``."""
    path = Path(path)
    if not path.is_dir():
        return False
    try:
        children = [c for _, c in zip(range(200), path.iterdir(), strict=False)]
    except OSError:
        return False
    for child in children:
        if child.name.startswith(".") or not child.is_dir():
            continue
        meta = child / "meta.yaml"
        if meta.is_file():
            try:
                head = meta.read_text(errors="replace")[:4000]
            except OSError:
                continue
            if re.search(r"^experiment_id:", head, re.M) and re.search(r"^name:", head, re.M):
                return True
    return False


def resolve_source(source: str | os.PathLike | None) -> MlflowSource:
    """Classify ``source`` (None: ``MLFLOW_TRACKING_URI``) or raise InputError naming it."""
    if source is None or str(source).strip() == "":
        env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
        if not env:
            raise InputError(
                "no MLflow source given and MLFLOW_TRACKING_URI is not set; pass a tracking "
                "server URL, a database URI, an mlflow.db file or an mlruns/ folder"
            )
        source = env
    text = os.fspath(source)
    scheme = _scheme(text)
    if scheme in ("http", "https"):
        label = redact(text).rstrip("/")
        _URIS[label] = _with_credentials(text).rstrip("/")
        return MlflowSource("rest", _URIS[label], label)
    if scheme.split("+")[0] in _DB_SCHEMES:
        text = _with_credentials(text)
        label = redact(text)
        _URIS[label] = text
        if scheme.startswith("sqlite"):
            db = _sqlite_path(text)
            if not db.is_file():
                raise InputError(f"MLflow source {label!r}: database file {db} does not exist")
            return MlflowSource("db", text, label, sqlite_path=db)
        return MlflowSource("db", text, label)
    if scheme == "file":
        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(text).path))
        return _resolve_path(path, text)
    if scheme:
        raise InputError(
            f"MLflow source {redact(text)!r}: unsupported scheme {scheme!r} "
            "(expected http(s)://, sqlite:///, postgresql://, mysql:// or a path)"
        )
    return _resolve_path(Path(text).expanduser(), text)


def _sqlite_path(uri: str) -> Path:
    rest = uri.split("://", 1)[1]
    rest = rest.split("?", 1)[0]
    if rest.startswith("/"):
        rest = rest[1:]  # sqlite:///rel.db is relative, sqlite:////abs.db absolute
    if not rest or rest == ":memory:":
        raise InputError(f"MLflow source {uri!r}: an in-memory sqlite database holds no runs")
    return Path(urllib.parse.unquote(rest))


def _resolve_path(path: Path, given: str) -> MlflowSource:
    if not path.exists():
        raise InputError(f"MLflow source {given!r} does not exist")
    if path.is_file():
        if is_mlflow_sqlite(path):
            return MlflowSource("db", f"sqlite:///{path.resolve()}", given, sqlite_path=path)
        raise InputError(f"MLflow source {given!r} is not an MLflow sqlite database")
    db = path / DB_FILE
    if db.is_file() and is_mlflow_sqlite(db):
        return MlflowSource("db", f"sqlite:///{db.resolve()}", given, sqlite_path=db)
    if is_legacy_store(path):
        return MlflowSource("files", str(path), given)
    if is_legacy_store(path / LEGACY_FOLDER):
        return MlflowSource("files", str(path / LEGACY_FOLDER), given)
    raise InputError(
        f"MLflow source {given!r} holds no MLflow store (no {DB_FILE}, no mlruns/ experiment "
        "folders with meta.yaml)"
    )


def is_mlflow_source(source: str | os.PathLike) -> bool:
    """Cheap check (no network, no full scan) that ``source`` is something MLflow keeps runs in."""
    try:
        text = os.fspath(source)
    except TypeError:
        return False
    scheme = _scheme(text)
    if scheme in ("http", "https") or scheme.split("+")[0] in _DB_SCHEMES:
        return True
    if scheme and scheme != "file":
        return False
    try:
        resolve_source(text)
    except InputError:
        return False
    return True
