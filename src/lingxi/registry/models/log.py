"""The transparency log: a hash chain of every accepted write and its signed head.

Entry ``n`` is ``{seq, kind, record_id, record_sha256, prev, time}`` where
``record_sha256`` is SHA-256 of the canonical JSON of the record written and
``prev`` the hash of entry ``n-1`` (64 zeros for the first). An entry's hash
is SHA-256 of ``b"lingxi/registry/log/v1|"`` + its canonical JSON. The head
``{v, size, head, server_public_key, timestamp}`` is signed by the registry's
key. A client that kept records (and earlier heads) can check them against
any later head: a server that rewrote, dropped or reordered history cannot
produce a chain that matches both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.registry.models.keys import ServerKey, is_hex, verify

ZERO = "0" * 64
ENTRY_DOMAIN = b"lingxi/registry/log/v1|"
HEAD_DOMAIN = b"lingxi/registry/log-head/v1|"
ENTRY_FIELDS = ("seq", "kind", "record_id", "record_sha256", "prev", "time")


def record_hash(record: dict[str, Any]) -> str:
    return sha256_hex(canonical_bytes(record))


def entry_hash(entry: dict[str, Any]) -> str:
    return sha256_hex(ENTRY_DOMAIN + canonical_bytes({k: entry[k] for k in ENTRY_FIELDS}))


def make_entry(seq: int, kind: str, record_id: str, record: dict[str, Any], prev: str,
               time: int) -> dict[str, Any]:
    entry = {"seq": seq, "kind": kind, "record_id": record_id,
             "record_sha256": record_hash(record), "prev": prev, "time": int(time)}
    return {**entry, "hash": entry_hash(entry)}


def sign_head(key: ServerKey, size: int, head: str, timestamp: int) -> dict[str, Any]:
    body = {"v": 1, "size": size, "head": head, "server_public_key": key.public_hex,
            "timestamp": int(timestamp)}
    return {**body, "signature": key.sign(HEAD_DOMAIN + canonical_bytes(body)).hex()}


def head_signature_ok(head: Any) -> bool:
    if not isinstance(head, dict):
        return False
    body = {k: v for k, v in head.items() if k != "signature"}
    key, signature = head.get("server_public_key"), head.get("signature")
    return (is_hex(key, 64) and is_hex(signature, 128)
            and verify(key, bytes.fromhex(signature), HEAD_DOMAIN + canonical_bytes(body)))


@dataclass
class LogCheck:
    """The outcome of checking a log copy, local records and old heads against a head."""

    size: int = 0
    head: str = ZERO
    records_checked: int = 0
    heads_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "size": self.size, "head": self.head,
                "records_checked": self.records_checked, "heads_checked": self.heads_checked,
                "problems": self.problems}


def check_log(head: dict[str, Any], entries: list[dict[str, Any]], *,
              records: dict[int, dict[str, Any]] | None = None,
              earlier_heads: list[dict[str, Any]] | None = None,
              pinned_key: str | None = None) -> LogCheck:
    """Recompute the chain and check it ends at the signed ``head``.

    ``records`` (seq -> record a client received) must hash to their entries;
    each of ``earlier_heads`` (heads signed before) must be a prefix of this
    chain; ``pinned_key`` (the key first seen) must have signed ``head``.
    """
    out = LogCheck()
    if not head_signature_ok(head):
        out.problems.append("the log head's signature does not verify")
    if pinned_key is not None and head.get("server_public_key") != pinned_key:
        out.problems.append("the log head is signed by another key than the one first seen")
    hashes = [ZERO]
    for position, entry in enumerate(entries, 1):
        try:
            ok = (entry["seq"] == position and entry["prev"] == hashes[-1]
                  and entry.get("hash", entry_hash(entry)) == entry_hash(entry))
        except (KeyError, TypeError):
            ok = False
        if not ok:
            out.problems.append(f"log entry {position} does not chain (changed, dropped or "
                                "reordered)")
            break
        hashes.append(entry_hash(entry))
    out.size, out.head = len(hashes) - 1, hashes[-1]
    if not out.problems and (head.get("size") != out.size or head.get("head") != out.head):
        out.problems.append(f"the chain of {out.size} entries does not end at the signed head "
                            f"(size {head.get('size')})")
    for seq, record in sorted((records or {}).items()):
        out.records_checked += 1
        if not 1 <= seq <= len(entries):
            out.problems.append(f"record {seq} is missing from the log")
        elif entries[seq - 1].get("record_sha256") != record_hash(record):
            out.problems.append(f"record {seq} differs from what the log recorded")
    for old in earlier_heads or []:
        out.heads_checked += 1
        size = old.get("size")
        if not isinstance(size, int) or not 0 <= size < len(hashes):
            out.problems.append(f"an earlier head of size {size} is longer than this log")
        elif hashes[size] != old.get("head"):
            out.problems.append(f"the log was rewritten: an earlier signed head of size {size} "
                                "is not a prefix of it")
    return out
