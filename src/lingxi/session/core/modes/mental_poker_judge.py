"""Offline: the verdict a third party reaches from one mental-poker record, or two.

One record (a side's session transcript): the seats give the seat keys, the
nonces, the universe and the deal, and the identity key of each side whose
seat signature verifies; the ``mp_*`` payloads rebuild the cards transcript,
which :func:`lingxi.cards.audit` re-checks with every proof; the public moves
(draws, plays, the session's signed passes) are replayed through the game's
hooks, when the verifier has them, to check every move against the rules, to
tell whose move it was when a forfeit was claimed, and whether the first
opening came before the game was decided (a resignation).

Two records (both sides' folders, when they disagree): the common prefix of
signed cards messages, where they fork, and which claim the other record
disproves. A forfeit claim says the claimant waited for the accused at that
point; a record holding a later message signed by the claimant, or another
message the claimant signed at the same point, shows it did not wait: the
claim is false and the claimant loses. A record in which the accused made its
move but the claimant said nothing more is a fork nobody can decide: whether
the move was delivered cannot be proven either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from lingxi.cards import audit
from lingxi.cards.errors import CardsError
from lingxi.cards.party import TRANSCRIPT_FORMAT
from lingxi.cards.payloads import PREFIX, from_payload
from lingxi.cards.table import Deal, Params, Table
from lingxi.session.core import verdicts
from lingxi.session.core.modes import mental_poker_rules as endings
from lingxi.session.core.modes.mental_poker_rules import pass_bytes
from lingxi.session.core.verdicts import is_fault

FORFEIT = "cards.forfeit"
FALSE_FORFEIT = "cards.false_forfeit"
EQUIVOCATION = "mental_poker.equivocation"
ILLEGAL_PLAY = "mental_poker.illegal_play"
RULE_BROKEN = "mental_poker.rule_broken"
RESIGNED = "mental_poker.resigned"


@dataclass
class Record:
    """One side's session transcript, read as a mental-poker game."""

    transcript: dict[str, Any] | None = None  # the cards transcript (lingxi.cards format)
    passes: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    agents: dict[str, str] = field(default_factory=dict)  # role -> identity, signed seats only
    late: list[dict[str, Any]] = field(default_factory=list)  # cards messages after the end
    owner: str | None = None  # the role whose record this is (it sent some entries)
    problems: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.transcript or {}).get("messages") or [])

    @property
    def identities(self) -> dict[str, str | None]:
        return {r: self.agents.get(r) for r in verdicts.ROLES}


def rebuild(entries: list[dict[str, Any]], protocol_id: str) -> Record:
    """The cards transcript, the passes and the signed identities of a session record.

    A pass is kept as (cards messages before it, sender, payload). Cards
    messages the recorder marked ``late`` (they arrived after this side had
    finished, e.g. crossing its forfeit claim) are kept apart: they were
    never answered, and a third party sees them as what they are.
    """
    rec = Record()
    seats: dict[str, dict[str, Any]] = {}
    sessions: dict[str, str] = {}
    for entry in entries:
        envelope = entry.get("envelope") or {}
        payload = envelope.get("payload") or {}
        action = payload.get("action") if isinstance(payload, dict) else None
        sender = "host" if entry.get("direction") == "host_to_guest" else "guest"
        if entry.get("local") == "sent":
            rec.owner = sender
        if action == "seat":
            if sender not in seats:
                seats[sender] = payload
                sessions[sender] = str(envelope.get("conversation_id"))
        elif action == "pass":
            rec.passes.append((_count(rec), sender, payload))
        elif isinstance(action, str) and action.startswith(PREFIX):
            _keep_cards_message(rec, entry, payload)
    if seats or rec.transcript is not None:
        _seat(rec, seats, sessions, protocol_id)
    return rec


def _keep_cards_message(rec: Record, entry: dict[str, Any], payload: dict[str, Any]) -> None:
    """A cards message into the transcript, or apart when it came ``late``."""
    try:
        msg = from_payload(payload)
    except CardsError as error:
        rec.problems.append(f"entry {entry.get('n')}: {error.message}")
        return
    if entry.get("local") == "late":
        rec.late.append(msg)
    else:
        rec.transcript = rec.transcript or {"messages": []}
        rec.transcript["messages"].append(msg)


