"""Who owes the next move of a built-in game, from the public record alone.

The cards table knows its own due steps (a share after a draw, an opening
after the peer's); during play, whose move it is belongs to the game. These
helpers replay a game's public moves (draws and plays, read from the signed
cards messages, plus the session's passes) through its rules, so the cards
audit, the in-process driver and the cheat library can tell whether a
forfeit claim names the side that really owed the next step. Once the game
is decided the host owes its opening (the host opens first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from lingxi.cards.table import Table

Move = dict[str, Any]


def public_moves(table: Table) -> list[Move]:
    """The game moves in the table's messages: draws and plays, table cards excluded."""
    reveals = set(table.params.deal.table_positions())
    moves: list[Move] = []
    for msg in table.messages:
        if msg["mp"] == "draw":
            moves.append({"by": msg["from"], "action": "draw"})
        elif msg["mp"] == "play" and msg["position"] not in reveals:
            move = {"by": msg["from"], "action": "play", "card": msg["card"]}
            if msg.get("note") is not None:
                move["note"] = msg["note"]
            moves.append(move)
    return moves


def rules_action(move: Move) -> dict[str, Any]:
    """A public move in the built-in rules' own shape (an 8's named suit is its note)."""
    out: dict[str, Any] = {"action": move["action"]}
    if move["action"] == "play":
        out["card"] = move["card"]
        if move.get("note") is not None:
            out["suit"] = move["note"]
    return out


def replay(rules: ModuleType, table_cards: Sequence[str], moves: Sequence[Move]) -> Any:
    """The public state after ``moves`` (each must have been legal)."""
    state = rules.start(table_cards[0])
    for move in moves:
        state = rules.apply(state, move["by"], rules_action(move))
    return state


def owed(rules: ModuleType, table_cards: Sequence[str], moves: Sequence[Move]
         ) -> tuple[str, str] | None:
    """(role, step) the game requires next: the host's opening once decided, else a move."""
    state = replay(rules, table_cards, moves)
    if rules.winner(state) is not None:
        return ("host", "open")
    return (state.turn, "move")


def game_due(rules: ModuleType) -> Callable[[Table], tuple[str, str] | None]:
    """A ``Table.game_due`` for a built-in game without passes in its record.

    The cards messages hold no passes (they are session messages): a session
    judges turns through its hooks, which see the passes; this is for the
    cards library's own games and audits.
    """
    def due(table: Table) -> tuple[str, str] | None:
        if table.must_reveal:
            return None
        cards = [table.played[p] for p in table.params.deal.table_positions()]
        return owed(rules, cards, public_moves(table))
    return due
