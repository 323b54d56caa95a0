"""Ed25519-signed receipts over a transcript, and the check of a peer's receipt.

A receipt states the counts and heads its signer saw and is valid against any
transcript with that prefix, so a message still in flight when a side
finished does not break it. A peer's receipt is untrusted input: every field
is type-checked before use, and a malformed one is reported, never raised.
Both drivers settle the exchange with :func:`settle`.
"""

from __future__ import annotations

from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.roles import RESULTS
from lingxi.session.record.transcript import DIRECTIONS, Transcript, combine

RECEIPT_DOMAIN = b"lingxi/session/receipt/v1|"
KIND = "lingxi.session.receipt/1"
MALFORMED = "receipt.malformed"
_HEX64 = frozenset("0123456789abcdef")


def receipt_body(transcript: Transcript, *, session_id: str, protocol_id: str, role: str,
                 public_key: str, status: str, handshake: str | None = None,
                 result: str | None = None) -> dict[str, Any]:
    """What a side signs. ``handshake`` (the wire handshake's transcript hash) binds the
    receipt to the authenticated channel both sides derived their keys from; ``result``
    (one of :data:`~lingxi.roles.RESULTS`, only for a completed game) is who won as this
    side saw it: the registry rates a session only when both receipts name the same one."""
    heads = transcript.heads()
    body = {"kind": KIND, "session_id": session_id, "protocol_id": protocol_id, "role": role,
            "public_key": public_key, "status": status, "chains": heads, "head": combine(heads)}
    if handshake is not None:
        body["handshake"] = handshake
    if result is not None:
        body["result"] = result
    return body


def result_of(status: str, summary: dict[str, Any]) -> str | None:
    """The result a side signs: the summary's ``winner`` when the session completed and the
    winner is a side or a draw (the hooks and the engine's verdict write it), else none."""
    winner = summary.get("winner")
    return winner if status == "completed" and winner in RESULTS else None


def sign_receipt(body: dict[str, Any], identity: Any) -> dict[str, Any]:
    signature = identity.sign(RECEIPT_DOMAIN + canonical_bytes(body)).hex()
    return {**body, "signature": signature}


def receipt_hash(receipt: dict[str, Any]) -> str:
    return sha256_hex(canonical_bytes(receipt))


def _hex(value: Any, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and set(value) <= _HEX64


def shape_problems(receipt: Any) -> list[str]:
    """What is wrong with the receipt's shape (empty: every field has its type)."""
    if not isinstance(receipt, dict):
        return [f"{MALFORMED}: the receipt is not an object"]
    problems = []
    for key in ("kind", "session_id", "protocol_id", "role", "status"):
        if not isinstance(receipt.get(key), str):
            problems.append(f"{MALFORMED}: {key} is not text")
    if not _hex(receipt.get("public_key"), 64):
        problems.append(f"{MALFORMED}: public_key is not 64 hex characters")
    if not _hex(receipt.get("signature"), 128):
        problems.append(f"{MALFORMED}: signature is not 128 hex characters")
    if not _hex(receipt.get("head"), 64):
        problems.append(f"{MALFORMED}: head is not 64 hex characters")
    if "handshake" in receipt and not isinstance(receipt["handshake"], str):
        problems.append(f"{MALFORMED}: handshake is not text")
    if "result" in receipt and receipt["result"] not in RESULTS:
        problems.append(f"{MALFORMED}: result is not one of {', '.join(RESULTS)}")
    chains = receipt.get("chains")
    if not isinstance(chains, dict) or set(chains) != set(DIRECTIONS):
        problems.append(f"{MALFORMED}: chains is not an object of both directions")
    else:
        for direction in DIRECTIONS:
            item = chains[direction]
            if not isinstance(item, dict) or type(item.get("count")) is not int \
                    or item["count"] < 0 or not _hex(item.get("head"), 64) or len(item) != 2:
                problems.append(f"{MALFORMED}: chains.{direction} is not {{count, head}}")
    return problems


def check_receipt(receipt: Any, transcript: Transcript, *, public_key: str | None = None,
                  session_id: str | None = None, handshake: str | None = None) -> list[str]:
    """Problems with ``receipt`` against ``transcript`` (empty list: valid)."""
    from lingxi.wire.identity import verify_ed25519

    problems = shape_problems(receipt)
    if problems:
        return problems
    body = {k: v for k, v in receipt.items() if k != "signature"}
    if public_key is not None and receipt["public_key"] != public_key:
        problems.append("the receipt is signed by another key than the peer's identity")
    try:
        ok = verify_ed25519(receipt["public_key"], bytes.fromhex(receipt["signature"]),
                            RECEIPT_DOMAIN + canonical_bytes(body))
    except (ValueError, TypeError):
        ok = False
    if not ok:
        problems.append("the receipt's Ed25519 signature does not verify")
    if receipt["head"] != combine(receipt["chains"]):
        problems.append("the receipt's head does not match its chain heads")
    elif not transcript.has_prefix(receipt["chains"]):
        problems.append("the receipt's chain heads are not in this transcript")
    if session_id is not None and receipt["session_id"] != session_id:
        problems.append("the receipt names another session")
    if handshake is not None and receipt.get("handshake") != handshake:
        problems.append("the receipt belongs to another handshake")
    return problems


def settle(mine: dict[str, Any], peer: Any, transcript: Transcript, *, peer_key: str,
           session_id: str, handshake: str | None = None) -> dict[str, Any]:
    """The receipts.json record for a finished session, whatever the peer sent."""
    problems = (check_receipt(peer, transcript, public_key=peer_key, session_id=session_id,
                              handshake=handshake)
                if peer is not None else ["no receipt from the peer"])
    peer_hash = None
    if peer is not None:
        try:
            peer_hash = receipt_hash(peer)
        except (TypeError, ValueError, RecursionError):
            peer_hash = None
    return {"local": mine, "peer": peer, "peer_problems": problems,
            "local_hash": receipt_hash(mine), "peer_hash": peer_hash}