def _seat(rec: Record, seats: dict[str, dict[str, Any]], sessions: dict[str, str],
          protocol_id: str) -> None:
    """The signed identities of both seats and the cards transcript they open."""
    if set(seats) != set(verdicts.ROLES):
        rec.problems.append("the transcript lacks a seat of each side")
        rec.transcript = None
        return
    for role, seat in seats.items():
        if endings.seat_signed(sessions[role], protocol_id, role, seat):
            rec.agents[role] = str(seat["identity"])
        else:
            rec.problems.append(f"the {role}'s seat is not signed by an identity key for this "
                                "session: its moves are signed by a seat key that names nobody")
    host, guest = seats["host"], seats["guest"]
    rec.transcript = {
        "format": TRANSCRIPT_FORMAT,
        "session_id": f"{host.get('nonce')}:{guest.get('nonce')}",
        "universe": list(host.get("universe") or []), "deal": list(host.get("deal") or []),
        "identities": {"host": host.get("signing_key"), "guest": guest.get("signing_key")},
        "messages": rec.messages}


def _count(rec: Record) -> int:
    return len((rec.transcript or {}).get("messages") or [])


# ------------------------------------------------------------------ replay


@dataclass
class Point:
    """The public game just before cards message ``index`` (passes before it included)."""

    index: int
    moves: int  # how many of the replay's moves precede this point
    stock: int
    sizes: dict[str, int]
    table: list[str]
    opened: list[str]


@dataclass
class Replay:
    """The public moves of a record and the game's state before every cards message."""

    moves: list[dict[str, Any]] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    # every move, in order: (the point it was made at, its index in ``moves``)
    made_at: list[tuple[int, int]] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    stopped: int | None = None  # the first message the cheap replay could not apply
    params: Params | None = None
    due: tuple[str, str] | None = None  # the cards protocol's own due step at the end
    phase: str = "hello"

    def view(self, point: Point, role: str = "host", upto: int | None = None
             ) -> dict[str, Any]:
        """The public view at ``point`` (history cut at move ``upto`` when given)."""
        moves = self.moves[:point.moves if upto is None else upto]
        return {"role": role, "hand": [], "table": list(point.table),
                "history": [dict(m) for m in moves],
                "stock": point.stock, "hand_sizes": dict(point.sizes)}


def _params(transcript: dict[str, Any]) -> Params:
    return Params(transcript["session_id"], tuple(transcript["universe"]),
                  Deal(*transcript["deal"]),
                  {r: bytes.fromhex(k) for r, k in transcript["identities"].items()})


def _point(table: Table, index: int, moves: int) -> Point:
    sizes = {r: sum(1 for p, o in table.owner.items() if o == r and p not in table.played)
             for r in verdicts.ROLES}
    reveals = table.params.deal.table_positions()
    return Point(index, moves, table.params.n - table.cursor, sizes,
                 [table.played[p] for p in reveals if p in table.played], list(table.opened))


def replay(rec: Record) -> Replay:
    """Apply every cards message without proofs (the audit checks those) and every pass."""
    out = Replay()
    transcript = rec.transcript
    if transcript is None:
        return out
    try:
        out.params = _params(transcript)
        table = Table(out.params)
    except (CardsError, TypeError, ValueError):
        out.stopped = 0
        return out
    reveals = set(out.params.deal.table_positions())
    passes = sorted(rec.passes, key=lambda item: item[0])
    upcoming = 0
    for index, msg in enumerate(transcript["messages"]):
        while upcoming < len(passes) and passes[upcoming][0] <= index:
            out.made_at.append((index, len(out.moves)))
            out.moves.append({"by": passes[upcoming][1], "action": "pass"})
            upcoming += 1
        out.points.append(_point(table, index, len(out.moves)))
        out.heads.append(table.head.hex())
        try:
            table.apply(msg, verified=True)
        except CardsError:
            out.stopped = index
            out.due, out.phase = table.due(), table.phase
            return out
        if msg["mp"] == "draw":
            out.made_at.append((index, len(out.moves)))
            out.moves.append({"by": msg["from"], "action": "draw"})
        elif msg["mp"] == "play" and msg["position"] not in reveals:
            move = {"by": msg["from"], "action": "play", "card": msg["card"]}
            if msg.get("note") is not None:
                move["note"] = msg["note"]
            out.made_at.append((index, len(out.moves)))
            out.moves.append(move)
    end = len(transcript["messages"])
    while upcoming < len(passes):
        out.made_at.append((end, len(out.moves)))
        out.moves.append({"by": passes[upcoming][1], "action": "pass"})
        upcoming += 1
    out.points.append(_point(table, end, len(out.moves)))
    out.heads.append(table.head.hex())
    out.due, out.phase = table.due(), table.phase
    return out


