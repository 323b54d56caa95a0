"""Offline check of a session state folder: the hash chain and both receipts.

What it proves: the transcript is one unbroken chain; the local receipt and
the peer's receipt are signed by the keys they name and cover a prefix of it.
What it cannot prove alone: *who* the peer was — ``snapshot.json`` names the
peer's key, but anyone who can write the folder can re-sign a receipt and edit
that line. Pin the peer with ``peer_key`` (``--peer-key``, or the key a
registry knows) to close that gap. Entries that no receipt covers fail the
check (nobody signed them); entries only the local receipt covers (messages
still in flight when the peer finished) are listed as not verified by the peer.

Blame. A flow mode's judge gives the verdict (who won, how it ended, the
culprit and its identity key). The peer's receipt is the peer's signed word
on how many of this side's envelopes it received: when it acknowledges more
than the record holds, the record was cut after the fact, and a forfeit the
record's owner claims in it falls on the owner (:func:`~lingxi.session.core.
verdicts.contradicted`). Both sides' records together decide more
(:mod:`lingxi.session.record.compare`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.errors import LingxiError
from lingxi.records import Record
from lingxi.session.core.verdicts import contradicted, is_fault, verdict_line
from lingxi.session.errors import SessionError
from lingxi.session.record.receipts import RECEIPT_DOMAIN, check_receipt, shape_problems
from lingxi.session.record.recorder import RECEIPTS, SNAPSHOT, TRANSCRIPT
from lingxi.session.record.snapshot import read_object
from lingxi.session.record.transcript import DIRECTIONS, Transcript, load_transcript

RECORD_CUT = "session.record_cut"


@dataclass(repr=False, eq=False)
class Verification(Record):
    state_dir: str
    entries: int = 0
    head: str | None = None
    problems: list[str] = field(default_factory=list)
    receipts: dict[str, Any] = field(default_factory=dict)
    status: str | None = None
    protocol_id: str | None = None
    keys: dict[str, Any] = field(default_factory=dict)
    uncovered: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    role: str | None = None  # whose record this is (snapshot.json)
    chain_ok: bool = False  # the transcript loaded and every link recomputed
    counts: dict[str, int] = field(default_factory=dict)  # envelopes per direction
    acknowledged: dict[str, int] | None = None  # the peer receipt's counts, when it is signed
    verdict: dict[str, Any] | None = None
    compared: dict[str, Any] | None = None  # with the peer's record (--peer-record)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "state_dir": self.state_dir, "entries": self.entries,
                "transcript_head": self.head, "session_status": self.status,
                "protocol_id": self.protocol_id, "role": self.role, "keys": self.keys,
                "uncovered": self.uncovered, "receipts": self.receipts,
                "verdict": self.verdict, "compared": self.compared, "notes": self.notes,
                "problems": self.problems}

    def judged(self, verdict: dict[str, Any] | None) -> None:
        """Take a flow mode's verdict, weighed against the peer's receipt; a verdict that
        blames a side is a problem (exit 1), a game result or a resignation is not."""
        if verdict is None:
            return
        verdict = contradicted(verdict, self.role, self.acknowledged, self.counts,
                               "the record was cut after the fact", RECORD_CUT)
        self.verdict = verdict
        if is_fault(verdict):
            self.problems.append("verdict: " + verdict_line(verdict))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _acknowledged(receipt: Any, peer_key: str | None) -> dict[str, int] | None:
    """The envelope counts a receipt signed by ``peer_key`` states, whatever it covers."""
    from lingxi.canonical import canonical_bytes
    from lingxi.wire.identity import verify_ed25519

    if peer_key is None or shape_problems(receipt) or receipt["public_key"] != peer_key:
        return None
    body = {k: v for k, v in receipt.items() if k != "signature"}
    try:
        if not verify_ed25519(peer_key, bytes.fromhex(receipt["signature"]),
                              RECEIPT_DOMAIN + canonical_bytes(body)):
            return None
    except (ValueError, TypeError):
        return None
    return {d: receipt["chains"][d]["count"] for d in DIRECTIONS}


def verify_state_dir(state_dir: str | Path, *, peer_key: str | None = None,
                     entries: list[dict[str, Any]] | None = None) -> Verification:
    """Recompute the transcript chain and check both receipts against it.

    Raises SessionError (exit 2) when the folder is not a session folder; a
    broken chain, a bad receipt, a peer key other than ``peer_key`` or entries
    no receipt covers are reported in ``problems`` (exit 1). ``entries``
    collects the transcript entries for a flow mode's own check.
    """
    folder = Path(state_dir)
    if not folder.is_dir():
        raise SessionError("session.not_found", f"{folder} is not a session state folder")
    snapshot = read_object(folder / SNAPSHOT)
    receipts = read_object(folder / RECEIPTS)
    outcome = snapshot.get("outcome")
    out = Verification(str(folder),
                       status=_text(outcome.get("status")) if isinstance(outcome, dict) else None,
                       protocol_id=_text(snapshot.get("protocol_id")),
                       role=_text(snapshot.get("role")))
    try:
        transcript = load_transcript(folder / TRANSCRIPT, entries)
    except LingxiError as error:
        if error.code == "session.unreadable":
            raise
        out.problems.append(f"{error.code}: {error.message}")
        return out
    out.entries = transcript.entries
    out.head = transcript.head()
    out.chain_ok = True
    out.counts = dict(transcript.counts)
    session_id = _text(snapshot.get("session_id"))
    recorded_peer = _text(snapshot.get("peer_public_key"))
    keys = {"local": _text(snapshot.get("public_key")), "peer": peer_key or recorded_peer}
    out.keys = {"local": {"key": keys["local"], "source": "snapshot.json"},
                "peer": {"key": keys["peer"],
                         "source": "pinned (--peer-key)" if peer_key else
                         "snapshot.json (not pinned: pass --peer-key to check who the peer was)"}}
    if peer_key and recorded_peer != peer_key:
        out.problems.append("snapshot.json names another peer key than the pinned one")
    local = receipts.get("local")
    handshake = _text(local.get("handshake")) if isinstance(local, dict) else None
    out.acknowledged = _acknowledged(receipts.get("peer"), keys["peer"])
    signed = _check_receipts(out, receipts, transcript, keys, session_id, handshake)
    if not out.problems:
        _coverage(out, transcript, signed)
    return out


def _check_receipts(out: Verification, receipts: dict[str, Any], transcript: Transcript,
                    keys: dict[str, str | None], session_id: str | None,
                    handshake: str | None) -> dict[str, dict[str, int]]:
    """Both receipts against the transcript (into ``out``); the counts each valid one signs."""
    signed: dict[str, dict[str, int]] = {}
    for which in ("local", "peer"):
        receipt = receipts.get(which)
        if not receipt:
            out.receipts[which] = {"ok": False, "problems": ["missing"]}
            out.problems.append(f"{which} receipt: missing")
            continue
        problems = check_receipt(receipt, transcript, public_key=keys[which],
                                 session_id=session_id, handshake=handshake)
        out.receipts[which] = {"ok": not problems, "role": receipt.get("role"),
                               "head": receipt.get("head"), "checked_against": keys[which],
                               "problems": problems}
        out.problems.extend(f"{which} receipt: {p}" for p in problems)
        if not problems:
            signed[which] = {d: receipt["chains"][d]["count"] for d in DIRECTIONS}
    return signed


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _coverage(out: Verification, transcript: Transcript, signed: dict[str, dict[str, int]]
              ) -> None:
    """Entries no receipt signs are problems; entries past the peer's receipt are notes."""
    for direction in DIRECTIONS:
        total = transcript.counts[direction]
        unsigned = total - max(counts[direction] for counts in signed.values())
        if unsigned > 0:
            out.problems.append(f"{_entries(unsigned)} {direction} "
                                "after every receipted prefix: signed by nobody")
        beyond_peer = total - signed["peer"][direction]
        if beyond_peer > 0:
            out.uncovered[direction] = beyond_peer
            out.notes.append(f"{_entries(beyond_peer)} {direction}"
                             " not covered by the peer's receipt (not verified by the peer)")
