"""The full audit of a log's records: each hashes to its entry, each signed request inside
verifies against the key the log itself registered for its signer, and the server key
records form one endorsed chain."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lingxi.registry.models.keyrecord import key_record_problems
from lingxi.registry.models.keys import agent_id_for, is_hex
from lingxi.registry.models.log import record_hash
from lingxi.registry.models.signing import SignedRequest


def _request_problem(seq: int, record: dict[str, Any], keys: dict[str, str]) -> str | None:
    try:
        request = SignedRequest(**record["request"])
    except (TypeError, KeyError):
        return f"record {seq} carries no well-formed signed request"
    body = record.get("body")
    if not isinstance(body, str) or \
            hashlib.sha256(body.encode("utf-8")).hexdigest() != request.body_sha256:
        return f"record {seq}: the body is not the one its request signed"
    key = keys.get(request.agent_id)
    if record.get("kind") == "identity":
        try:
            key = json.loads(body).get("public_key")
        except (ValueError, AttributeError):
            key = None
        if not is_hex(key, 64) or agent_id_for(key) != request.agent_id:
            return f"record {seq}: an identity whose key is not its signer's"
    if key is None:
        return f"record {seq} is signed by {request.agent_id}, which the log never registered"
    if not request.verify(key):
        return f"record {seq}: the signed request does not verify with {request.agent_id}'s key"
    if record.get("kind") == "identity":
        keys[request.agent_id] = key
    return None


def audit_records(entries: list[dict[str, Any]]) -> tuple[list[str], int]:
    """``(problems, requests checked)`` over entries that each carry their ``record``."""
    problems: list[str] = []
    keys: dict[str, str] = {}
    server_key: str | None = None
    checked = 0
    for entry in entries:
        seq, record = entry.get("seq"), entry.get("record")
        if not isinstance(record, dict) or record_hash(record) != entry.get("record_sha256"):
            problems.append(f"record {seq} does not hash to its log entry")
            continue
        if record.get("kind") != entry.get("kind") or record.get("id") != entry.get("record_id"):
            problems.append(f"record {seq} names another kind or id than its entry")
        if record.get("kind") == "server_key":
            problems += [f"record {seq}: {p}" for p in
                         key_record_problems(record, previous=server_key)]
            server_key = (record.get("server") or {}).get("public_key")
            continue
        problem = _request_problem(int(seq or 0), record, keys)
        checked += 1
        if problem:
            problems.append(problem)
    return problems, checked
