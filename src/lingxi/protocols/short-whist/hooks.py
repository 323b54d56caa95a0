"""Short Whist hooks: lingxi.cards.games.trick over the engine's view.

Whether a player who did not follow suit could have followed is hidden when
it happens, but not for long: nothing is drawn, so when that player later
plays a card of the suit it failed to follow, the public plays prove it held
that suit. ``proto_mp_validate_play`` refuses that play at once (the engine
ends the game with ``mental_poker.illegal_play`` against the revoker), and
since every card is played, every revoke is shown before the game ends.
``proto_mp_audit`` checks the same after the openings (defence in depth).
"""

from lingxi.cards.games import trick as rules
from lingxi.hooks import Hooks


class ShortWhistHooks(Hooks):
    def proto_start(self):
        self.state.update(replayed=0, game=None, winner=None)

    def _game(self, view):
        history = view["history"]
        if self.state.get("game") is None or self.state["replayed"] > len(history):
            self.state.update(game=rules.start(view["table"][0]), replayed=0)
        game = self.state["game"]
        for move in history[self.state["replayed"]:]:
            game = rules.apply(game, move["by"], {"action": "play", "card": move["card"]})
        self.state.update(game=game, replayed=len(history))
        return game

    def proto_mp_deck_universe(self):
        return rules.universe()

    def proto_mp_initial_deal(self):
        return {"host": rules.DEAL.host, "guest": rules.DEAL.guest, "table": rules.DEAL.table}

    def proto_mp_legal_actions(self, view):
        return rules.legal_actions(self._game(view), view["role"], view["hand"])

    def proto_mp_choose_action(self, view, legal):
        game = self._game(view)
        if game.led is None:  # lead the highest card
            return max(legal, key=lambda a: rules.RANKS.index(a["card"][0]))
        beating = [a for a in legal if rules._beats(game, game.led, a["card"])]
        pool = beating or legal  # win cheaply if possible, else throw the lowest
        return min(pool, key=lambda a: rules.RANKS.index(a["card"][0]))

    def proto_mp_validate_play(self, view, role, action):
        if action["action"] != "play":
            return "a trick game has only plays"
        why = rules.validate_play(self._game(view), role, action["card"], action.get("note"))
        if why is not None:
            return why
        plays = self._plays(view)
        earlier = rules.shown_revoke(plays, role, action["card"])
        if earlier is not None:
            _, card, led = plays[earlier]
            return (f"{action['card']} shows a revoke: the {role} played {card} on {led} "
                    f"while holding {led[1]}")
        return None

    @staticmethod
    def _plays(view):
        """(role, card, led card or None) for every public play so far."""
        plays, game = [], rules.start(view["table"][0])
        for move in view["history"]:
            plays.append((move["by"], move["card"], game.led))
            game = rules.apply(game, move["by"], {"action": "play", "card": move["card"]})
        return plays

    def proto_mp_turn(self, view):
        game = self._game(view)
        return None if game.result is not None else game.turn

    def proto_mp_check_winner(self, view):
        winner = rules.winner(self._game(view))
        if winner is not None:
            self.state["winner"] = winner
        return winner

    def proto_mp_audit(self, view, faces):
        plays = self._plays(view)
        deal = rules.DEAL
        hands = {"host": faces[:deal.host], "guest": faces[deal.host:deal.host + deal.guest]}
        bad = rules.revokes(plays, hands)
        if bad:
            role, card, led = plays[bad[0]]
            return f"the {role} played {card} on {led} while holding {led[1]}"
        return None

    def proto_finish(self, outcome):
        return {"winner": self.state.get("winner")}
