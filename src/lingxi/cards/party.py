"""One side of a mental-poker game, sans-IO: messages in, messages out.

A :class:`MentalPokerParty` owns its masking secret, its shuffle and its
private view of its own cards; everything public goes through its
:class:`~lingxi.cards.table.Table`, which checks each incoming message and
raises :class:`~lingxi.cards.errors.CardsError` at once on a cheat. The party
keeps the offending (signed) message as evidence in :meth:`transcript`.

Heavy work is split out so a session machine can run it as a ``Compute``
action off the event loop: :meth:`prepare_shuffle` (mask, permute, prove) and
:meth:`check` (verify a peer's shuffle proof) are pure with respect to the
party; their results are handed back to :meth:`shuffle` and :meth:`receive`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nacl.signing import SigningKey

from lingxi.canonical import canonical_bytes
from lingxi.cards import group as g
from lingxi.cards import proofs, shuffle
from lingxi.cards.errors import CardsError
from lingxi.cards.table import Deal, Params, Phase, Table, context, signing_bytes
from lingxi.roles import ROLES, peer_name

TRANSCRIPT_FORMAT = "lingxi.cards.transcript/1"
RECEIPT_FORMAT = "lingxi.cards.receipt/1"
RECEIPT_DOMAIN = b"lingxi/cards/receipt/v1"


@dataclass(frozen=True)
class PreparedShuffle:
    """The result of :meth:`MentalPokerParty.prepare_shuffle` (heavy, pure)."""

    prev: str
    perm: tuple[int, ...]
    deck: tuple[bytes, ...]
    proof: tuple[bytes, ...]


@dataclass(frozen=True)
class Checked:
    """The result of :meth:`MentalPokerParty.check`: ``msg_digest`` passed its proof."""

    msg_digest: bytes


def _state(text: str) -> CardsError:
    return CardsError("cards.state", text)


class MentalPokerParty:
    """A player: ``role`` is ``host`` or ``guest``; entropy is injected."""

    def __init__(self, role: str, session_id: str, universe: Sequence[str],
                 entropy: Callable[[int], bytes], *, signing_seed: bytes,
                 peer_identity: bytes, deal: Deal,
                 game_due: Callable[[Table], tuple[str, str] | None] | None = None) -> None:
        if role not in ROLES:
            raise _state("role is host or guest")
        self.role, self.peer = role, peer_name(role)
        self._signer = SigningKey(signing_seed)
        identities = {role: bytes(self._signer.verify_key), self.peer: bytes(peer_identity)}
        self.params = Params(session_id, tuple(universe), deal, identities)
        self.table = Table(self.params, game_due=game_due)
        self._entropy = entropy
        self._secret = g.random_scalar(entropy)
        self._inverse = g.sc_inv(self._secret)
        self.key = g.base(self._secret)
        self.cards: dict[int, str] = {}  # positions I hold -> face (private)
        self.rejected: dict[str, Any] | None = None
        self.faces: list[str] | None = None  # every position, after the openings

    # -- state ----------------------------------------------------------------
    @property
    def identity(self) -> bytes:
        return bytes(self._signer.verify_key)

    def due(self) -> str | None:
        """The step this party owes now (``hello``, ``shuffle``, ``deal``, ``share``,
        ``play`` of a table card, ``open``), or None when the game decides."""
        d = self.table.due()
        return d[1] if d and d[0] == self.role else None

    def hand(self) -> dict[int, str]:
        """Positions I hold and have not played, with their faces."""
        return {p: f for p, f in self.cards.items() if p not in self.table.played}

    def stock_left(self) -> int:
        return self.params.n - self.table.cursor

    # -- sending ----------------------------------------------------------------
    def sign(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """A signed message linked to my transcript head, not applied (cheat library)."""
        msg = {"mp": kind, "from": self.role, "seq": len(self.table.messages),
               "prev": self.table.head.hex(), **body}
        msg["sig"] = self._signer.sign(signing_bytes(msg)).signature.hex()
        return msg

    def _send(self, kind: str, body: dict[str, Any], verified: bool = True) -> dict[str, Any]:
        msg = self.sign(kind, body)
        self.table.apply(msg, verified=verified)
        return msg

    def _ctx(self, kind: str, position: int = -1) -> bytes:
        return context(self.table.head, self.role, kind, position)

    def hello(self) -> dict[str, Any]:
        self._owe("hello")
        pok = proofs.prove_key(self._ctx("hello"), self._secret, self.key, self._entropy)
        return self._send("hello", {"key": self.key.hex(), "pok": pok.hex()})

    def prepare_shuffle(self) -> PreparedShuffle:
        """Mask, permute and prove (heavy; reads state, changes none of it)."""
        self._owe("shuffle")
        deck_in = self.table.decks[-1]
        perm = shuffle.sample_permutation(self._entropy, self.params.n)
        deck, proof = shuffle.prove_shuffle(self._ctx("shuffle"), self._secret, self.key,
                                            deck_in, perm, self._entropy)
        return PreparedShuffle(self.table.head.hex(), tuple(perm), tuple(deck), tuple(proof))

    def shuffle(self, prepared: PreparedShuffle | None = None) -> dict[str, Any]:
        prepared = prepared or self.prepare_shuffle()
        if prepared.prev != self.table.head.hex():
            raise _state("the prepared shuffle is for an earlier transcript")
        return self._send("shuffle", {"deck": [p.hex() for p in prepared.deck],
                                      "proof": [p.hex() for p in prepared.proof]})

    def _share(self, kind: str, position: int) -> tuple[bytes, bytes]:
        entry = self.table.decks[-1][position]
        share = g.mul(self._inverse, entry)
        proof = proofs.prove_dleq(self._ctx(kind, position), self._secret, self.key, share,
                                  entry, self._entropy)
        return share, proof

    def deal(self) -> dict[str, Any]:
        """My decryption shares for the peer's initial cards."""
        self._owe("deal")
        positions = self.params.deal.positions(self.peer)
        shares, prfs = [], []
        for pos in positions:
            share, proof = self._share("deal", pos)
            shares.append(share.hex())
            prfs.append(proof.hex())
        return self._send("deal", {"positions": positions, "shares": shares, "proofs": prfs})

    def draw(self) -> dict[str, Any]:
        """Ask for the top card of the stock."""
        if self.table.due() is not None or self.table.phase != Phase.PLAY:
            raise _state(f"cannot draw now (due: {self.table.due()})")
        if self.stock_left() <= 0:
            raise _state("the stock is empty")
        return self._send("draw", {"position": self.table.cursor})

    def play(self, position: int, note: str | None = None) -> dict[str, Any]:
        """Turn my card at ``position`` face up, proving it is the card dealt there."""
        if position not in self.hand():
            raise _state(f"position {position} is not in my hand")
        face = self.cards[position]
        point = self.table.decks[0][self.params.universe.index(face)]
        proof = proofs.prove_dleq(self._ctx("play", position), self._secret, self.key, point,
                                  self.table.shares[position], self._entropy)
        body: dict[str, Any] = {"position": position, "card": face,
                                "nullifier": self.table.nullifier(position), "proof": proof.hex()}
        if note is not None:
            body["note"] = note
        return self._send("play", body)

    def open(self) -> dict[str, Any]:
        """Disclose my masking secret (the end of the game)."""
        if self.role in self.table.opened:
            raise _state("already opened")
        msg = self._send("open", {"secret": self._secret.hex()})
        self._maybe_finish()
        return msg

    def forfeit(self, reason: str) -> dict[str, Any]:
        """Record that the peer stopped answering (signed by me, kept in the transcript).

        Refused when this side itself owes the next step: such a claim would
        blame its own claimant (``cards.false_forfeit``).
        """
        owed = self.table.owing()
        if owed is not None and owed[0] == self.role:
            raise _state(f"no forfeit claim: this side owes the next step ({owed[1]})")
        return self._send("forfeit", {"against": self.peer, "reason": reason[:200]})

    def _owe(self, step: str) -> None:
        if self.due() != step:
            raise _state(f"{step} is not due from the {self.role} (due: {self.table.due()})")

    # -- receiving ---------------------------------------------------------------
    @staticmethod
    def digest(msg: dict[str, Any]) -> bytes:
        return g.digest(b"lingxi/cards/check/v1", canonical_bytes(msg))

    def check(self, msg: dict[str, Any]) -> Checked | None:
        """Verify a peer's shuffle proof (heavy, pure); None for other messages.

        Raises the same :class:`CardsError` :meth:`receive` would.
        """
        if not isinstance(msg, dict) or msg.get("mp") != "shuffle":
            return None
        sender, _, body = self.table.check_envelope(msg)
        if sender != self.peer or self.table.due() != (sender, "shuffle"):
            return None  # receive() reports the precise error
        try:
            self.table.check_deck(body["deck"])
            ctx, key, deck_in = self.table.shuffle_statement(sender, msg)
            if not shuffle.verify_shuffle(ctx, key, deck_in, body["deck"], body["proof"]):
                raise self.table.diagnose_shuffle(body["deck"])
        except CardsError as exc:
            exc.culprit = sender
            exc.details["culprit"] = sender
            self._keep_evidence(msg, exc)
            raise
        return Checked(self.digest(msg))

    def receive(self, msg: dict[str, Any], checked: Checked | None = None) -> list[dict[str, Any]]:
        """Apply a peer's message; return the replies the protocol makes automatic."""
        if isinstance(msg, dict) and msg.get("from") == self.role:
            raise CardsError("cards.bad_sequence", "a message claiming to be from me",
                             culprit=None)
        verified = checked is not None and checked.msg_digest == self.digest(msg)
        try:
            kind = self.table.apply(msg, verified=verified)
        except CardsError as exc:
            self._keep_evidence(msg, exc)
            raise
        replies: list[dict[str, Any]] = []
        if kind in ("deal", "shuffle") and self.due() == "deal":
            replies.append(self.deal())
        if kind == "deal":
            for pos in self.params.deal.positions(self.role):
                self._unmask(pos)
        elif kind == "share":
            self._unmask(msg["position"])
        elif kind == "draw":
            share, proof = self._share("share", msg["position"])
            replies.append(self._send("share", {"position": msg["position"], "share": share.hex(),
                                                "proof": proof.hex()}))
        elif kind == "hello" and self.due() == "hello":
            replies.append(self.hello())
        elif kind == "open":
            if self.role not in self.table.opened:
                replies.append(self._send("open", {"secret": self._secret.hex()}))
            self._maybe_finish()
        return replies

    def _keep_evidence(self, msg: Any, exc: CardsError) -> None:
        if exc.culprit == self.peer and self.rejected is None:
            self.rejected = {"message": msg, "code": exc.code}

    def _unmask(self, position: int) -> None:
        if self.table.owner.get(position) != self.role or position in self.cards:
            return
        index = self.table.index_of(g.mul(self._inverse, self.table.shares[position]))
        if index is None:  # cannot happen after verified shuffles and shares
            raise CardsError("cards.bad_share", f"position {position} decrypts to no card",
                             culprit=self.peer)
        self.cards[position] = self.params.universe[index]

    def _maybe_finish(self) -> None:
        if self.table.phase == Phase.DONE and self.faces is None:
            self.faces = self.table.final_check(made_by=self.role, own_cards=self.cards)

    # -- evidence ------------------------------------------------------------------
    def receipt(self) -> dict[str, Any]:
        """My signed end-of-game receipt: the transcript hash and the end audit's result.

        Available once both keys are open (the end audit ran) or after a forfeit
        claim or a rejected message (the result names the code and culprit).
        """
        result: dict[str, Any]
        if self.faces is not None:
            result = {"ok": True, "code": None, "culprit": None}
        elif self.rejected is not None:
            result = {"ok": False, "code": self.rejected["code"], "culprit": self.peer}
        elif self.table.forfeit is not None:
            result = {"ok": False, "code": "cards.forfeit",
                      "culprit": self.table.forfeit["against"]}
        else:
            raise _state("no receipt before the game ends")
        body = {"format": RECEIPT_FORMAT, "session_id": self.params.session_id,
                "role": self.role, "messages": len(self.table.messages),
                "transcript_hash": self.table.head.hex(),
                "faces_hash": g.digest(b"lingxi/cards/faces/v1",
                                       canonical_bytes(self.faces or [])).hex(),
                "audit": result}
        body["sig"] = self._signer.sign(g.digest(RECEIPT_DOMAIN, canonical_bytes(body))
                                        ).signature.hex()
        return body

    def transcript(self) -> dict[str, Any]:
        """Everything a third party needs to re-run every check (see :func:`audit`)."""
        p = self.params
        out: dict[str, Any] = {
            "format": TRANSCRIPT_FORMAT, "session_id": p.session_id,
            "universe": list(p.universe), "deal": [p.deal.host, p.deal.guest, p.deal.table],
            "identities": {r: k.hex() for r, k in p.identities.items()},
            "messages": list(self.table.messages)}
        if self.rejected is not None:
            out["rejected"] = self.rejected
        return out
