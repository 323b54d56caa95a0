"""Served facts checked against the log before a client acts on them.

A read that matters to a client — an agent's key, an invitation's endpoint
and host key, a protocol's metadata, a session's receipts — carries
``proof = {"checkpoint": head, "records": [{seq, entry, record, path}]}``:
the log records the fact comes from, each with its inclusion proof against a
signed checkpoint. The client checks the checkpoint with the key it pinned,
each proof, each record's signed request with the key the log registered for
its signer, and that every served field is what those records say. A row
edited in the database (``UPDATE agents SET public_key=…``) is served, and
refused here (``registry.unproven``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lingxi.errors import EXIT_FAILED
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import agent_id_for, is_hex
from lingxi.registry.models.log import entry_leaf, head_problem, record_hash
from lingxi.registry.models.merkle import verify_inclusion
from lingxi.registry.models.signing import SignedRequest


def unproven(reason: str) -> RegistryError:
    return RegistryError("registry.unproven", f"the registry's answer is not what its log "
                         f"proves: {reason}", status=502, exit_code=EXIT_FAILED)


class Proven:
    """The records of one answer's proof, each checked against the signed checkpoint."""

    def __init__(self, answer: Any, *, pinned_key: str, now: float) -> None:
        proof = answer.get("proof") if isinstance(answer, dict) else None
        if not isinstance(proof, dict) or not isinstance(proof.get("records"), list):
            raise unproven("it carries no proof")
        head = proof.get("checkpoint")
        problem = head_problem(head, pinned_key=pinned_key, now=now)
        if problem:
            raise unproven(problem)
        assert isinstance(head, dict)
        self.head = head
        size, root = head["size"], bytes.fromhex(head["root"])
        self.records: list[dict[str, Any]] = []
        for item in proof["records"]:
            try:
                seq, entry, record = item["seq"], item["entry"], item["record"]
                path = [bytes.fromhex(h) for h in item["path"]]
                ok = (entry["seq"] == seq and entry["record_sha256"] == record_hash(record)
                      and verify_inclusion(seq - 1, size, entry_leaf(entry), path, root))
            except (KeyError, TypeError, ValueError, AttributeError):
                ok = False
            if not ok:
                raise unproven("a record is not in the signed tree")
            self.records.append(record)

    def find(self, kind: str, record_id: str) -> dict[str, Any]:
        for record in self.records:
            if record.get("kind") == kind and record.get("id") == record_id:
                return record
        raise unproven(f"no {kind} record for {record_id[:80]}")

    def identity(self, agent_id: str) -> dict[str, Any]:
        """``{nickname, public_key}`` of the agent's self-signed identity record."""
        record = self.find("identity", agent_id)
        body = _body(record)
        key = body.get("public_key")
        if not is_hex(key, 64) or agent_id_for(key) != agent_id:
            raise unproven(f"the identity record of {agent_id} is for another key")
        _signed_by(record, agent_id, key)
        return body

    def signed_by(self, record: dict[str, Any], agent_id: str) -> dict[str, Any]:
        """The record's body once its request verifies as ``agent_id``'s (proven key)."""
        _signed_by(record, agent_id, self.identity(agent_id)["public_key"])
        return _body(record)


def _body(record: dict[str, Any]) -> dict[str, Any]:
    try:
        body = json.loads(record.get("body") or "{}")
    except (ValueError, TypeError):
        raise unproven("a record's body is not JSON") from None
    if not isinstance(body, dict):
        raise unproven("a record's body is not an object")
    return body


def _signed_by(record: dict[str, Any], agent_id: str, key: str) -> None:
    try:
        request = SignedRequest(**record["request"])
    except (TypeError, KeyError):
        raise unproven("a record carries no signed request") from None
    body = record.get("body")
    if request.agent_id != agent_id or not isinstance(body, str) \
            or hashlib.sha256(body.encode()).hexdigest() != request.body_sha256 \
            or not request.verify(key):
        raise unproven(f"a record is not signed by {agent_id}")


def _same(what: str, served: Any, logged: Any) -> None:
    if served != logged:
        raise unproven(f"the served {what} differs from the logged one")


def check_identity(answer: dict[str, Any], proven: Proven) -> None:
    body = proven.identity(str(answer.get("agent_id")))
    _same("public key", answer.get("public_key"), body.get("public_key"))
    _same("nickname", answer.get("nickname"), body.get("nickname"))


def check_invitation(answer: dict[str, Any], proven: Proven) -> None:
    """The endpoint, host, host key, protocol and options a guest acts on."""
    host = str(answer.get("host_agent_id"))
    body = proven.signed_by(proven.find("invitation", str(answer.get("invitation_id"))), host)
    _same("host key", answer.get("host_public_key"), proven.identity(host)["public_key"])
    _same("endpoint", answer.get("endpoint"), body.get("endpoint"))
    _same("protocol", answer.get("protocol_id"), body.get("protocol_id"))
    _same("options", answer.get("options"), body.get("options", {}))


def check_protocol(answer: dict[str, Any], proven: Proven) -> None:
    """The name, type and description come from the first registration's spec."""
    pid = str(answer.get("protocol_id"))
    record = proven.find("protocol", pid)
    body = proven.signed_by(record, str(answer.get("registered_by")))
    raw = body.get("spec")
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    _same("protocol name", answer.get("name"), str(spec.get("name", ""))[:200])
    _same("protocol type", answer.get("type"), spec.get("type"))
    _same("description", answer.get("description"), spec.get("description", ""))
    if "spec" in answer:
        _same("spec", answer.get("spec"), spec)


def check_session(answer: dict[str, Any], proven: Proven) -> None:
    """Each receipt served is one its party posted (in the log, signed by that party)."""
    sid = str(answer.get("session_id"))
    receipts = answer.get("receipts") or {}
    for role in ("host", "guest"):
        served = receipts.get(role) if isinstance(receipts, dict) else None
        if served is None:
            continue
        party = str(answer.get(f"{role}_agent_id"))
        body = proven.signed_by(proven.find("receipt", f"{sid}:{role}"), party)
        _same(f"{role} receipt", served, body.get("receipt"))
