"""Two sides' records of one session: do they agree, where do they fork, which claim falls.

Each side keeps its own record (``transcript.jsonl``: every envelope it sent
and received, hash-chained per direction). Within a direction both sides saw
the same envelopes in the same order, so two honest records agree: per
direction one is a prefix of the other (an envelope still in flight when a
side finished is only in the other's). Where they disagree, the first
differing envelope of a direction is the fork.

Envelopes carry HMAC signatures both sides could have made, so a fork alone
convinces nobody. What does is what a flow mode's records hold signed by one
agent (the mental-poker seats and cards messages, Ed25519): the mode's
``compare`` says which claim the other record disproves, and the verdict
(:mod:`lingxi.session.core.verdicts`) names the culprit's identity key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.errors import InputError
from lingxi.records import Record
from lingxi.session.core.verdicts import ROLES, UNDECIDED, verdict, verdict_line
from lingxi.session.record.recorder import SNAPSHOT, TRANSCRIPT
from lingxi.session.record.snapshot import read_object
from lingxi.session.record.transcript import DIRECTIONS, load_transcript

OFFER = "session.offer"


@dataclass(repr=False, eq=False)
class SessionRecord(Record):
    """One side's record: its entries, and what it says about itself."""

    source: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    protocol_id: str | None = None
    role: str | None = None
    session_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    def envelopes(self, direction: str) -> list[bytes]:
        return [canonical_bytes(e["envelope"]) for e in self.entries
                if e["direction"] == direction]

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "role": self.role, "session_id": self.session_id,
                "protocol_id": self.protocol_id, "entries": len(self.entries),
                "counts": dict(self.counts)}


def load_record(path: str | Path) -> SessionRecord:
    """A session folder, or a ``transcript.jsonl`` by itself; the chain is re-checked.

    Raises ``session.not_found`` (exit 2) for a path that is neither, and the
    transcript's own error (``transcript.broken_chain`` …, exit 1) when the
    record was altered.
    """
    where = Path(path)
    folder = where if where.is_dir() else None
    transcript = where / TRANSCRIPT if folder is not None else where
    if not transcript.is_file():
        raise InputError("session.not_found",
                         f"{where} is neither a session folder nor a transcript file")
    record = SessionRecord(str(where))
    chain = load_transcript(transcript, record.entries)
    record.counts = dict(chain.counts)
    snapshot = read_object(folder / SNAPSHOT) if folder is not None and \
        (folder / SNAPSHOT).is_file() else {}
    record.protocol_id = _text(snapshot.get("protocol_id"))
    record.role = _text(snapshot.get("role"))
    record.session_id = _text(snapshot.get("session_id"))
    for entry in record.entries:  # a bare transcript says the same through its envelopes
        envelope = entry["envelope"]
        payload = envelope.get("payload") if isinstance(envelope.get("payload"), dict) else {}
        if record.role is None and entry.get("local") == "sent":
            record.role = "host" if entry["direction"] == "host_to_guest" else "guest"
        if record.protocol_id is None and payload.get("action") == OFFER:
            record.protocol_id = _text(payload.get("protocol_id"))
        if record.session_id is None:
            record.session_id = _text(envelope.get("conversation_id"))
    return record


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _action(raw: bytes) -> str:
    payload = json.loads(raw).get("payload")
    action = payload.get("action") if isinstance(payload, dict) else None
    return str(action) if action is not None else "?"


def envelope_fork(a: SessionRecord, b: SessionRecord) -> dict[str, Any]:
    """Per direction: how many envelopes both records hold alike, and the first difference."""
    out: dict[str, Any] = {}
    for direction in DIRECTIONS:
        ea, eb = a.envelopes(direction), b.envelopes(direction)
        common = 0
        while common < min(len(ea), len(eb)) and ea[common] == eb[common]:
            common += 1
        fork = None
        if common < len(ea) and common < len(eb):
            fork = {"index": common + 1, "a": _action(ea[common]), "b": _action(eb[common])}
        out[direction] = {"common": common, "a": len(ea), "b": len(eb), "fork": fork}
    return out


