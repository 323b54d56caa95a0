"""The full audit of a log's records: each hashes to its entry, each signed request inside
verifies against the key the log itself registered for its signer, and the server key
records form one endorsed chain. Rating records carry no request: each must rest on the two
receipt records of its session earlier in the log (both signed by the parties it rates, both
valid, agreeing on the result), and replaying them all must give every rating they state
(:func:`lingxi.registry.models.rating.replay_ratings`), so an edited rating is caught.
A group receipt record (a posted table's final head) is re-checked as the registry checked
it: the close entry and every seated member's receipt verify, the host and each seat's
agent are the logged identities of the keys the close names, the seat count is the one the
table's own invitation records gave, and replaying every table's counts gives the ones
each record states (:func:`lingxi.registry.models.rating.replay_tables`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lingxi.registry.models import group_receipt as gr
from lingxi.registry.models.keyrecord import key_record_problems
from lingxi.registry.models.keys import agent_id_for, is_hex
from lingxi.registry.models.log import record_hash
from lingxi.registry.models.rating import agreed_result, replay_ratings, replay_tables
from lingxi.registry.models.receipt import pair_problems, receipt_problems
from lingxi.registry.models.signing import SignedRequest


def _request_problem(seq: int, record: dict[str, Any], keys: dict[str, str]) -> str | None:
    try:
        request = SignedRequest(**record["request"])
    except (TypeError, KeyError):
        return f"record {seq} carries no well-formed signed request"
    body = record.get("body")
    if (
        not isinstance(body, str)
        or hashlib.sha256(body.encode("utf-8")).hexdigest() != request.body_sha256
    ):
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


def _logged_receipt(
    record: dict[str, Any], keys: dict[str, str]
) -> tuple[str, dict[str, Any]] | None:
    """``(signer, receipt)`` of a receipt record whose receipt verifies for its role."""
    try:
        signer = record["request"]["agent_id"]
        receipt = json.loads(record["body"])["receipt"]
        role = str(record["id"]).rsplit(":", 1)[1]
        problems = receipt_problems(
            receipt, role=role, public_key=keys[signer], protocol_id=receipt.get("protocol_id")
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None
    return None if problems else (signer, receipt)


def _rating_problem(
    seq: int, record: dict[str, Any], receipts: dict[str, tuple[str, dict[str, Any]]]
) -> str | None:
    facts = record.get("server")
    if not isinstance(facts, dict) or record.get("request") is not None:
        return f"record {seq}: a rating record that is not the server's facts"
    sid = facts.get("session_id")
    host, guest = receipts.get(f"{sid}:host"), receipts.get(f"{sid}:guest")
    if host is None or guest is None or record.get("id") != sid:
        return (
            f"record {seq}: a rating for session {sid} without its two valid receipts "
            "earlier in the log"
        )
    try:
        parties = (facts["host"]["agent_id"], facts["guest"]["agent_id"])
    except (KeyError, TypeError):
        return f"record {seq}: a rating record without its parties"
    if parties != (host[0], guest[0]):
        return f"record {seq}: the rated agents are not the receipts' signers"
    if (
        pair_problems(host[1], guest[1])
        or host[1].get("protocol_id") != facts.get("protocol_id")
        or agreed_result(host[1], guest[1])[0] != facts.get("result")
    ):
        return f"record {seq}: the receipts do not show the result this rating counts"
    return None


def _table_seats(record: dict[str, Any], tables: dict[tuple[str, str], int]) -> None:
    """Note the seat count an invitation record offers for its host's table, if any."""
    try:
        value = json.loads(record["body"]).get("options", {}).get("lingxi.table")
        host = record["request"]["agent_id"]
        if isinstance(value, dict) and isinstance(value.get("table"), str):
            tables.setdefault((host, value["table"]), int(value["seats"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return


def _group_receipt_problem(
    seq: int, record: dict[str, Any], keys: dict[str, str], tables: dict[tuple[str, str], int]
) -> str | None:
    try:
        facts, body = record["server"], json.loads(record["body"])
        host, table = facts["host_agent_id"], facts["table"]
        seats = tables.get((host, table))
        if seats is None:
            return f"record {seq}: a group receipt for a table no invitation offered"
        final, _ = gr.check_group_receipt(body, table, seats)
        named = [(s["seat"], s["agent_id"], s["member"], s["outcome"]) for s in facts["seats"]]
    except gr.GroupReceiptProblem as problem:
        return f"record {seq}: the group receipt does not verify ({problem.message})"
    except (KeyError, TypeError, ValueError, AttributeError):
        return f"record {seq}: a malformed group receipt record"
    if keys.get(host) != final.sequencer or record.get("id") != f"{host}:{table}":
        return f"record {seq}: the close entry is not signed by the table's host"
    if (facts.get("seq"), facts.get("head")) != (final.seq, final.head):
        return f"record {seq}: the facts name another head than the receipts sign"
    if named != [(s.seat, agent_id_for(s.member), s.member, s.outcome) for s in final.seats]:
        return f"record {seq}: the seats or outcomes are not the ones the close entry names"
    if any(keys.get(agent) != member for _, agent, member, _ in named):
        return f"record {seq}: a seat's identity is not the one the log registered"
    return None


def audit_records(entries: list[dict[str, Any]]) -> tuple[list[str], int]:
    """``(problems, requests checked)`` over entries that each carry their ``record``."""
    problems: list[str] = []
    keys: dict[str, str] = {}
    server_key: str | None = None
    checked = 0
    receipts: dict[str, tuple[str, dict[str, Any]]] = {}
    rated: list[dict[str, Any]] = []
    tables: dict[tuple[str, str], int] = {}
    counted: list[dict[str, Any]] = []
    for entry in entries:
        seq, record = entry.get("seq"), entry.get("record")
        if not isinstance(record, dict) or record_hash(record) != entry.get("record_sha256"):
            problems.append(f"record {seq} does not hash to its log entry")
            continue
        if record.get("kind") != entry.get("kind") or record.get("id") != entry.get("record_id"):
            problems.append(f"record {seq} names another kind or id than its entry")
        if record.get("kind") == "server_key":
            problems += [
                f"record {seq}: {p}" for p in key_record_problems(record, previous=server_key)
            ]
            server_key = (record.get("server") or {}).get("public_key")
            continue
        if record.get("kind") == "rating":
            problem = _rating_problem(int(seq or 0), record, receipts)
            if problem:
                problems.append(problem)
            else:
                rated.append(record["server"])
            continue
        problem = _request_problem(int(seq or 0), record, keys)
        checked += 1
        if problem:
            problems.append(problem)
        elif record.get("kind") == "receipt":
            found = _logged_receipt(record, keys)
            if found is not None:
                receipts[str(record.get("id"))] = found
        elif record.get("kind") == "invitation":
            _table_seats(record, tables)
        elif record.get("kind") == gr.KIND:
            problem = _group_receipt_problem(int(seq or 0), record, keys, tables)
            if problem:
                problems.append(problem)
            else:
                counted.append(record["server"])
    problems += replay_ratings(rated)[1]
    problems += replay_tables(counted)[1]
    return problems, checked
