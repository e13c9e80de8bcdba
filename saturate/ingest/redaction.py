"""Credentials kept out of everything saturate prints or stores.

:func:`redact` masks the secrets saturate has seen (source URIs' passwords, credential
environment variables; also percent-encoded or as a Basic header) and every URL's userinfo (up to
its last ``@``) and ``password=`` query values. It is applied to foreign exception messages,
to source labels, and again at the CLI's error and warning boundary.
"""

from __future__ import annotations

import base64
import os
import re
import threading
import urllib.parse

MASK = "***"
# Environment variables whose values are credentials (MLflow, Databricks, cloud SDKs, libpq, W&B).
SECRET_ENV = (
    "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN", "DATABRICKS_TOKEN",
    "DATABRICKS_CLIENT_SECRET", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "PGPASSWORD",
    "MYSQL_PWD", "WANDB_API_KEY",
)  # fmt: skip
# Shorter secrets are masked only inside URLs: masking every "ab" of a message would garble it.
_MIN_LEN = 3
_SEEN: set[str] = set()
_LOCK = threading.Lock()
_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s'\"<>`]+)")
_QUERY_SECRET = re.compile(
    r"(?i)((?:[?&;]|^)(?:password|passwd|pwd|token|secret|api_key)=)[^&#\s]*"
)


def remember_secret(value: str | None) -> None:
    """Mask ``value`` (and its percent-encoded forms) in every later :func:`redact`."""
    if not value or len(value) < _MIN_LEN:
        return
    forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote(value)}
    with _LOCK:
        _SEEN.update(f for f in forms if len(f) >= _MIN_LEN)


def userinfo_split(uri: str) -> tuple[str, str, str] | None:
    """``(scheme://, userinfo, rest)`` of a URI holding credentials, else None; the userinfo
    runs to the last ``@``, so a password with an unencoded ``/?#@`` stays whole."""
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*://)(.*)$", uri, re.S)
    if not match:
        return None
    head, tail = match.groups()
    at = tail.rfind("@")
    if at < 0:
        return None
    return head, tail[:at], tail[at + 1 :]


def remember_uri(uri: str) -> None:
    """Remember the credentials of a source URI (password, user:password, their Basic header)."""
    parts = userinfo_split(uri)
    if parts is None:
        return
    userinfo = parts[1]
    user, _, password = userinfo.partition(":")
    plain_user, plain_pw = urllib.parse.unquote(user), urllib.parse.unquote(password)
    for value in (password, plain_pw, userinfo if password else ""):
        remember_secret(value)
    if plain_pw:
        remember_secret(f"{plain_user}:{plain_pw}")
        remember_secret(base64.b64encode(f"{plain_user}:{plain_pw}".encode()).decode())


def _known() -> list[str]:
    env = [os.environ.get(name, "") for name in SECRET_ENV]
    with _LOCK:
        found = set(_SEEN)
    found.update(v for v in env if len(v) >= _MIN_LEN)
    return sorted(found, key=len, reverse=True)  # longest first: a secret inside another


def _mask_url(match: re.Match[str]) -> str:
    head, rest = match.group(1), match.group(2)
    at = rest.rfind("@")
    if at >= 0:
        rest = MASK + rest[at:]
    return head + _QUERY_SECRET.sub(r"\1" + MASK, rest)


def redact(text: object) -> str:
    """``text`` with every known secret and every URL's credentials masked by ``***``."""
    out = str(text)
    for secret in _known():
        if secret in out:
            out = out.replace(secret, MASK)
    if "://" in out:
        out = _URL.sub(_mask_url, out)
    return out


def redact_uri(uri: str) -> str:
    """A source URI fit for labels and messages: ``scheme://***@host/...``, passwords in the
    query masked; a URI without credentials is returned unchanged."""
    parts = userinfo_split(uri)
    if parts is not None:
        head, _userinfo, rest = parts
        uri = f"{head}{MASK}@{rest}"
    base, sep, query = uri.partition("?")
    if sep:
        query = _QUERY_SECRET.sub(r"\1" + MASK, "&" + query)[1:]
        uri = f"{base}?{query}"
    return uri




def public_url(url: str) -> str:
    """``url`` fit for a link a report shows: without its userinfo (user and password) and
    without the query parameters that hold secrets (``password=``, ``token=``...); the scheme
    and host in lower case."""
    url = url.strip()
    found = userinfo_split(url)  # to the last "@": a password may hold "/", "?", "#" or "@"
    if found is not None:
        url = found[0] + found[2]
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.lower()
    query = "&".join(p for p in parts.query.split("&")
                     if p and not _QUERY_SECRET.match("&" + p))  # fmt: skip
    return urllib.parse.urlunsplit((parts.scheme.lower(), netloc, parts.path, query,
                                    parts.fragment))


def ui_link(base: str, path: str = "", fragment: str = "") -> str:
    """A link into the web UI served at ``base`` (:func:`public_url`: no credentials): ``path``
    (already quoted) below its path, then its query, then ``#fragment`` (``base``'s own left
    out)."""
    parts = urllib.parse.urlsplit(public_url(base))
    below = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, below, parts.query, fragment))
