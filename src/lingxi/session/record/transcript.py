"""Hash-chained transcript of every envelope, kept as chain heads and counts.

Each direction (host_to_guest, guest_to_host) has its own chain, because in a
free conversation two messages may cross in flight and the sides then see a
different interleaving; within one direction the order is the same on both
sides. Link i of a chain is ``sha256(prev + ":" + sha256(canonical(envelope)))``
(``prev`` is 64 zeros for the first link), where ``envelope`` is the envelope
object exactly as it was signed and sent (or received and accepted), in the
canonical JSON form. The transcript head combines both chain heads with their
counts.

Memory stays flat however long a session runs: entries go to
``transcript.jsonl`` as they happen and only the heads of the last
:data:`RECENT` links per direction are kept, enough to check a peer's receipt
that stopped a few messages earlier (messages still in flight when it
finished).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import field
from pathlib import Path
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.records import Record, record
from lingxi.session.errors import SessionError, SessionFailed

ZERO = "0" * 64
DIRECTIONS = ("host_to_guest", "guest_to_host")
RECENT = 1024  # links per direction kept: a receipt may stop this many messages short


def link(prev: str, envelope: dict[str, Any]) -> str:
    return _link(prev, canonical_bytes(envelope))


def _link(prev: str, encoded: bytes) -> str:
    return sha256_hex(f"{prev}:{sha256_hex(encoded)}".encode())


def combine(heads: dict[str, dict[str, Any]]) -> str:
    return sha256_hex(canonical_bytes({d: heads[d] for d in DIRECTIONS}))


def _recent() -> dict[str, deque[str]]:
    return {d: deque([ZERO], maxlen=RECENT) for d in DIRECTIONS}


@record
class Transcript(Record):
    """The chains as they grow: counts, the recent heads, and the entry count."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DIRECTIONS, 0))
    recent: dict[str, deque[str]] = field(default_factory=_recent)
    entries: int = 0
    last_size: int = 0  # canonical bytes of the envelope added last
    last_encoded: bytes = b""  # and those bytes (until the next add)

    def add(self, direction: str, envelope: dict[str, Any], local: str,
            encoded: bytes | None = None) -> dict[str, Any]:
        """Append an envelope (``local`` = "sent" | "received" | "late"); return its entry.

        ``encoded``: the envelope's canonical JSON when the caller has it already
        (it is then encoded once for the link and the line, see :func:`entry_line`).
        """
        chain = self.recent[direction]
        prev = chain[-1]
        if encoded is None:
            encoded = canonical_bytes(envelope)
        self.last_encoded = encoded
        self.last_size = len(encoded)
        digest = _link(prev, encoded)
        chain.append(digest)
        self.counts[direction] += 1
        self.entries += 1
        return {"n": self.entries, "direction": direction, "local": local,
                "index": self.counts[direction], "prev": prev, "hash": digest,
                "envelope": envelope}

    def heads(self) -> dict[str, dict[str, Any]]:
        return {d: {"count": self.counts[d], "head": self.recent[d][-1]} for d in DIRECTIONS}

    def head(self) -> str:
        return combine(self.heads())

    def head_at(self, direction: str, count: int) -> str | None:
        """The chain head after ``count`` links, while it is among the recent ones."""
        back = self.counts[direction] - count
        chain = self.recent[direction]
        if not 0 <= back < len(chain):
            return None
        return chain[-1 - back]

    def has_prefix(self, heads: dict[str, Any]) -> bool:
        """Whether this transcript contains exactly the chains a receipt names, as a prefix."""
        for d in DIRECTIONS:
            item = heads.get(d)
            if not isinstance(item, dict):
                return False
            count = item.get("count")
            if type(count) is not int or self.head_at(d, count) != item.get("head"):
                return False
        return True


def entry_line(entry: dict[str, Any], encoded: bytes) -> bytes:
    """transcript.jsonl's line for ``entry`` whose envelope's canonical JSON is ``encoded``:
    the canonical JSON of the whole entry, assembled without encoding the envelope again
    (keys in sorted order; every other value is a plain string or integer)."""
    return b'{"direction":"%s","envelope":%s,"hash":"%s","index":%d,"local":"%s","n":%d,' \
        b'"prev":"%s"}\n' % (entry["direction"].encode(), encoded, entry["hash"].encode(),
                             entry["index"], entry["local"].encode(), entry["n"],
                             entry["prev"].encode())


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_entries(path: Path):
    """Yield ``(line number, entry)`` from transcript.jsonl; raise on unreadable lines."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise SessionError("session.unreadable", f"cannot read {path}: {error}") from None
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line, parse_constant=_no_constant)
                    if not isinstance(entry, dict) or entry.get("direction") not in DIRECTIONS \
                            or not isinstance(entry.get("envelope"), dict):
                        raise ValueError("bad direction or envelope")
                except (ValueError, RecursionError) as error:
                    raise SessionFailed("transcript.malformed",
                                        f"{path}:{number}: {error}") from None
                yield number, entry
        except UnicodeDecodeError as error:
            raise SessionFailed("transcript.malformed", f"{path}: not UTF-8 ({error.reason})"
                                ) from None


def load_transcript(path: Path, entries: list[dict[str, Any]] | None = None) -> Transcript:
    """Re-read transcript.jsonl and recompute every link; raise on any break.

    Pass a list as ``entries`` to collect the entries (for an offline flow check).
    """
    transcript = Transcript()
    for number, entry in read_entries(path):
        recomputed = transcript.add(entry["direction"], entry["envelope"], "?")
        if entry.get("hash") != recomputed["hash"] or entry.get("prev") != recomputed["prev"]:
            raise SessionFailed("transcript.broken_chain",
                                f"{path}:{number}: the hash chain breaks here (an envelope "
                                "was changed, removed or reordered)",
                                details={"line": number, "recorded": entry.get("hash"),
                                         "recomputed": recomputed["hash"]})
        if entries is not None:
            entries.append(entry)
    return transcript
