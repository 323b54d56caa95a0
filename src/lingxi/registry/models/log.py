"""The transparency log: every accepted write is a leaf of an RFC 9162 Merkle tree.

Entry ``n`` is ``{seq, kind, record_id, record_sha256, time}``, where
``record_sha256`` is SHA-256 of the canonical JSON of the record written; its
leaf is ``leaf_hash(b"lingxi/registry/log/v2|" + canonical(entry))``. The head
a server hands out is ``{v: 2, size, root, origin, server_public_key,
timestamp, checkpoint}`` where ``checkpoint`` is the C2SP signed note
(:mod:`lingxi.registry.models.checkpoint`) that actually carries the
signature; the other fields are a convenience and must agree with it.

:func:`check_log` is the full audit (every entry re-hashed, the tree rebuilt);
the O(log n) checks a client runs between audits are in
:mod:`lingxi.registry.client.ledger`, with the proofs of
:mod:`lingxi.registry.models.merkle`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lingxi.canonical import canonical_bytes, canonical_json, sha256_hex
from lingxi.registry.models.checkpoint import CheckpointError, open_checkpoint, sign_checkpoint
from lingxi.registry.models.keys import ServerKey, is_hex
from lingxi.registry.models.merkle import EMPTY, MemoryTree, leaf_hash

ZERO = "0" * 64
ENTRY_DOMAIN = b"lingxi/registry/log/v2|"
ENTRY_FIELDS = ("seq", "kind", "record_id", "record_sha256", "time")
MAX_AGE = 600  # seconds a head may be older (or newer) than the client's clock


def record_hash(record: dict[str, Any]) -> str:
    return sha256_hex(canonical_bytes(record))


def entry_leaf(entry: dict[str, Any]) -> bytes:
    """The Merkle leaf hash of an entry (raises KeyError/TypeError on a malformed one)."""
    return leaf_hash(ENTRY_DOMAIN + canonical_bytes({k: entry[k] for k in ENTRY_FIELDS}))


def make_entry(seq: int, kind: str, record_id: str, record: dict[str, Any],
               time: int, record_text: str | None = None) -> dict[str, Any]:
    """The log entry of ``record``; ``record_text``, when the caller has it, is
    ``canonical_json(record)`` (what the log stores), so it is not encoded twice."""
    if record_text is None:
        record_text = canonical_json(record)
    entry = {"seq": seq, "kind": kind, "record_id": record_id,
             "record_sha256": sha256_hex(record_text.encode("utf-8")), "time": int(time)}
    return {**entry, "hash": entry_leaf(entry).hex()}


def sign_head(key: ServerKey, origin: str, size: int, root: bytes, timestamp: int
              ) -> dict[str, Any]:
    note = sign_checkpoint(key, origin, size, root, int(timestamp))
    return {"v": 2, "size": size, "root": root.hex(), "origin": origin,
            "server_public_key": key.public_hex, "timestamp": int(timestamp),
            "checkpoint": note}


def head_problem(head: Any, *, pinned_key: str | None = None, origin: str | None = None,
                 now: float | None = None, max_age: int = MAX_AGE) -> str | None:
    """Why ``head`` cannot be trusted (signature, key, origin, freshness), or None."""
    if not isinstance(head, dict) or not is_hex(head.get("server_public_key"), 64):
        return "the log head is malformed"
    key = pinned_key or head["server_public_key"]
    if head["server_public_key"] != key:
        return "the log head is signed by another key than the one first seen"
    try:
        point = open_checkpoint(str(head.get("checkpoint") or ""), key, origin=origin)
    except CheckpointError as error:
        return f"the log head's checkpoint does not verify: {error.message}"
    if (head.get("size"), head.get("root"), head.get("timestamp"), head.get("origin")) != (
            point.size, point.root.hex(), point.time, point.origin):
        return "the log head's fields differ from its signed checkpoint"
    if now is not None and abs(now - point.time) > max_age:
        return (f"the log head is stale: signed at {point.time}, {int(now - point.time)} s "
                "from this clock")
    return None


def head_signature_ok(head: Any) -> bool:
    return head_problem(head) is None


def root_of(head: dict[str, Any]) -> bytes:
    return bytes.fromhex(head["root"])


@dataclass
class LogCheck:
    """The outcome of checking a log copy, local records and old heads against a head."""

    size: int = 0
    root: str = EMPTY.hex()
    records_checked: int = 0
    heads_checked: int = 0
    requests_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "size": self.size, "root": self.root,
                "records_checked": self.records_checked, "heads_checked": self.heads_checked,
                "requests_checked": self.requests_checked, "problems": self.problems}


def check_log(head: dict[str, Any], entries: list[dict[str, Any]], *,
              records: dict[int, dict[str, Any]] | None = None,
              earlier_heads: list[dict[str, Any]] | None = None,
              pinned_key: str | None = None) -> LogCheck:
    """The full audit: re-hash every entry, rebuild the tree, compare with ``head``.

    ``records`` (seq -> record) must hash to their entries; each of
    ``earlier_heads`` must be the root of a prefix of this tree;
    ``pinned_key`` (the key first seen) must have signed ``head``.
    """
    out = LogCheck()
    problem = head_problem(head, pinned_key=pinned_key)
    if problem:
        out.problems.append(problem)
    tree = MemoryTree()
    for position, entry in enumerate(entries, 1):
        try:
            leaf = entry_leaf(entry)
            ok = entry["seq"] == position and entry.get("hash", leaf.hex()) == leaf.hex()
        except (KeyError, TypeError, AttributeError):
            ok = False
        if not ok:
            out.problems.append(f"log entry {position} is malformed, out of order or does not "
                                "hash to its leaf")
            break
        tree.append(leaf)
    out.size, out.root = tree.size, tree.root().hex()
    if not out.problems and (head.get("size") != out.size or head.get("root") != out.root):
        out.problems.append(f"the tree of {out.size} entries does not have the signed root "
                            f"(size {head.get('size')})")
    for seq, record in sorted((records or {}).items()):
        out.records_checked += 1
        if not 1 <= seq <= tree.size:
            out.problems.append(f"record {seq} is missing from the log")
        elif entries[seq - 1].get("record_sha256") != record_hash(record):
            out.problems.append(f"record {seq} differs from what the log recorded")
    for old in earlier_heads or []:
        out.heads_checked += 1
        size = old.get("size")
        if not isinstance(size, int) or not 0 <= size <= tree.size:
            out.problems.append(f"an earlier head of size {size} is longer than this log")
        elif tree.root(size).hex() != old.get("root"):
            out.problems.append(f"the log was rewritten: an earlier signed head of size {size} "
                                "is not a prefix of it")
    return out
