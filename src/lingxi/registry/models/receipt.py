"""A pure check of the session receipts posted to the registry.

The receipt format is the session layer's (``lingxi.session.record.receipts``):
``{kind: "lingxi.session.receipt/1", session_id, protocol_id, role,
public_key, status, chains, head, handshake?, signature}``, signed with
Ed25519 over ``b"lingxi/session/receipt/v1|"`` + the canonical JSON of the
other fields. The registry has no transcript, so it checks what it can: the
signature, that the signer is the party of the registry's session in that
role and that the protocol is the invitation's, that the head is the
combination of the chain heads, and, once both are in, that the two receipts
describe one run (same wire session and handshake, and chains that agree
where their counts agree). The combine rule is re-implemented here rather
than imported, so the server never imports the session layer.
"""

from __future__ import annotations

from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.registry.models.keys import is_hex, verify

KIND = "lingxi.session.receipt/1"
DOMAIN = b"lingxi/session/receipt/v1|"
DIRECTIONS = ("host_to_guest", "guest_to_host")
MAX_BYTES = 16384


def _combined(chains: Any) -> str | None:
    if not isinstance(chains, dict):
        return None
    try:
        for d in DIRECTIONS:
            item = chains[d]
            if (not isinstance(item, dict) or not isinstance(item.get("count"), int)
                    or not is_hex(item.get("head"), 64)):
                return None
        return sha256_hex(canonical_bytes({d: chains[d] for d in DIRECTIONS}))
    except (KeyError, TypeError):
        return None


def receipt_problems(receipt: Any, *, role: str, public_key: str, protocol_id: str
                     ) -> list[str]:
    """Problems with one receipt for the party ``role`` holding ``public_key``."""
    if not isinstance(receipt, dict):
        return ["the receipt is not an object"]
    problems = []
    if receipt.get("kind") != KIND:
        problems.append(f"the receipt kind is not {KIND}")
    if receipt.get("role") != role:
        problems.append(f"the receipt's role is not {role}")
    if receipt.get("public_key") != public_key:
        problems.append("the receipt is not signed by this party's identity key")
    if receipt.get("protocol_id") != protocol_id:
        problems.append("the receipt names another protocol")
    if not isinstance(receipt.get("session_id"), str) or not isinstance(receipt.get("status"),
                                                                        str):
        problems.append("the receipt lacks a session id or a status")
    if _combined(receipt.get("chains")) is None or receipt.get("head") != _combined(
            receipt.get("chains")):
        problems.append("the receipt's head does not match its chain heads")
    body = {k: v for k, v in receipt.items() if k != "signature"}
    signature = receipt.get("signature")
    try:
        ok = is_hex(signature, 128) and verify(public_key, bytes.fromhex(signature),
                                               DOMAIN + canonical_bytes(body))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        problems.append("the receipt's Ed25519 signature does not verify")
    return problems


def pair_problems(host: dict[str, Any], guest: dict[str, Any]) -> list[str]:
    """Problems with two individually valid receipts taken together."""
    problems = []
    if host.get("session_id") != guest.get("session_id"):
        problems.append("the two receipts name different wire sessions")
    if host.get("handshake") != guest.get("handshake"):
        problems.append("the two receipts belong to different handshakes")
    for d in DIRECTIONS:
        a, b = host["chains"][d], guest["chains"][d]
        if a["count"] == b["count"] and a["head"] != b["head"]:
            problems.append(f"the receipts disagree on the {d} chain")
    return problems
