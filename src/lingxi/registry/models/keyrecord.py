"""The log record that makes a server key current: the first key, or a rotation.

``server = {public_key, previous, reason, proof, endorsement}``: ``proof`` is the
new key's signature and ``endorsement`` the previous key's (None for a first
key) over ``b"lingxi/registry/key/v1|" + canonical({public_key, previous})``. A
client that pinned the previous key accepts the new one only when the
endorsement verifies; a key change without it is what a stolen-database or
hostile-operator takeover would look like, and is refused.
"""

from __future__ import annotations

from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.registry.models.keys import ServerKey, is_hex, verify

DOMAIN = b"lingxi/registry/key/v1|"


def _statement(public_key: str, previous: str | None) -> bytes:
    return DOMAIN + canonical_bytes({"public_key": public_key, "previous": previous})


def key_record(new: ServerKey, previous: ServerKey | None, *, reason: str) -> dict[str, Any]:
    """The whole log record (``request`` is None: no agent asked for it)."""
    prev_hex = previous.public_hex if previous else None
    statement = _statement(new.public_hex, prev_hex)
    server = {"public_key": new.public_hex, "previous": prev_hex, "reason": reason,
              "proof": new.sign(statement).hex(),
              "endorsement": previous.sign(statement).hex() if previous else None}
    return {"kind": "server_key", "id": new.public_hex, "request": None, "body": "",
            "server": server}


def key_record_problems(record: Any, *, previous: str | None) -> list[str]:
    """What is wrong with a ``server_key`` record that follows ``previous`` (a public hex)."""
    server = record.get("server") if isinstance(record, dict) else None
    if not isinstance(server, dict) or not is_hex(server.get("public_key"), 64):
        return ["a server_key record without a public key"]
    new, statement = server["public_key"], _statement(server["public_key"],
                                                      server.get("previous"))
    problems = []
    if server.get("previous") != previous:
        problems.append(f"server key {new[:16]}… names another previous key than the log's")
    proof = server.get("proof")
    if not (is_hex(proof, 128) and verify(new, bytes.fromhex(proof), statement)):
        problems.append(f"server key {new[:16]}… carries no proof of possession")
    if previous is not None:
        endorsement = server.get("endorsement")
        if not (is_hex(endorsement, 128)
                and verify(previous, bytes.fromhex(endorsement), statement)):
            problems.append(f"server key {new[:16]}… is not endorsed by the previous key "
                            f"{previous[:16]}…")
    return problems
