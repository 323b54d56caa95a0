"""The public table: every check that needs no secret, for parties and auditors.

Both parties and the offline audit replay the same signed messages through a
:class:`Table`. It holds what everyone can see (masking keys, the three decks,
who holds which position, the shares sent, the cards played, the spent
nullifiers, the openings) and rejects a message the moment it breaks a rule,
with the code of that rule and the sender as culprit once the sender's
signature has verified (so the rejected message itself is evidence).

Order of play (one message in flight at a time; each message names the hash
of the transcript before it, and its signature covers that hash)::

    hello(host) hello(guest) shuffle(host) shuffle(guest) deal(host) deal(guest)
    [play(host) of each table card] then any of:
    draw(X) -> share(other) | play(X) | open(X) -> open(other)

Who owes the next step is :meth:`Table.owing`: the cards protocol's own due
step (:meth:`Table.due`), else, during play, what the game says (whose move
it is, or the host's opening once the game is decided), which the table
cannot know by itself and takes from an injected ``game_due``. A forfeit
claim by the side that owes the next step is refused (``cards.false_forfeit``)
and blames the claimant.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from lingxi.canonical import canonical_bytes
from lingxi.cards import group as g
from lingxi.cards import proofs, shuffle
from lingxi.cards.errors import CardsError
from lingxi.cards.messages import parse
from lingxi.roles import ROLES, peer_name

MAX_CARDS = 512
LABEL = re.compile(r"[A-Za-z0-9_.:+-]{1,64}")
CARD_DOMAIN = b"lingxi/cards/card/v1"
GENESIS_DOMAIN = b"lingxi/cards/genesis/v1"
MSG_DOMAIN = b"lingxi/cards/message/v1"
HEAD_DOMAIN = b"lingxi/cards/transcript/v1"
CTX_DOMAIN = b"lingxi/cards/context/v1"
NULLIFIER_DOMAIN = b"lingxi/cards/nullifier/v1"



class Phase(StrEnum):
    """Where a table stands: seats (hello), the two shuffles, the deal, play, the two
    key openings, done. A StrEnum, so records and comparisons keep the plain names."""

    HELLO = "hello"
    SHUFFLE = "shuffle"
    DEAL = "deal"
    PLAY = "play"
    OPENING = "opening"
    DONE = "done"

@dataclass(frozen=True)
class Deal:
    """How many cards the initial deal gives each side and turns face up.

    Table cards are dealt to the host, who must play (reveal) them next.
    """

    host: int
    guest: int
    table: int = 0

    def total(self) -> int:
        return self.host + self.guest + self.table

    def positions(self, role: str) -> list[int]:
        """Positions dealt to ``role`` (the host's include the table cards)."""
        if role == "host":
            own = list(range(self.host))
            return own + list(range(self.host + self.guest, self.total()))
        return list(range(self.host, self.host + self.guest))

    def table_positions(self) -> list[int]:
        return list(range(self.host + self.guest, self.total()))


@dataclass(frozen=True)
class Params:
    """What both sides agree before the first message."""

    session_id: str
    universe: tuple[str, ...]
    deal: Deal
    identities: dict[str, bytes]  # role -> Ed25519 verify key (32 bytes)

    def __post_init__(self) -> None:
        try:
            ok_id = isinstance(self.session_id, str) and 0 < len(self.session_id.encode()) <= 256
        except UnicodeEncodeError:
            ok_id = False
        if not ok_id:
            raise CardsError("cards.malformed", "the session id is 1..256 bytes of UTF-8")
        u = self.universe
        if not all(isinstance(c, str) and LABEL.fullmatch(c) for c in u):
            raise CardsError("cards.bad_universe",
                             "card labels are ids: 1..64 of A-Z a-z 0-9 _ . : + -")
        if not 2 <= len(u) <= MAX_CARDS or len(set(u)) != len(u):
            raise CardsError("cards.bad_universe",
                             f"a universe has 2..{MAX_CARDS} distinct labels")
        d = self.deal
        if min(d.host, d.guest, d.table) < 0 or d.total() > len(u):
            raise CardsError("cards.bad_universe", "the initial deal needs more cards than exist")
        if set(self.identities) != set(ROLES) or any(
                len(k) != 32 for k in self.identities.values()):
            raise CardsError("cards.malformed", "identities are two 32-byte Ed25519 keys")

    @property
    def n(self) -> int:
        return len(self.universe)

    def genesis(self) -> bytes:
        body = {"session": self.session_id, "universe": list(self.universe),
                "deal": [self.deal.host, self.deal.guest, self.deal.table],
                "host": self.identities["host"].hex(), "guest": self.identities["guest"].hex()}
        return g.digest(GENESIS_DOMAIN, canonical_bytes(body))

    def card_points(self) -> list[bytes]:
        return [g.hash_point(CARD_DOMAIN, label.encode()) for label in self.universe]


def signing_bytes(msg: dict[str, Any]) -> bytes:
    return g.digest(MSG_DOMAIN, canonical_bytes({k: v for k, v in msg.items() if k != "sig"}))


def context(prev: bytes, role: str, kind: str, position: int = -1) -> bytes:
    """Fiat–Shamir context: the transcript so far, the prover, the step, the position."""
    return g.digest(CTX_DOMAIN, prev, role.encode(), kind.encode(),
                    (position + 1).to_bytes(4, "big"))


@dataclass
class Table:
    """Public state of one game, advanced one signed message at a time."""

    params: Params
    phase: Phase = Phase.HELLO
    keys: dict[str, bytes] = field(default_factory=dict)
    decks: list[list[bytes]] = field(default_factory=list)
    owner: dict[int, str] = field(default_factory=dict)
    shares: dict[int, bytes] = field(default_factory=dict)
    played: dict[int, str] = field(default_factory=dict)
    spent: set[str] = field(default_factory=set)
    cursor: int = 0
    pending: tuple[str, int] | None = None
    must_reveal: list[int] = field(default_factory=list)
    opened: dict[str, bytes] = field(default_factory=dict)
    dealt: list[str] = field(default_factory=list)
    forfeit: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    head: bytes = b""
    _verify_keys: dict[str, VerifyKey] = field(default_factory=dict)
    # (role, step) the game requires when the cards protocol has no due step; None: unknown
    game_due: Callable[[Table], tuple[str, str] | None] | None = None

    def __post_init__(self) -> None:
        self._genesis = self.params.genesis()
        self.head = self._genesis
        self.decks = [self.params.card_points()]
        self._index = {p: i for i, p in enumerate(self.decks[0])}
        self._verify_keys = {r: VerifyKey(k) for r, k in self.params.identities.items()}
        self.cursor = self.params.deal.total()

    # -- what is due -------------------------------------------------------
    def due(self) -> tuple[str, str] | None:
        """(role, step) the protocol requires next, or None when either may act."""
        if self.phase == Phase.HELLO:
            return ("host" if "host" not in self.keys else "guest", "hello")
        if self.phase == Phase.SHUFFLE:
            return ("host" if len(self.decks) == 1 else "guest", "shuffle")
        if self.phase == Phase.DEAL:
            return ("host" if not self.dealt else "guest", "deal")
        if self.pending:
            return (peer_name(self.pending[0]), "share")
        if self.must_reveal:
            return ("host", "play")
        if self.phase == Phase.OPENING:
            return (peer_name(next(iter(self.opened))), "open")
        return None

    def owing(self) -> tuple[str, str] | None:
        """Who owes the next step: the cards protocol's, else the game's (``game_due``).

        During play the cards layer has no due step; whose move it is (or that
        the host owes its opening once the game is decided) is the game's rule,
        injected as ``game_due``. None: either may act, or nobody can tell.
        """
        due = self.due()
        if due is None and self.phase == Phase.PLAY and self.game_due is not None:
            return self.game_due(self)
        return due

    def nullifier(self, position: int) -> str:
        deck = self.decks[-1]
        return g.digest(NULLIFIER_DOMAIN, self._genesis, position.to_bytes(4, "big"),
                        deck[position]).hex()

    def index_of(self, point: bytes) -> int | None:
        return self._index.get(point)

    # -- applying a message --------------------------------------------------
    def check_envelope(self, msg: dict[str, Any], *, signature: bool = True
                       ) -> tuple[str, str, dict[str, Any]]:
        """Shape, order and (unless already checked) signature; returns (sender, kind, body)."""
        kind, body = parse(msg)
        sender = msg["from"]
        if msg["seq"] != len(self.messages) or msg["prev"] != self.head.hex():
            raise CardsError("cards.bad_sequence", "the message is not linked to the transcript "
                             f"(seq {msg['seq']}, expected {len(self.messages)})")
        try:
            if signature:
                self._verify_keys[sender].verify(signing_bytes(msg), bytes.fromhex(msg["sig"]))
        except BadSignatureError:
            raise CardsError("cards.bad_signature",
                             f"the {sender}'s signature does not verify") from None
        return sender, kind, body

    def apply(self, msg: dict[str, Any], *, verified: bool = False) -> str:
        """Check and record ``msg``.

        ``verified`` skips the proofs: a party passes it for its own messages
        and for a peer shuffle whose proof :meth:`MentalPokerParty.check`
        already verified. Every rule that needs no proof is still checked.
        """
        sender, kind, body = self.check_envelope(msg, signature=not verified)
        try:
            getattr(self, f"_on_{kind}")(sender, body, msg, verified)
        except CardsError as exc:
            if exc.culprit is None:
                exc.culprit = sender
                exc.details["culprit"] = sender
            raise
        self.messages.append(msg)
        self.head = g.digest(HEAD_DOMAIN, self.head, canonical_bytes(msg))
        return kind

    def _fail(self, code: str, text: str) -> CardsError:
        return CardsError(code, text)

    def _expect(self, sender: str, kind: str) -> None:
        due = self.due()
        if self.phase == Phase.DONE or self.forfeit is not None:
            raise self._fail("cards.bad_sequence", "the game is over")
        if due is not None and due != (sender, kind):
            if due[1] == "open" and due[0] == sender:
                raise self._fail("cards.no_opening",
                                 f"the {sender} sent {kind} when its opening was due")
            raise self._fail("cards.bad_sequence",
                             f"expected {due[1]} from the {due[0]}, got {kind} from the {sender}")

    def _on_hello(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        self._expect(sender, "hello")
        key = body["key"]
        if not g.is_point(key):
            raise self._fail("cards.bad_point", "the masking key is not a subgroup point")
        if key in self.keys.values() or key == g.base(g.sc_from_int(1)):
            raise self._fail("cards.rogue_key", "the masking key copies another key")
        ctx = context(bytes.fromhex(msg["prev"]), sender, "hello")
        if not verified and not proofs.verify_key(ctx, key, body["pok"]):
            raise self._fail("cards.rogue_key", "no proof of knowledge of the masking key")
        self.keys[sender] = key
        if len(self.keys) == 2:
            self.phase = Phase.SHUFFLE

    def check_deck(self, deck: list[bytes]) -> None:
        """Cheap deck checks: size and duplicates (validity comes with the proof)."""
        n = self.params.n
        if len(deck) < n:
            raise self._fail("cards.deck_missing", f"the deck has {len(deck)} of {n} cards")
        if len(deck) > n:
            raise self._fail("cards.deck_corrupt", f"the deck has {len(deck)} entries, not {n}")
        if len(set(deck)) != n:
            raise self._fail("cards.deck_duplicate", "the deck repeats an entry")

    def shuffle_statement(self, sender: str, msg: dict[str, Any]) -> tuple[Any, ...]:
        return (context(bytes.fromhex(msg["prev"]), sender, "shuffle"), self.keys[sender],
                self.decks[-1])

    def _on_shuffle(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        self._expect(sender, "shuffle")
        deck = body["deck"]
        self.check_deck(deck)
        if not verified:
            ctx, key, deck_in = self.shuffle_statement(sender, msg)
            if not shuffle.verify_shuffle(ctx, key, deck_in, deck, body["proof"]):
                raise self.diagnose_shuffle(deck)
        self.decks.append(deck)
        if len(self.decks) == 3:
            self.phase = Phase.DEAL

    def diagnose_shuffle(self, deck: list[bytes]) -> CardsError:
        if not all(g.is_point(p) for p in deck):
            return self._fail("cards.deck_corrupt", "a deck entry is not a subgroup point")
        return self._fail("cards.bad_shuffle", "the shuffle proof does not verify")

    def _check_share(self, sender: str, msg: dict[str, Any], kind: str, position: int, share: bytes,
                     proof: bytes, verified: bool) -> None:
        if verified:  # my own message: I made the share from the entry
            return
        ctx = context(bytes.fromhex(msg["prev"]), sender, kind, position)
        entry = self.decks[-1][position]
        # entry = x_sender · share, and key = x_sender · G
        result = proofs.verify_dleq(ctx, self.keys[sender], share, entry, proof)
        if result is proofs.Dleq.BAD_PROOF:
            raise self._fail("cards.bad_share_proof",
                             f"the share for position {position} has no valid proof")
        if result is proofs.Dleq.MISMATCH:
            raise self._fail("cards.bad_share", f"the share for position {position} is wrong")

    def _on_deal(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        self._expect(sender, "deal")
        expected = self.params.deal.positions(peer_name(sender))
        positions, shares, prfs = body["positions"], body["shares"], body["proofs"]
        if positions != expected or len(shares) != len(expected) or len(prfs) != len(expected):
            raise self._fail("cards.forged_response",
                             f"the deal must answer exactly positions {expected}")
        for pos, share, proof in zip(positions, shares, prfs, strict=True):
            self._check_share(sender, msg, "deal", pos, share, proof, verified)
        for pos, share in zip(positions, shares, strict=True):
            self.owner[pos] = peer_name(sender)
            self.shares[pos] = share
        self.dealt.append(sender)
        if sender == "guest":
            self.phase = Phase.PLAY
            self.must_reveal = self.params.deal.table_positions()

    def _on_draw(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        self._expect(sender, "draw")
        if self.phase != Phase.PLAY:
            raise self._fail("cards.bad_sequence", "no draws once the opening has begun")
        pos = body["position"]
        if pos != self.cursor or pos >= self.params.n:
            raise self._fail("cards.peek", f"position {pos} is not the top of the stock "
                             f"(next is {self.cursor}, {self.params.n} cards)")
        self.pending = (sender, pos)

    def _on_share(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        if self.pending is None or self.pending[0] == sender:
            raise self._fail("cards.forged_response", "a share nobody asked for")
        pos = body["position"]
        if pos != self.pending[1]:
            raise self._fail("cards.forged_response",
                             f"a share for position {pos}, but {self.pending[1]} was asked for")
        self._check_share(sender, msg, "share", pos, body["share"], body["proof"], verified)
        self.owner[pos] = self.pending[0]
        self.shares[pos] = body["share"]
        self.cursor += 1
        self.pending = None

    def _on_play(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        self._expect(sender, "play")
        if self.phase != Phase.PLAY:
            raise self._fail("cards.bad_sequence", "no plays once the opening has begun")
        pos = body["position"]
        if pos >= self.params.n:
            raise self._fail("cards.not_in_hand", f"there is no position {pos}")
        if self.must_reveal and pos != self.must_reveal[0]:
            raise self._fail("cards.bad_sequence",
                             f"the table card at {self.must_reveal[0]} must be turned first")
        nf = self.nullifier(pos)
        if body["nullifier"].hex() in self.spent or nf in self.spent:
            raise self._fail("cards.double_play", f"the card at position {pos} was played")
        if body["nullifier"].hex() != nf:
            raise self._fail("cards.bad_nullifier", f"not the nullifier of position {pos}")
        if self.owner.get(pos) != sender:
            raise self._fail("cards.not_in_hand", f"the {sender} does not hold position {pos}")
        label = body["card"]
        try:
            face = self.params.universe.index(label)
        except ValueError:
            raise self._fail("cards.wrong_face", f"{label!r} is not in the universe") from None
        if label in self.played.values():
            raise self._fail("cards.wrong_face", f"{label!r} was already played")
        ctx = context(bytes.fromhex(msg["prev"]), sender, "play", pos)
        # share = x_sender · M (skipped for my own play: I know my card)
        result = proofs.Dleq.OK if verified else proofs.verify_dleq(
            ctx, self.keys[sender], self.decks[0][face], self.shares[pos], body["proof"])
        if result is proofs.Dleq.BAD_PROOF:
            raise self._fail("cards.bad_play_proof", f"the play of {pos} has no valid proof")
        if result is proofs.Dleq.MISMATCH:
            raise self._fail("cards.wrong_face", f"position {pos} does not hold {label!r}")
        self.played[pos] = label
        self.spent.add(nf)
        if self.must_reveal:
            self.must_reveal.pop(0)

    def _on_open(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        self._expect(sender, "open")
        if self.phase not in (Phase.PLAY, Phase.OPENING) or sender in self.opened:
            raise self._fail("cards.bad_sequence", "no opening is due")
        secret = body["secret"]
        if not g.is_scalar(secret) or secret == g.SCALAR_ZERO or g.base(secret) != self.keys[sender]:
            raise self._fail("cards.bad_opening", f"the {sender}'s opened key is not its key")
        self.opened[sender] = secret
        self.phase = Phase.OPENING if len(self.opened) == 1 else Phase.DONE

    def _on_forfeit(self, sender: str, body: dict[str, Any], msg: dict[str, Any], verified: bool) -> None:
        if body["against"] == sender or self.phase == Phase.DONE or self.forfeit is not None:
            raise self._fail("cards.bad_sequence", "a forfeit claim names the other side, once")
        owed = self.owing()
        if owed is not None and owed[0] == sender:
            raise self._fail("cards.false_forfeit",
                             f"the {sender} claims the {peer_name(sender)} stopped, but the "
                             f"{sender}'s own {owed[1]} was due")
        self.forfeit = {"claimant": sender, "against": body["against"], "reason": body["reason"],
                        "phase": self.phase.value, "due": list(owed) if owed else None}

    # -- the end audit -------------------------------------------------------
    def final_check(self, made_by: str | None = None,
                    own_cards: dict[int, str] | None = None) -> list[str]:
        """With both keys opened, the face of every position; raises on any mismatch.

        Re-checks against the opening: the final deck is a permutation of the
        universe, every share is the owner's key times the face, every play
        names the face at its position. A party passes ``made_by=`` its own
        role: a share it made itself is ``x_self^{-1}·E_k`` by construction, so
        once ``E_k`` decrypts to a card of the universe it cannot be wrong;
        and ``own_cards``, the faces it unmasked from the shares it received,
        which must equal the decrypted faces (the same check, without a
        product).
        """
        if len(self.opened) != 2:
            raise CardsError("cards.incomplete", "both keys must be opened first")
        xh, xg = self.opened["host"], self.opened["guest"]
        inv = g.sc_inv(g.sc_mul(xh, xg))
        faces: list[str] = []
        seen: set[int] = set()
        for entry in self.decks[-1]:
            i = self._index.get(g.mul(inv, entry))
            if i is None or i in seen:
                raise CardsError("cards.audit_mismatch", self._blame_shuffle(),
                                 culprit=self._shuffle_culprit())
            seen.add(i)
            faces.append(self.params.universe[i])
        for pos, share in self.shares.items():
            owner = self.owner[pos]
            if peer_name(owner) == made_by:
                continue
            if own_cards is not None and owner == made_by:
                if own_cards.get(pos) != faces[pos]:
                    raise CardsError("cards.audit_mismatch",
                                     f"the share for position {pos} is wrong",
                                     culprit=peer_name(owner))
                continue
            if g.mul(self.opened[owner], self.decks[0][self.params.universe.index(faces[pos])]) \
                    != share:
                raise CardsError("cards.audit_mismatch", f"the share for position {pos} is wrong",
                                 culprit=peer_name(owner))
        for pos, label in self.played.items():
            if faces[pos] != label:
                raise CardsError("cards.audit_mismatch", f"position {pos} was not {label!r}",
                                 culprit=self.owner[pos])
        return faces

    def _shuffle_culprit(self) -> str:
        inv_h = g.sc_inv(self.opened["host"])
        first = {g.mul(inv_h, e) for e in self.decks[1]}
        return "host" if first != set(self.decks[0]) else "guest"

    def _blame_shuffle(self) -> str:
        return "the opened deck is not a permutation of the universe"