def _pass_problems(rec: Record, game: Replay) -> list[str]:
    """Every pass is signed by its sender's seat key for its place in the game."""

    transcript = rec.transcript
    if transcript is None or game.params is None:
        return []
    problems = []
    table_n = len(game.params.deal.table_positions())
    passed = 0
    for before, sender, payload in sorted(rec.passes, key=lambda item: item[0]):
        if before >= len(game.heads):
            problems.append("a pass after the record stopped")
            continue
        cards_moves = sum(1 for m in transcript["messages"][:before]
                          if m["mp"] in ("draw", "play"))
        played = cards_moves - table_n + passed
        passed += 1
        head = game.heads[before]
        try:
            VerifyKey(bytes.fromhex(transcript["identities"][sender])).verify(
                pass_bytes(transcript["session_id"], sender, played, head),
                bytes.fromhex(str(payload.get("sig"))))
            if payload.get("prev") != head:
                raise BadSignatureError("unlinked")
        except (BadSignatureError, ValueError, TypeError):
            problems.append(f"a {sender} pass is not signed for its place in the game")
    return problems


# ------------------------------------------------------------------ rules


class Rules:
    """The game's hooks asked about public views only; a failing hook is reported, never
    raised, and makes the answer unknown.

    ``make`` returns fresh, started hooks: one instance per record, since hooks may
    cache their replay of a history (the built-ins do) and two records differ.
    """

    def __init__(self, make: Callable[[], Any] | None) -> None:
        self.problems: list[str] = []
        self.hooks: Any = None
        if make is not None:
            try:
                self.hooks = make()
            except Exception as error:  # the verifier's local hooks could not start
                self.problems.append(f"the game's hooks did not start: "
                                     f"{type(error).__name__}: {error}")

    def _ask(self, name: str, *args: Any) -> Any:
        method = getattr(self.hooks, name, None)
        if self.hooks is None or method is None:
            return None
        try:
            return method(*args)
        except Exception as error:  # the verifier's local hooks; a failure is a finding
            self.problems.append(f"hook {name} failed offline: {type(error).__name__}: {error}")
            return None

    @property
    def known(self) -> bool:
        return self.hooks is not None

    def winner(self, view: dict[str, Any]) -> Any:
        return self._ask("proto_mp_check_winner", view)

    def turn(self, view: dict[str, Any]) -> str | None:
        from lingxi.hooks.base import implements

        if self.hooks is None or not implements(self.hooks, "proto_mp_turn"):
            return None
        turn = self._ask("proto_mp_turn", view)
        return turn if turn in verdicts.ROLES else None

    def breach(self, view: dict[str, Any], role: str, move: dict[str, Any]) -> str | None:
        action = {k: v for k, v in move.items() if k != "by"}
        reason = self._ask("proto_mp_validate_play", view, role, action)
        return str(reason) if reason else None

    def hidden_breach(self, view: dict[str, Any], faces: list[str]) -> str | None:
        from lingxi.hooks.base import implements

        if self.hooks is None or not implements(self.hooks, "proto_mp_audit"):
            return None
        reason = self._ask("proto_mp_audit", view, list(faces))
        return str(reason) if reason else None


def _game_due(game: Replay, rules: Rules) -> Any:
    """``Table.game_due`` for the audit: whose move, or the host's opening, at that point."""
    def due(table: Table) -> tuple[str, str] | None:
        index = len(table.messages)
        if not rules.known or index >= len(game.points):
            return None
        view = game.view(game.points[index])
        decided = rules.winner(view) is not None
        return endings.game_owed(decided, None if decided else rules.turn(view))
    return due


