"""One ordered, signed log per group: entries, the sequencer's checkpoints, receipts.

Every entry is signed by its sender's identity key and names the head its
sender saw (``prev``), so the log is a hash chain that no one but its senders
can write. The sequencer (the host, see docs/groups.md for why not JetStream)
only orders: it countersigns each entry it accepts with a checkpoint
``(group, seq, entry hash)``. Two checkpoints for one position with different
hashes prove it showed members different histories (``group.forked``); an
entry that does not name the head before it cannot be placed anywhere
(``group.broken_chain``), so reordering is impossible without detection.

Membership follows the spec's ``seats``: members join free seats before the
start, leave, are timed out (a sequencer's signed claim), and are replaced in
a vacated seat after it. Pure: no I/O, no clock; entropy only for keys.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.contract.seats import Seats
from lingxi.errors import Finding
from lingxi.group.errors import GroupError
from lingxi.group.keys import HEX64, Signer, digest, verify

ENTRY_DOMAIN = b"lingxi/group/entry/v1"
ORDER_DOMAIN = b"lingxi/group/checkpoint/v1"
RECEIPT_DOMAIN = b"lingxi/group/receipt/v1"
GENESIS_DOMAIN = b"lingxi/group/genesis/v1"
KINDS = ("open", "join", "start", "leave", "timeout", "replace", "message", "escalate",
         "close")
ENTRY_KEYS = {"group", "seq", "prev", "sender", "kind", "body", "sig"}
GROUP_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
MAX_ENTRY_BYTES = 64 * 1024
SEATED, LEFT, TIMED_OUT = "seated", "left", "timed_out"

Validator = Callable[[Any], list[Finding]]
# Called after each entry is appended: a game or vote applying its own rules.
# A rule it raises on leaves the entry in the log, as the evidence.
Observer = Callable[["GroupLog", dict[str, Any]], None]


def genesis(group_id: str) -> str:
    """The head before the first entry of ``group_id``."""
    return hashlib.sha256(GENESIS_DOMAIN + b"\0" + canonical_bytes(group_id)).hexdigest()


def _unsigned(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("sig", "order")}


def entry_hash(entry: dict[str, Any]) -> str:
    """The head after ``entry``: its hash without the sequencer's checkpoint."""
    return digest(ENTRY_DOMAIN, {k: v for k, v in entry.items() if k != "order"}).hex()


def checkpoint_bytes(group_id: str, seq: int, head: str) -> bytes:
    return digest(ORDER_DOMAIN, {"group": group_id, "seq": seq, "head": head})


def receipt_bytes(group_id: str, seq: int, head: str) -> bytes:
    return digest(RECEIPT_DOMAIN, {"group": group_id, "seq": seq, "head": head})


def make_entry(signer: Signer, group_id: str, seq: int, prev: str, kind: str,
               body: dict[str, Any]) -> dict[str, Any]:
    """An entry signed by ``signer`` naming ``prev`` (the head it saw) as position ``seq``."""
    entry: dict[str, Any] = {"group": group_id, "seq": seq, "prev": prev,
                             "sender": signer.key, "kind": kind, "body": body}
    entry["sig"] = signer.sign(digest(ENTRY_DOMAIN, entry))
    return entry


def make_receipt(signer: Signer, group_id: str, seq: int, head: str) -> dict[str, Any]:
    """A member's signature over the final head: its receipt for the whole log."""
    return {"group": group_id, "seq": seq, "head": head, "member": signer.key,
            "sig": signer.sign(receipt_bytes(group_id, seq, head))}


@dataclass
class Member:
    key: str
    seat: int
    status: str = SEATED
    role: str | None = None


