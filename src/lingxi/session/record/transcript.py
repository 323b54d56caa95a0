"""Hash-chained transcript of every envelope, and Ed25519-signed receipts over it.

Each direction (host_to_guest, guest_to_host) has its own chain, because in a
free conversation two messages may cross in flight and the sides then see a
different interleaving; within one direction the order is the same on both
sides. Link i of a chain is ``sha256(prev + ":" + sha256(canonical(envelope)))``
(``prev`` is 64 zeros for the first link). The transcript head combines both
chain heads with their counts. A receipt states the counts and heads its
signer saw and is valid against any transcript with that prefix, so a
message still in flight when a side finished does not break it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.session.errors import SessionError, SessionFailed

ZERO = "0" * 64
DIRECTIONS = ("host_to_guest", "guest_to_host")
RECEIPT_DOMAIN = b"lingxi/session/receipt/v1|"


def link(prev: str, envelope: dict[str, Any]) -> str:
    return sha256_hex(f"{prev}:{sha256_hex(canonical_bytes(envelope))}".encode())


def combine(heads: dict[str, dict[str, Any]]) -> str:
    return sha256_hex(canonical_bytes({d: heads[d] for d in DIRECTIONS}))


@dataclass
class Transcript:
    """The chains as they grow; ``entries`` are what transcript.jsonl holds."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    chains: dict[str, list[str]] = field(default_factory=lambda: {d: [ZERO] for d in DIRECTIONS})

    def add(self, direction: str, envelope: dict[str, Any], local: str) -> dict[str, Any]:
        """Append an envelope (``local`` = "sent" | "received"); return the entry."""
        chain = self.chains[direction]
        digest = link(chain[-1], envelope)
        chain.append(digest)
        entry = {"n": len(self.entries) + 1, "direction": direction, "local": local,
                 "index": len(chain) - 1, "prev": chain[-2], "hash": digest,
                 "envelope": envelope}
        self.entries.append(entry)
        return entry

    def heads(self) -> dict[str, dict[str, Any]]:
        return {d: {"count": len(self.chains[d]) - 1, "head": self.chains[d][-1]}
                for d in DIRECTIONS}

    def head(self) -> str:
        return combine(self.heads())

    def has_prefix(self, heads: dict[str, dict[str, Any]]) -> bool:
        """Whether this transcript contains exactly the chains a receipt names, as a prefix."""
        for d in DIRECTIONS:
            item = heads.get(d) or {}
            count = item.get("count")
            if not isinstance(count, int) or not 0 <= count < len(self.chains[d]):
                return False
            if self.chains[d][count] != item.get("head"):
                return False
        return True


def receipt_body(transcript: Transcript, *, session_id: str, protocol_id: str, role: str,
                 public_key: str, status: str, handshake: str | None = None) -> dict[str, Any]:
    """What a side signs. ``handshake`` (the wire handshake's transcript hash) binds the
    receipt to the authenticated channel both sides derived their keys from."""
    heads = transcript.heads()
    body = {"kind": "lingxi.session.receipt/1", "session_id": session_id,
            "protocol_id": protocol_id, "role": role, "public_key": public_key,
            "status": status, "chains": heads, "head": combine(heads)}
    if handshake is not None:
        body["handshake"] = handshake
    return body


def sign_receipt(body: dict[str, Any], identity: Any) -> dict[str, Any]:
    signature = identity.sign(RECEIPT_DOMAIN + canonical_bytes(body)).hex()
    return {**body, "signature": signature}


def receipt_hash(receipt: dict[str, Any]) -> str:
    return sha256_hex(canonical_bytes(receipt))


def check_receipt(receipt: Any, transcript: Transcript, *, public_key: str | None = None,
                  session_id: str | None = None, handshake: str | None = None) -> list[str]:
    """Problems with ``receipt`` against ``transcript`` (empty list: valid)."""
    from lingxi.wire.identity import verify_ed25519

    if not isinstance(receipt, dict):
        return ["the receipt is not an object"]
    problems = []
    body = {k: v for k, v in receipt.items() if k != "signature"}
    signature = receipt.get("signature")
    key = receipt.get("public_key")
    if public_key is not None and key != public_key:
        problems.append("the receipt is signed by another key than the peer's identity")
    try:
        ok = isinstance(signature, str) and isinstance(key, str) and verify_ed25519(
            key, bytes.fromhex(signature), RECEIPT_DOMAIN + canonical_bytes(body))
    except (ValueError, TypeError):
        ok = False
    if not ok:
        problems.append("the receipt's Ed25519 signature does not verify")
    chains = receipt.get("chains")
    if not isinstance(chains, dict) or receipt.get("head") != combine_safe(chains):
        problems.append("the receipt's head does not match its chain heads")
    elif not transcript.has_prefix(chains):
        problems.append("the receipt's chain heads are not in this transcript")
    if session_id is not None and receipt.get("session_id") != session_id:
        problems.append("the receipt names another session")
    if handshake is not None and receipt.get("handshake") != handshake:
        problems.append("the receipt belongs to another handshake")
    return problems


def combine_safe(chains: dict[str, Any]) -> str | None:
    try:
        return combine(chains)
    except (KeyError, TypeError, ValueError):
        return None


# ---------------------------------------------------------------- offline verify


def load_transcript(path: Path) -> Transcript:
    """Re-read transcript.jsonl and recompute every link; raise on any break."""
    transcript = Transcript()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise SessionError("session.unreadable", f"cannot read {path}: {error}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            direction, envelope = entry["direction"], entry["envelope"]
            if direction not in DIRECTIONS or not isinstance(envelope, dict):
                raise ValueError("bad direction or envelope")
        except (ValueError, KeyError, TypeError) as error:
            raise SessionFailed("transcript.malformed", f"{path}:{number}: {error}") from None
        recomputed = transcript.add(direction, envelope, entry.get("local", "?"))
        if entry.get("hash") != recomputed["hash"] or entry.get("prev") != recomputed["prev"]:
            raise SessionFailed("transcript.broken_chain",
                                f"{path}:{number}: the hash chain breaks here (an envelope "
                                "was changed, removed or reordered)",
                                details={"line": number, "recorded": entry.get("hash"),
                                         "recomputed": recomputed["hash"]})
    return transcript