# ----------------------------------------------------------------- verdicts


@dataclass
class Judgement:
    """What one record shows: integrity problems, and the verdict."""

    verdict: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    claim: dict[str, Any] | None = None  # a forfeit claim in the record, with its index
    record: Record | None = None
    messages: int = 0

    @property
    def all_problems(self) -> list[str]:
        """Integrity problems, plus the verdict when it blames a side."""
        out = list(self.problems)
        if is_fault(self.verdict):
            out.append("verdict: " + verdicts.verdict_line(self.verdict))
        return out

    def to_dict(self) -> dict[str, Any]:
        """``problems``: what is wrong with the record itself; the verdict apart."""
        return {"verdict": self.verdict, "problems": list(self.problems), "notes": self.notes,
                "claim": self.claim, "messages": self.messages}


def judge(entries: list[dict[str, Any]], spec: Any,
          hooks: Callable[[], Any] | None = None) -> Judgement:
    """The verdict of one record. ``hooks`` makes the game's rules (fresh started hooks,
    the verifier's own); without them moves are not re-judged and a claim made during
    play names nobody."""
    rec = rebuild(entries, spec.protocol_id)
    return judge_record(rec, Rules(hooks))


def judge_record(rec: Record, rules: Rules) -> Judgement:
    ids = rec.identities
    if rec.transcript is None:
        return Judgement(verdicts.verdict(verdicts.UNDECIDED, identities=ids,
                                         reason="no mental-poker game in the record"),
                         list(rec.problems), record=rec)
    game = replay(rec)
    report = audit(rec.transcript, game_due=_game_due(game, rules))
    out = Judgement(verdicts.verdict(verdicts.UNDECIDED, identities=ids), list(rec.problems),
                    record=rec, messages=report.messages)
    out.problems.extend(_pass_problems(rec, game))
    if rec.late:
        out.notes.append(f"{len(rec.late)} cards message(s) arrived after this side finished "
                         "(in flight, never answered)")
    if report.forfeit is not None:  # the claim is the last message the audit accepted
        out.claim = {**report.forfeit, "index": report.messages - 1}
    breach = _first_breach(game, rules)
    # a breach wins when it came before the message the audit stopped at (a pass made
    # just before that message came before it; a draw or play is that message itself)
    if breach is not None and (report.ok or breach[0] < report.messages or (
            breach[0] == report.messages and game.moves[breach[3]]["action"] == "pass")):
        index, role, reason, move_index = breach
        action = game.moves[move_index]["action"]
        out.verdict = verdicts.verdict(verdicts.BREACH, code=ILLEGAL_PLAY, culprit=role,
                                      identities=ids, reason=f"the {role}'s {action} at cards "
                                      f"message {index} breaks the rules: {reason}")
    elif not report.ok:
        out.verdict = _failed(report, game, rules, ids)
        if report.culprit is None and report.code not in (FORFEIT, "cards.incomplete"):
            out.problems.append(f"cards audit: {report.code}: {report.message}")
    else:
        out.verdict = _finished(rec, game, rules, report.faces, ids)
    out.problems.extend(rules.problems)
    return out


def _first_breach(game: Replay, rules: Rules) -> tuple[int, str, str, int] | None:
    """The first move the rules refuse (a breach the public plays show), if any."""
    if not rules.known:
        return None
    for index, move_index in game.made_at:  # draws, plays and passes, in order
        if index >= len(game.points):
            break
        move = game.moves[move_index]
        view = game.view(game.points[index], move["by"], upto=move_index)
        reason = rules.breach(view, move["by"], move)
        if reason:
            return index, move["by"], reason, move_index
    return None