def _shape(entry: Any) -> None:
    if not isinstance(entry, dict) or not ENTRY_KEYS <= set(entry) or (
            set(entry) - ENTRY_KEYS - {"order"}):
        raise GroupError("group.malformed", "an entry has exactly group, seq, prev, sender, "
                         "kind, body, sig (and the sequencer's order)")
    if type(entry["seq"]) is not int or entry["seq"] < 0:
        raise GroupError("group.malformed", "seq is a non-negative integer", path="$.seq")
    for key in ("prev", "sender"):
        if not isinstance(entry[key], str) or not HEX64.fullmatch(entry[key]):
            raise GroupError("group.malformed", f"{key} is 64 lowercase hex", path=f"$.{key}")
    if entry["kind"] not in KINDS:
        raise GroupError("group.malformed", f"kind is one of {', '.join(KINDS)}", path="$.kind")
    if not isinstance(entry["body"], dict):
        raise GroupError("group.malformed", "body is an object", path="$.body")
    try:
        size = len(canonical_bytes(entry))
    except (TypeError, ValueError):
        raise GroupError("group.malformed", "an entry is finite JSON") from None
    if size > MAX_ENTRY_BYTES:
        raise GroupError("group.malformed", f"an entry is at most {MAX_ENTRY_BYTES} bytes")