def compare(a: SessionRecord, b: SessionRecord, *, mode_compare: Any = None, spec: Any = None,
            hooks: Any = None) -> dict[str, Any]:
    """What two records of one session show together (see the module docstring)."""
    directions = envelope_fork(a, b)
    same_session = a.session_id is not None and a.session_id == b.session_id
    forked = [d for d, info in directions.items() if info["fork"] is not None]
    out: dict[str, Any] = {"a": a.to_dict(), "b": b.to_dict(), "same_session": same_session,
                           "directions": directions, "mode": None,
                           "agree": same_session and not forked,
                           "identical": same_session and not forked and all(
                               i["a"] == i["b"] for i in directions.values())}
    if not same_session:
        out["verdict"] = verdict(UNDECIDED, reason="the records are of different sessions")
        out["summary"] = "the records are of different sessions"
        return out
    if mode_compare is not None and spec is not None:
        mode = mode_compare(a.entries, b.entries, spec, hooks)
        out["mode"] = mode
        out["agree"] = out["agree"] and bool(mode.get("agree"))
        out["verdict"] = mode.get("verdict")
    else:
        out["verdict"] = None
    out["summary"] = _summary(out)
    return out


def _summary(out: dict[str, Any]) -> str:
    if out["identical"] and out["agree"]:
        return "the records are identical"
    mode = out.get("mode") or {}
    if out["agree"]:
        return ("the records agree (one goes on where the other stops: envelopes in flight, "
                "or a side that stopped receiving)")
    if mode.get("disproved"):
        first = mode["disproved"][0]
        return f"record {first['by']} disproves record {first['record']}'s claim " \
               f"({first['claim']}): {first['because']}"
    fork = mode.get("fork")
    if fork:
        return (f"the records fork at cards message {fork['at']} (a: {fork['a'] or 'nothing'}; "
                f"b: {fork['b'] or 'nothing'})")
    forked = {d: i["fork"] for d, i in out["directions"].items() if i["fork"]}
    if forked:
        direction, fork = next(iter(forked.items()))
        return (f"the records fork at {direction} envelope {fork['index']} "
                f"(a: {fork['a']}; b: {fork['b']})")
    return "the records disagree"


def compare_with(entries: list[dict[str, Any]], peer_record: str | Path, spec: Any,
                 hooks: Any) -> dict[str, Any]:
    """``session verify --peer-record``: this record (a) against the peer's (b)."""
    from lingxi.session.core.registry import flow_mode

    mine = SessionRecord("this record", list(entries))
    for entry in entries:
        envelope = entry["envelope"]
        if mine.session_id is None:
            mine.session_id = _text(envelope.get("conversation_id"))
        if mine.role is None and entry.get("local") == "sent":
            mine.role = "host" if entry["direction"] == "host_to_guest" else "guest"
    theirs = load_record(peer_record)
    return compare(mine, theirs, mode_compare=flow_mode(spec.flow.mode).compare, spec=spec,
                   hooks=hooks)


def lines(out: dict[str, Any]) -> list[str]:
    """Plain lines for a person (the printer escapes them for the terminal)."""
    text = []
    for name in ("a", "b"):
        rec = out[name]
        text.append(f"record {name}: {rec['source']} ({rec['role'] or '?'}, "
                    f"{rec['entries']} envelopes)")
    for direction, info in out["directions"].items():
        fork = info["fork"]
        where = f", fork at envelope {fork['index']} (a: {fork['a']}; b: {fork['b']})" \
            if fork else ""
        text.append(f"{direction}: {info['common']} alike (a {info['a']}, b {info['b']}){where}")
    mode = out.get("mode") or {}
    for item in mode.get("disproved") or []:
        text.append(f"disproved: record {item['record']}'s {item['claim']}: {item['because']}")
    for name in ("a", "b"):
        judged = (mode.get("verdicts") or {}).get(name)
        if judged:
            text.append(f"record {name} alone: {verdict_line(judged)}")
    if out.get("verdict"):
        text.append("verdict: " + verdict_line(out["verdict"]))
    for role in ROLES:
        key = ((out.get("verdict") or {}).get("identities") or {}).get(role)
        if key:
            text.append(f"{role} identity: {key}")
    text.append(("agree: " if out["agree"] else "disagree: ") + out["summary"])
    return text