def _failed(report: Any, game: Replay, rules: Rules, ids: dict[str, str | None]
            ) -> dict[str, Any]:
    if report.code == FORFEIT:
        claim = report.forfeit or {}
        if report.culprit is None:
            return verdicts.verdict(verdicts.UNDECIDED, code=FORFEIT, identities=ids,
                                   reason=report.message)
        withheld = (claim.get("due") or [None, None])[1]
        how = "withheld its opening" if withheld == "open" else "stopped"
        return verdicts.verdict(verdicts.FORFEIT, code=FORFEIT, culprit=report.culprit,
                               identities=ids, reason=f"the {report.culprit} {how}: "
                               f"{report.message}")
    if report.code == FALSE_FORFEIT:
        return verdicts.verdict(verdicts.FALSE_CLAIM, code=FALSE_FORFEIT, culprit=report.culprit,
                               identities=ids, reason=report.message)
    if report.code == "cards.incomplete":
        owed = _owed_at_end(game, rules)
        words = f"; the {owed[0]} owed its {owed[1]}" if owed else ""
        return verdicts.verdict(verdicts.INCOMPLETE, code=report.code, identities=ids,
                               reason=f"{report.message}, with no signed claim{words}")
    if report.culprit is not None:
        return verdicts.verdict(verdicts.BREACH, code=report.code, culprit=report.culprit,
                               identities=ids, reason=report.message)
    return verdicts.verdict(verdicts.UNDECIDED, code=report.code, identities=ids,
                           reason=f"the record is altered or unattributable: {report.message}")


def _owed_at_end(game: Replay, rules: Rules) -> tuple[str, str] | None:
    """Who owed the next step where the record stops: the cards protocol's, else the game's."""
    if game.due is not None or game.phase != "play" or not rules.known or not game.points:
        return game.due
    view = game.view(game.points[-1])
    decided = rules.winner(view) is not None
    return endings.game_owed(decided, None if decided else rules.turn(view))


def _finished(rec: Record, game: Replay, rules: Rules, faces: list[str],
              ids: dict[str, str | None]) -> dict[str, Any]:
    """Both keys opened and every proof checks: the game's result, or a resignation."""
    messages = rec.messages
    first = next((i for i, m in enumerate(messages) if m["mp"] == "open"), None)
    final = game.view(game.points[-1])
    if not rules.known:
        return verdicts.verdict(verdicts.GAME, identities=ids, reason="every card checks out; "
                               "the winner is the game's rule, which this verifier does not have")
    hidden = rules.hidden_breach(final, faces)
    if hidden:
        culprit = next((r for r in verdicts.ROLES if f"the {r}" in hidden), None)
        return verdicts.verdict(verdicts.BREACH, code=RULE_BROKEN, culprit=culprit,
                               identities=ids, reason=f"the opening shows: {hidden}")
    if first is not None:
        view = game.view(game.points[first])
        if rules.winner(view) is None:
            opener = messages[first]["from"]
            return verdicts.verdict(verdicts.RESIGNATION, code=RESIGNED, culprit=opener,
                                   winner=verdicts.other(opener), identities=ids,
                                   reason=f"the {opener} opened its key before the game was "
                                   "decided: it resigns")
    winner = rules.winner(final)
    return verdicts.verdict(verdicts.GAME, winner=None if winner is None else str(winner),
                           identities=ids, reason="the game's rules decided it")


def verify_game(entries: list[dict[str, Any]], spec: Any) -> list[str]:
    """The flow check without the game's rules: integrity, the cards audit, the passes."""
    return judge(entries, spec).all_problems


# ----------------------------------------------------------------- two records


def _signed_by(msg: dict[str, Any], transcript: dict[str, Any], role: str) -> bool:
    from lingxi.cards.table import signing_bytes

    try:
        VerifyKey(bytes.fromhex(transcript["identities"][role])).verify(
            signing_bytes(msg), bytes.fromhex(str(msg["sig"])))
    except (BadSignatureError, KeyError, ValueError, TypeError):
        return False
    return msg.get("from") == role


def _describe(msg: dict[str, Any] | None) -> str | None:
    if msg is None:
        return None
    extra = {"forfeit": f" against the {msg.get('against')}", "play": f" {msg.get('card')}",
             "draw": f" position {msg.get('position')}"}.get(msg["mp"], "")
    return f"{msg['mp']}{extra} by the {msg.get('from')} (seq {msg.get('seq')})"


