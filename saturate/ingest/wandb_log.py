"""The W&B transaction log (``run-<id>.wandb``) as the byte strings of its records.

The file is a LevelDB-style record log with a W&B header. It starts with 7 bytes: ``:W&B``, the
magic ``0xBEE1`` (little-endian) and the version 0. The rest is cut into 32 KiB blocks counted from
the start of the file (so the first block holds 7 bytes less); each block is a run of chunks with
a 7-byte header: a checksum (uint32), the payload's length (uint16) and its type (FULL, or FIRST,
MIDDLE..., LAST for a record spread over blocks), all little-endian. A block whose tail is too
short for a header is padded with zeros. W&B's checksum is the standard CRC-32 (zlib's, not
LevelDB's masked CRC-32C) of the type byte followed by the payload, as both of its writers (the
Python ``datastore.py`` of older releases and the Go ``leveldb`` package of wandb-core) compute it.

:func:`scan` is pure: the bytes in, the payloads of the whole records out, and where and why
reading stopped early (a run still being written, a file cut short by a crash, a bad checksum).
What was read before that point is kept; the caller says so once.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

BLOCK = 32 * 1024
HEADER = 7
_MAGIC = b":W&B" + struct.pack("<H", 0xBEE1)
_VERSION = 0
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_CHUNK = struct.Struct("<IHB")
ENDS_INSIDE = "the file ends inside a record (still being written, or cut short)"
# The CRC-32 of each chunk type's byte, the seed of its payload's checksum.
_SEED = {t: zlib.crc32(bytes([t])) for t in (_FULL, _FIRST, _MIDDLE, _LAST)}


@dataclass(frozen=True)
class LogScan:
    """What :func:`scan` read: the records' payloads in order; ``end`` the offset after the last
    whole record; ``problem`` why reading stopped before the end of the data (None: it did not)."""

    records: tuple[bytes, ...]
    end: int
    problem: str | None = None


def is_wandb_log(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a file) starts like a W&B transaction log."""
    return head[:6] == _MAGIC


def header_problem(data: bytes) -> str | None:
    """Why ``data`` is not a W&B transaction log of the version read here (None: it is)."""
    if len(data) < HEADER:
        return "shorter than the W&B header"
    if data[:6] != _MAGIC:
        return "no W&B header (not a run-<id>.wandb transaction log)"
    if data[6] != _VERSION:
        return f"W&B log version {data[6]}, only version {_VERSION} is known"
    return None


def scan(data: bytes) -> LogScan:
    """The records of a W&B transaction log (see the module docstring); ``data`` must start
    with a valid header (:func:`header_problem`)."""
    records: list[bytes] = []
    pos = end = HEADER
    parts: list[bytes] = []  # the chunks of a record spread over blocks, so far
    size = len(data)
    while True:
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # the block's zero trailer
            if data[pos:pos + left].strip(b"\0"):
                return LogScan(tuple(records), end, f"bytes other than zeros at the end of "
                                                    f"the block at {pos - pos % BLOCK}")
            pos += left
            continue
        if pos >= size:
            problem = None if not parts else ENDS_INSIDE
            return LogScan(tuple(records), end, problem)
        if pos + HEADER > size:
            return LogScan(tuple(records), end, ENDS_INSIDE)
        checksum, length, kind = _CHUNK.unpack_from(data, pos)
        if checksum == 0 and length == 0 and kind == 0 and not parts:
            if data[pos:].strip(b"\0"):
                return LogScan(tuple(records), end, f"a zeroed chunk at byte {pos}")
            return LogScan(tuple(records), end)  # space reserved but not written yet
        start, stop = pos + HEADER, pos + HEADER + length
        if length > left - HEADER:
            return LogScan(tuple(records), end, f"a chunk longer than its block at byte {pos}")
        if stop > size:
            return LogScan(tuple(records), end, ENDS_INSIDE)
        if kind not in _SEED:
            return LogScan(tuple(records), end, f"an unknown chunk type {kind} at byte {pos}")
        payload = data[start:stop]
        if zlib.crc32(payload, _SEED[kind]) != checksum:
            return LogScan(tuple(records), end, f"a checksum mismatch at byte {pos}")
        if kind == _FULL and not parts:
            records.append(payload)
            end = stop
        elif kind == _FIRST and not parts:
            parts.append(payload)
        elif kind in (_MIDDLE, _LAST) and parts:
            parts.append(payload)
            if kind == _LAST:
                records.append(b"".join(parts))
                parts, end = [], stop
        else:
            return LogScan(tuple(records), end, f"a chunk out of order at byte {pos}")
        pos = stop