@dataclass
class GroupLog:
    """The verified state of one group's log, advanced one entry at a time.

    Members, the sequencer and an offline verifier all replay entries through
    :meth:`append`; a refused entry raises :class:`GroupError` naming the
    signer to blame when its signature verified.
    """

    group_id: str
    validate: Validator | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)
    head: str = ""
    sequencer: str | None = None
    protocol_id: str | None = None
    seats: Seats | None = None
    members: dict[str, Member] = field(default_factory=dict)
    started: bool = False
    closed: bool = False
    observers: list[Observer] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.group_id, str) or not GROUP_ID.fullmatch(self.group_id):
            raise GroupError("group.malformed", "a group id is [A-Za-z0-9_.:-]{1,128}")
        self.head = genesis(self.group_id)

    @property
    def seq(self) -> int:
        """The position the next entry takes."""
        return len(self.entries)

    def seated(self) -> list[Member]:
        """Members holding a seat now, in seat order."""
        return sorted((m for m in self.members.values() if m.status == SEATED),
                      key=lambda m: m.seat)

    def seat_summary(self) -> list[dict[str, Any]]:
        """Every identity that held a seat, in the order it took it: ``{seat, member,
        status}`` (``seated``, ``left``, ``timed_out``). The close entry names it, so the
        final head (which every member signs) says who sat where and how each ended."""
        return [{"seat": m.seat, "member": m.key, "status": m.status}
                for m in self.members.values()]

    def seat_of(self, key: str) -> int | None:
        member = self.members.get(key)
        return member.seat if member is not None and member.status == SEATED else None

    def check_checkpoint(self, entry: dict[str, Any]) -> None:
        """The sequencer's countersignature on an entry at its position."""
        if self.sequencer is None:
            return
        order = entry.get("order")
        if not verify(self.sequencer, checkpoint_bytes(self.group_id, entry["seq"],
                                                       entry_hash(entry)), order):
            raise GroupError("group.bad_signature",
                             f"entry {entry['seq']} lacks a valid sequencer checkpoint",
                             path="$.order")

    def append(self, entry: Any, *, checkpointed: bool = True) -> str:
        """Verify ``entry`` against everything before it, apply it, return the new head.

        ``checkpointed`` False checks an entry the sequencer has not yet
        countersigned (what the sequencer itself does before it signs).
        """
        _shape(entry)
        if entry["group"] != self.group_id:
            raise GroupError("group.wrong_group", f"an entry of group {str(entry['group'])[:64]!r}"
                             f", not {self.group_id!r}", path="$.group")
        if not verify(entry["sender"], digest(ENTRY_DOMAIN, _unsigned(entry)), entry["sig"]):
            raise GroupError("group.bad_signature", f"entry {entry['seq']} is not signed by its "
                             "sender", path="$.sig")
        sender = entry["sender"]
        if entry["seq"] < self.seq:
            raise GroupError("group.stale", f"entry {entry['seq']} is for a position already "
                             f"taken (the log is at {self.seq})", evidence={"entry": entry})
        if entry["seq"] != self.seq:
            raise GroupError("group.bad_seq", f"entry {entry['seq']} where {self.seq} was next",
                             culprit=sender, evidence={"entry": entry}, path="$.seq")
        if entry["prev"] != self.head:
            raise GroupError("group.broken_chain", f"entry {entry['seq']} names head "
                             f"{entry['prev'][:16]}…, the log's is {self.head[:16]}…",
                             culprit=None, evidence={"entry": entry, "head": self.head},
                             path="$.prev")
        if self.closed:
            raise GroupError("group.closed", "the log was closed", culprit=sender)
        if checkpointed and self.entries:
            self.check_checkpoint(entry)
        getattr(self, "_on_" + entry["kind"])(entry, sender, entry["body"])
        if checkpointed and not self.entries:
            self.check_checkpoint(entry)  # the open entry names the sequencer
        self.entries.append(entry)
        self.head = entry_hash(entry)
        for observer in self.observers:
            observer(self, entry)
        return self.head

    # -- the rules, one per kind ------------------------------------------------------

    def _refuse(self, code: str, text: str, sender: str, entry: dict) -> GroupError:
        return GroupError(code, text, culprit=sender, evidence={"entry": entry})

    def _on_open(self, entry: dict, sender: str, body: dict) -> None:
        if self.entries:
            raise self._refuse("group.bad_rule", "open is only the first entry", sender, entry)
        seats, pid = body.get("seats"), body.get("protocol_id")
        if (not isinstance(seats, dict) or type(seats.get("min")) is not int
                or type(seats.get("max")) is not int or not 2 <= seats["min"] <= seats["max"]
                or not isinstance(pid, str) or not HEX64.fullmatch(pid)):
            raise self._refuse("group.malformed", "open names protocol_id and seats "
                               "{min, max}", sender, entry)
        roles = seats.get("roles", [])
        self.seats = Seats(seats["min"], seats["max"], tuple(roles) if isinstance(
            roles, list) else ())
        self.protocol_id = pid
        self.sequencer = sender

    def _needs_open(self, entry: dict, sender: str) -> None:
        if not self.entries:
            raise self._refuse("group.bad_rule", "the first entry must open the group",
                               sender, entry)

    def _seat_arg(self, entry: dict, sender: str) -> int:
        assert self.seats is not None
        seat = entry["body"].get("seat")
        if type(seat) is not int or not 0 <= seat < self.seats.max:
            raise self._refuse("group.malformed", f"seat is 0..{self.seats.max - 1}",
                               sender, entry)
        return seat

    def _holder(self, seat: int) -> Member | None:
        return next((m for m in self.members.values() if m.seat == seat
                     and m.status == SEATED), None)

    def _on_join(self, entry: dict, sender: str, body: dict) -> None:
        self._needs_open(entry, sender)
        assert self.seats is not None
        if self.started:
            raise self._refuse("group.bad_rule", "after the start a member only joins by "
                               "replacing a vacated seat", sender, entry)
        seat = self._seat_arg(entry, sender)
        if sender in self.members:
            raise self._refuse("group.bad_rule", "this identity already joined", sender, entry)
        if len(self.members) >= self.seats.max:
            raise self._refuse("group.full", f"the group seats at most {self.seats.max}",
                               sender, entry)
        if self._holder(seat) is not None:
            raise self._refuse("group.seat_taken", f"seat {seat} is taken", sender, entry)
        role = self.seats.roles[seat] if self.seats.roles else None
        self.members[sender] = Member(sender, seat, role=role)

    def _on_start(self, entry: dict, sender: str, body: dict) -> None:
        self._needs_open(entry, sender)
        assert self.seats is not None
        if sender != self.sequencer or self.started:
            raise self._refuse("group.bad_rule", "only the sequencer starts, once", sender, entry)
        if len(self.seated()) < self.seats.min:
            raise self._refuse("group.too_few", f"{len(self.seated())} seated, the spec needs "
                               f"{self.seats.min}", sender, entry)
        self.started = True

    def _on_leave(self, entry: dict, sender: str, body: dict) -> None:
        self._active(entry, sender)
        self.members[sender].status = LEFT

    def _on_timeout(self, entry: dict, sender: str, body: dict) -> None:
        if sender != self.sequencer:
            raise self._refuse("group.bad_rule", "only the sequencer records a timeout",
                               sender, entry)
        target = self.members.get(body.get("member", ""))
        if target is None or target.status != SEATED:
            raise self._refuse("group.not_member", "a timeout names a seated member",
                               sender, entry)
        target.status = TIMED_OUT

    def _on_replace(self, entry: dict, sender: str, body: dict) -> None:
        self._needs_open(entry, sender)
        if not self.started:
            raise self._refuse("group.bad_rule", "before the start, join instead", sender, entry)
        seat = self._seat_arg(entry, sender)
        if self._holder(seat) is not None:
            raise self._refuse("group.seat_taken", f"seat {seat} is taken", sender, entry)
        if not any(m.seat == seat for m in self.members.values()):
            raise self._refuse("group.bad_rule", f"seat {seat} was never held; nobody to "
                               "replace", sender, entry)
        if sender in self.members:
            raise self._refuse("group.bad_rule", "a member that held a seat cannot take "
                               "another", sender, entry)
        assert self.seats is not None
        role = self.seats.roles[seat] if self.seats.roles else None
        self.members[sender] = Member(sender, seat, role=role)

    def _active(self, entry: dict, sender: str) -> None:
        self._needs_open(entry, sender)
        member = self.members.get(sender)
        if member is None or member.status != SEATED:
            raise self._refuse("group.not_member", "the sender holds no seat", sender, entry)

    def _on_message(self, entry: dict, sender: str, body: dict) -> None:
        self._active(entry, sender)
        if not self.started:
            raise self._refuse("group.bad_rule", "messages start after the start", sender, entry)
        payload = body.get("payload")
        if set(body) != {"payload"}:
            raise self._refuse("group.malformed", "a message body is {payload}", sender, entry)
        if self.validate is not None:
            findings = self.validate(payload)
            if findings:
                raise GroupError("group.bad_message", f"entry {entry['seq']}: "
                                 f"{findings[0].message} [{findings[0].code}]", culprit=sender,
                                 evidence={"entry": entry})

    def _on_escalate(self, entry: dict, sender: str, body: dict) -> None:
        if sender != self.sequencer:
            self._active(entry, sender)
        if not isinstance(body.get("envelope"), dict):
            raise self._refuse("group.malformed", "an escalation carries its inter_group "
                               "envelope", sender, entry)

    def _on_close(self, entry: dict, sender: str, body: dict) -> None:
        if sender != self.sequencer:
            raise self._refuse("group.bad_rule", "only the sequencer closes", sender, entry)
        if body and body != {"seats": self.seat_summary()}:
            raise self._refuse("group.bad_rule", "a close names the log's seats as they are "
                               "(or nothing)", sender, entry)
        self.closed = True

    # -- receipts ----------------------------------------------------------------------

    def check_receipt(self, receipt: Any) -> str:
        """The member key of a valid receipt for this log's final head."""
        if not isinstance(receipt, dict) or set(receipt) != {"group", "seq", "head", "member",
                                                              "sig"}:
            raise GroupError("group.malformed", "a receipt is {group, seq, head, member, sig}")
        member = receipt["member"]
        if not (isinstance(receipt["seq"], int) and isinstance(receipt["head"], str)
                and verify(member, receipt_bytes(receipt["group"], receipt["seq"],
                                                 receipt["head"]), receipt["sig"])):
            raise GroupError("group.bad_signature", "a receipt's signature does not verify")
        if receipt["group"] != self.group_id or receipt["seq"] != self.seq or (
                receipt["head"] != self.head):
            raise GroupError("group.bad_receipt", f"member {member[:16]}… signed head "
                             f"{str(receipt['head'])[:16]}… at {receipt['seq']}, the log ends "
                             f"at {self.head[:16]}… ({self.seq})", culprit=None,
                             evidence={"receipt": receipt, "head": self.head, "seq": self.seq})
        return member


def replay(group_id: str, entries: list[Any], validate: Validator | None = None,
           observers: list[Observer] | None = None) -> GroupLog:
    """A log rebuilt from ``entries``; the first refused entry raises."""
    log = GroupLog(group_id, validate, observers=list(observers or []))
    for entry in entries:
        log.append(entry)
    return log