def compare_records(a: Record, b: Record, hooks: Callable[[], Any] | None = None
                    ) -> dict[str, Any]:
    """Whether two records of one game agree, where they fork, which claim falls."""
    ja, jb = judge_record(a, Rules(hooks)), judge_record(b, Rules(hooks))
    out: dict[str, Any] = {"agree": False, "same_game": False, "common": 0, "fork": None,
                           "disproved": [], "verdicts": {"a": ja.verdict, "b": jb.verdict},
                           "problems": {"a": ja.problems, "b": jb.problems}}
    ta, tb = a.transcript, b.transcript
    if ta is None or tb is None:
        out["verdict"] = verdicts.verdict(verdicts.UNDECIDED, reason="a record holds no game")
        return out
    same = all(ta.get(k) == tb.get(k) for k in ("session_id", "universe", "deal", "identities"))
    out["same_game"] = same
    ids = {r: a.agents.get(r) or b.agents.get(r) for r in verdicts.ROLES}
    if not same:
        out["verdict"] = verdicts.verdict(verdicts.UNDECIDED, identities=ids,
                                         reason="the records are of different games")
        return out
    ma, mb = ta["messages"], tb["messages"]
    va, vb = ma[:ja.messages], mb[:jb.messages]  # only what each record's audit accepted
    common = out["common"] = _common_prefix(va, vb)
    if common == min(len(ma), len(mb)) and ma[:common] == mb[:common]:
        # one record is the other's prefix (the shorter side stopped receiving, or messages
        # were in flight when it ended): they agree, and the longer one decides
        out["agree"] = True
        out["verdict"] = ja.verdict if len(ma) >= len(mb) else jb.verdict
        return out
    out["fork"] = {"at": common, "a": _describe(ma[common] if common < len(ma) else None),
                   "b": _describe(mb[common] if common < len(mb) else None)}
    found = (_disproof("a", ja, ma, vb, "b", ta), _disproof("b", jb, mb, va, "a", ta))
    out["disproved"] = [d for d in found if d is not None]
    if out["disproved"]:
        first = out["disproved"][0]
        out["verdict"] = verdicts.verdict(
            verdicts.FALSE_CLAIM, code=FALSE_FORFEIT, culprit=first["claimant"], identities=ids,
            reason=f"the {first['claimant']}'s forfeit claim in record {first['record']} is "
            f"disproved: {first['because']}")
        return out
    out["verdict"] = verdicts.verdict(
        verdicts.UNDECIDED, identities=ids,
        reason=f"the records fork at cards message {common} ({out['fork']['a'] or 'nothing'} "
        f"in a, {out['fork']['b'] or 'nothing'} in b): whether a message was delivered "
        "cannot be proven either way")
    return out


def _common_prefix(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    pairs = enumerate(zip(a, b, strict=False))  # up to the shorter one
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def _disproof(name: str, judged: Judgement, mine: list[dict[str, Any]], theirs: list[dict[str, Any]],
              their_name: str, transcript: dict[str, Any]) -> dict[str, Any] | None:
    """How the other record disproves this record's forfeit claim: the claimant signed a
    message after the point where it claims the peer went silent (None: it does not)."""
    claim = judged.claim
    if claim is None:
        return None
    claimant, at = claim["claimant"], claim["index"]
    claim_msg = mine[at]
    later = [m for m in theirs[at:] if m != claim_msg and _signed_by(m, transcript, claimant)]
    if not later:
        return None
    same_point = [m for m in later if m.get("seq") == at]
    because = (f"record {their_name} holds another message the {claimant} signed at the "
               f"same point ({_describe(same_point[0])})" if same_point else
               f"record {their_name} holds {len(later)} later message(s) signed by the "
               f"{claimant} (first: {_describe(later[0])})")
    return {"record": name, "claim": _describe(claim_msg), "claimant": claimant,
            "by": their_name, "because": because}


def judge_dict(entries: list[dict[str, Any]], spec: Any,
               hooks: Callable[[], Any] | None = None) -> dict[str, Any]:
    """The descriptor's ``judge``: one record's verdict, problems and notes."""
    return judge(entries, spec, hooks).to_dict()


def compare_dict(entries_a: list[dict[str, Any]], entries_b: list[dict[str, Any]], spec: Any,
                 hooks: Callable[[], Any] | None = None) -> dict[str, Any]:
    """The descriptor's ``compare``: what both sides' records show together."""
    return compare_records(rebuild(entries_a, spec.protocol_id),
                           rebuild(entries_b, spec.protocol_id), hooks)
