"""Names from the data made safe for each place they are shown, one boundary function per output.

A run name is whatever a user (or an attacker) logged: a newline in it can forge a GitHub
annotation (``x\\n::error::FORGED``), an ANSI escape clear the terminal, ``@everyone`` ping
people. :func:`for_terminal` shows control, separator and bidi characters escaped (one logical
line stays one line); :func:`for_annotation`, :func:`for_markdown`, :func:`for_message`,
:func:`for_json`, :func:`for_document` and the chat webhooks' :func:`for_slack`
and :func:`for_chat` build on it. No line of any output can begin with ``::`` from the data
(:func:`no_command`).
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from saturate.ingest.redaction import redact

ZWSP = "\u200b"
# C0 and C1 controls, DEL, line/paragraph separators, bidirectional marks, embeddings, overrides
# and isolates ("Trojan Source"), the BOM.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
# @name as GitHub resolves mentions (users, teams as @org/team); also at the start of the text.
_MENTION = re.compile(r"(^|[^\w`])@(?=[A-Za-z0-9])")


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: Any) -> str:
    """``text`` as one printable line: control characters, escapes and separators shown escaped
    (``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\u2028``, ...), and a leading ``::`` (a CI
    workflow command when it starts a line) as ``\\x3a:``; everything else unchanged."""
    s = str(text)
    s = _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s
    return no_command(s)


def no_command(text: str, colon: str = "\\x3a") -> str:
    """``text`` with a leading ``::`` (after spaces) written ``<colon>:``, so that it never starts
    a line GitHub Actions reads as a workflow command (``::error::``, ``::stop-commands::``)."""
    stripped = text.lstrip()
    if not stripped.startswith("::"):
        return text
    return text[: len(text) - len(stripped)] + colon + stripped[1:]


def escape_data(text: str) -> str:
    """A workflow-command message: ``%``, CR and LF percent-encoded (GitHub's toolkit rules)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow-command property value: also ``:`` and ``,`` encoded."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def for_annotation(text: Any, *, prop: bool = False) -> str:
    """``text`` for a GitHub workflow command: one line (:func:`for_terminal`), then
    :func:`escape_data`, or :func:`escape_property` for a property value (``prop=True``)."""
    return (escape_property if prop else escape_data)(for_terminal(text))


def for_markdown(text: Any) -> str:
    """``text`` safe in a Markdown table cell or paragraph: no markup, links, HTML or line breaks,
    and no ``@mention`` (a zero-width space after the ``@``)."""
    s = re.sub(r"[\r\n\t\u2028\u2029]+", " ", str(text))
    s = _UNSAFE.sub("", s)
    s = "".join(_MD_HTML.get(ch, ch) for ch in s)
    # Entities made above must keep their '&...;' intact, so escape punctuation outside them only.
    parts = re.split(r"(&(?:amp|lt|gt|quot);)", s)
    s = "".join(p if p.startswith("&") and p.endswith(";") else _MD_SPECIAL.sub(r"\\\1", p)
                for p in parts)  # fmt: skip
    return no_command(_MENTION.sub(lambda m: f"{m.group(1)}@{ZWSP}", s), colon="\\:")


# Left as they are in a link's path, query and fragment: the URL's own delimiters and the
# characters that need no quoting; parentheses, brackets, quotes, spaces, ``<>``, ``|``, ``\``
# and backticks are percent-encoded (they could end a Markdown link or an HTML attribute).
_URL_KEEP = "/:?#@!$&*+,;=%-._~"


def for_url(url: Any) -> str | None:
    """``url`` fit as a link target in Markdown and HTML, or None when it is no ``http(s)`` URL
    (no ``javascript:``, no relative path): its host as it is, its path, query and fragment
    with every character that could end a link or attribute percent-encoded; credentials left
    out (its userinfo) or masked (:func:`~saturate.ingest.redaction.redact`)."""
    if not isinstance(url, str) or _UNSAFE.search(url) or " " in url.strip():
        return None
    parts = urllib.parse.urlsplit(redact(url.strip()))
    host = parts.netloc.rpartition("@")[2]
    if parts.scheme.lower() not in ("http", "https") or not re.fullmatch(r"[A-Za-z0-9._\-:\[\]]+",
                                                                          host):
        return None
    path, query, fragment = (urllib.parse.quote(x, safe=_URL_KEEP)
                             for x in (parts.path, parts.query, parts.fragment))
    return urllib.parse.urlunsplit((parts.scheme.lower(), host, path, query, fragment))


def markdown_link(text: Any, url: Any) -> str:
    """``[text](url)`` with ``text`` as :func:`for_markdown` makes it and ``url`` as
    :func:`for_url` does; the text alone when ``url`` is none or no ``http(s)`` URL."""
    target = for_url(url) if url else None
    return f"[{for_markdown(text)}]({target})" if target else for_markdown(text)


def fit_lines(text: str, width: int) -> str:
    """``text`` with each line longer than ``width`` wrapped between words (never inside one, a
    hyphen included), its continuation indented four past the line's own indent; a word longer
    than the width stays whole on a line of its own."""
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


def _no_mention(text: str) -> str:
    return _MENTION.sub(lambda m: f"{m.group(1)}@{ZWSP}", text)


def for_slack(text: Any) -> str:
    """``text`` in a Slack message (mrkdwn): one line, ``&``, ``<`` and ``>`` as Slack's entities
    ``&amp;``, ``&lt;``, ``&gt;`` (so ``<!channel>`` or ``<https://x|label>`` in a name shows as
    typed, never a mention or a disguised link), and no ``@mention``."""
    s = for_terminal(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _no_mention(s)


def for_chat(text: Any) -> str:
    """``text`` for a chat webhook whose markup is not known (Mattermost, Discord, Google Chat, a
    Slack or Teams behind another host): :func:`for_slack`, and Markdown's link brackets (and
    the backslash) escaped, so that neither ``<url|label>`` nor ``[label](url)`` makes a link;
    emphasis is left alone (at worst a name shows in italics)."""
    return re.sub(r"([\\\[\]])", r"\\\1", for_slack(text))


def for_message(text: Any) -> str:
    """An error or warning line: credentials redacted, then shown as one terminal line."""
    return for_terminal(redact(text))


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def for_json(document: str) -> str:
    """JSON text written with ``ensure_ascii=False`` with DEL, C1 controls, line separators and
    bidirectional marks as ``\\uXXXX`` escapes (JSON escapes C0 controls itself): the same
    string to a parser, nothing that reorders or breaks a line on screen."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", document)


def for_document(text: Any) -> str:
    """Text of a multi-line document (JUnit XML): as :func:`for_terminal`, but line breaks and tabs
    kept; no line of it begins with ``::``."""
    s = str(text)
    if _UNSAFE.search(s):
        s = _UNSAFE.sub(lambda m: m.group(0) if m.group(0) in "\n\t" else _escape(m), s)
    return "\n".join(no_command(line) for line in s.split("\n"))
