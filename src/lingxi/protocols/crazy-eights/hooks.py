"""Crazy Eights hooks: the rules of lingxi.cards.games.crazy_eights over the engine's view.

The engine deals, draws, proves and audits every card; these hooks only say
what the deck is, what is legal and who won. The public game state is
rebuilt from ``view["history"]`` (cached, so each move costs one step).
An 8's named suit travels as the play's ``note``.
"""

from lingxi.cards.games import crazy_eights as rules
from lingxi.hooks import Hooks


class CrazyEightsHooks(Hooks):
    def proto_start(self):
        self.state.update(replayed=0, game=None, winner=None)

    def _game(self, view):
        history = view["history"]
        if self.state.get("game") is None or self.state["replayed"] > len(history):
            self.state.update(game=rules.start(view["table"][0]), replayed=0)
        game = self.state["game"]
        for move in history[self.state["replayed"]:]:
            game = rules.apply(game, move["by"], self._rules_action(move))
        self.state.update(game=game, replayed=len(history))
        return game

    @staticmethod
    def _rules_action(action):
        out = {"action": action["action"]}
        if action["action"] == "play":
            out["card"] = action["card"]
            if action.get("note") is not None:
                out["suit"] = action["note"]
        return out

    def proto_mp_deck_universe(self):
        return rules.universe()

    def proto_mp_initial_deal(self):
        return {"host": rules.DEAL.host, "guest": rules.DEAL.guest, "table": rules.DEAL.table}

    def proto_mp_legal_actions(self, view):
        game = self._game(view)
        out = []
        for action in rules.legal_actions(game, view["role"], view["hand"]):
            if action["action"] == "draw" and view["stock"] <= 0:
                continue
            item = {"action": action["action"]}
            if "card" in action:
                item["card"] = action["card"]
            if "suit" in action:
                item["note"] = action["suit"]
            out.append(item)
        return out

    def proto_mp_choose_action(self, view, legal):
        plays = [a for a in legal if a["action"] == "play"]
        if not plays:
            return legal[0]
        # keep 8s for last; name the suit most common in the rest of the hand
        plain = [a for a in plays if a["card"][0] != "8"]
        if plain:
            return plain[0]
        rest = [c for c in view["hand"] if c[0] != "8"]
        best = max(rules.SUITS, key=lambda s: sum(1 for c in rest if c[1] == s))
        return next(a for a in plays if a.get("note") == best)

    def proto_mp_validate_play(self, view, role, action):
        game = self._game(view)
        kind = action["action"]
        if game.result is not None:
            return "the game is over"
        if game.turn != role:
            return "not your turn"
        if kind == "play":
            return rules.validate_play(game, role, action["card"], action.get("note"))
        if kind == "draw":
            if game.drew:
                return "only one draw per turn"
            return None if game.stock > 0 else "the stock is empty"
        if kind == "pass":
            return None if game.drew or game.stock == 0 else "draw before passing"
        return f"unknown action {kind!r}"

    def proto_mp_turn(self, view):
        game = self._game(view)
        return None if game.result is not None else game.turn

    def proto_mp_check_winner(self, view):
        winner = rules.winner(self._game(view))
        if winner is not None:
            self.state["winner"] = winner
        return winner

    def proto_finish(self, outcome):
        return {"winner": self.state.get("winner")}

    def proto_describe(self, message):
        if message.get("action") == "mp_play":
            return f"{message.get('from')} plays {message.get('card')}"
        return None
