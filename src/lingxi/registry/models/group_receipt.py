"""A pure check of a posted table's group receipt: the close entry and every seat's receipt.

A group log (``lingxi.group``) ends with a ``close`` entry signed by its sequencer (the
table's host) whose body names every identity that held a seat, in the order it took it:
``{"seats": [{seat, member, status}, ...]}`` (``status`` ``seated``, ``left`` or
``timed_out``). The final head is that entry's hash, and each member still seated signs
``(group, seq, head)``: its receipt ``{group, seq, head, member, sig}``. So the registry
checks, with no other part of the log: the close entry's hash is the head, its sender's
signature, that every seated member signed that head, and nothing else signed. What the
seats name (who claimed which seat) the store checks against its sessions.

The hashing and domains are the group log's (``lingxi.group.log``), re-implemented here
so the server never imports the group layer; a test checks both agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from lingxi.canonical import canonical_bytes
from lingxi.registry.models.keys import is_hex, verify

KIND = "group_receipt"
ENTRY_DOMAIN = b"lingxi/group/entry/v1"
RECEIPT_DOMAIN = b"lingxi/group/receipt/v1"
STATUSES = ("seated", "left", "timed_out")
OUTCOMES = {"seated": "completed", "left": "left", "timed_out": "timed_out"}
ENTRY_KEYS = {"group", "seq", "prev", "sender", "kind", "body", "sig"}
RECEIPT_KEYS = {"group", "seq", "head", "member", "sig"}
MAX_BYTES = 65536


class GroupReceiptProblem(Exception):
    """One refusal: ``code`` is the last part of the registry code (``invalid``,
    ``missing``, ``wrong_seat``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _digest(domain: bytes, value: Any) -> bytes:
    return hashlib.sha256(domain + b"\0" + canonical_bytes(value)).digest()


def entry_head(entry: dict[str, Any]) -> str:
    """The head after ``entry`` (its hash without the sequencer's checkpoint)."""
    return _digest(ENTRY_DOMAIN, {k: v for k, v in entry.items() if k != "order"}).hex()


def _signed(key: str, data: bytes, signature: Any) -> bool:
    return is_hex(signature, 128) and verify(key, bytes.fromhex(signature), data)


@dataclass(frozen=True)
class Seat:
    """One identity's time at one seat, as the close entry names it."""

    seat: int
    member: str
    status: str

    @property
    def outcome(self) -> str:
        return OUTCOMES[self.status]


@dataclass(frozen=True)
class GroupClose:
    """A verified close: the table, the final position and head, the sequencer, the seats."""

    table: str
    seq: int
    head: str
    sequencer: str
    seats: tuple[Seat, ...]


def _bad(message: str) -> GroupReceiptProblem:
    return GroupReceiptProblem("invalid", message)


def check_close(close: Any, table: str, seats: int) -> GroupClose:
    """The close entry of ``table`` (a table of ``seats`` seats), checked alone."""
    head = _signed_close(close, table)
    parsed = _named_seats(close["body"], seats)
    _check_seating(parsed, seats, close["sender"])
    return GroupClose(table, close["seq"] + 1, head, close["sender"], tuple(parsed))


def _signed_close(close: Any, table: str) -> str:
    """The head after ``close``, once it is the well-formed close of ``table`` signed by
    its sender."""
    if not isinstance(close, dict) or set(close) - {"order"} != ENTRY_KEYS:
        raise _bad("close must be the log's last entry {group, seq, prev, sender, kind, "
                   "body, sig, order}")
    if close["group"] != table or close["kind"] != "close":
        raise _bad(f"the entry is not the close of table {table}")
    if type(close["seq"]) is not int or close["seq"] < 2 or not is_hex(close["sender"], 64):
        raise _bad("the close entry's seq or sender is malformed")
    unsigned = {k: v for k, v in close.items() if k not in ("sig", "order")}
    try:
        ok = _signed(close["sender"], _digest(ENTRY_DOMAIN, unsigned), close["sig"])
        head = entry_head(close)
    except (TypeError, ValueError):
        raise _bad("the close entry is not canonical JSON") from None
    if not ok:
        raise _bad("the close entry is not signed by its sender")
    return head


def _named_seats(body: Any, seats: int) -> list[Seat]:
    """The seats the close's body names, each {seat 0..seats-1, member, status}."""
    named = body.get("seats") if isinstance(body, dict) and set(body) == {"seats"} else None
    if not isinstance(named, list) or not named:
        raise _bad("the close entry names no seats (a log closed before tables named them)")
    parsed: list[Seat] = []
    for item in named:
        if (not isinstance(item, dict) or set(item) != {"seat", "member", "status"}
                or type(item["seat"]) is not int or not 0 <= item["seat"] < seats
                or not is_hex(item["member"], 64) or item["status"] not in STATUSES):
            raise _bad(f"a seat of the close entry is not {{seat 0..{seats - 1}, member, "
                       "status}")
        parsed.append(Seat(item["seat"], item["member"], item["status"]))
    return parsed


def _check_seating(parsed: list[Seat], seats: int, sequencer: str) -> None:
    """Every seat named, no identity twice, at most one seated per seat, the host at 0."""
    members = [s.member for s in parsed]
    if len(set(members)) != len(members):
        raise _bad("the close entry names one identity twice")
    if {s.seat for s in parsed} != set(range(seats)):
        raise GroupReceiptProblem("wrong_seat", f"the close entry does not name the table's "
                                  f"{seats} seats")
    for seat in range(seats):
        if sum(1 for s in parsed if s.seat == seat and s.status == "seated") > 1:
            raise _bad(f"the close entry seats two identities at seat {seat}")
    host = [s for s in parsed if s.seat == 0]
    if len(host) != 1 or host[0].member != sequencer:
        raise GroupReceiptProblem("wrong_seat", "seat 0 is not the sequencer's (the host's)")


def check_receipts(close: GroupClose, receipts: Any) -> dict[str, dict[str, Any]]:
    """Every seated member's receipt over the final head, by member key."""
    if not isinstance(receipts, list):
        raise _bad("receipts must be a list of {group, seq, head, member, sig}")
    seated = {s.member for s in close.seats if s.status == "seated"}
    held: dict[str, dict[str, Any]] = {}
    for receipt in receipts:
        if not isinstance(receipt, dict) or set(receipt) != RECEIPT_KEYS:
            raise _bad("a receipt is {group, seq, head, member, sig}")
        member = receipt["member"]
        if not is_hex(member, 64):
            raise _bad("a receipt's member is not an identity key")
        try:
            ok = _signed(member, _digest(RECEIPT_DOMAIN, {"group": receipt["group"],
                                                           "seq": receipt["seq"],
                                                           "head": receipt["head"]}),
                         receipt["sig"])
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise _bad(f"the receipt of {member[:16]}… does not verify")
        if (receipt["group"], receipt["seq"], receipt["head"]) != (close.table, close.seq,
                                                                   close.head):
            raise _bad(f"the receipt of {member[:16]}… is for another head than this "
                       "table's final one")
        if member not in seated:
            raise GroupReceiptProblem("wrong_seat", f"{member[:16]}… holds no seat at the "
                                      "final head")
        held[member] = receipt
    missing = sorted(s.seat for s in close.seats if s.status == "seated"
                     and s.member not in held)
    if missing:
        raise GroupReceiptProblem("missing", "no receipt for seat " + ", ".join(
            str(s) for s in missing))
    return held


def check_group_receipt(body: Any, table: str, seats: int
                        ) -> tuple[GroupClose, dict[str, dict[str, Any]]]:
    """The close and the receipts of a posted body ``{close, receipts}``."""
    if not isinstance(body, dict) or not {"close", "receipts"} <= set(body):
        raise _bad("the body is {close, receipts}")
    close = check_close(body["close"], table, seats)
    return close, check_receipts(close, body["receipts"])
