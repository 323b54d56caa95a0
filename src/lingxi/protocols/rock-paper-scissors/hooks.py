"""Rock-paper-scissors hooks. The engine commits and reveals; we choose and judge."""

from lingxi.hooks import DecisionPoint, HookResult, Hooks

BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
HISTORY = 20  # earlier throws a decider sees: enough to play on, flat over 10,000 rounds


def winner_of(host, guest):
    if host == guest:
        return "draw"
    return "host" if BEATS[host] == guest else "guest"


def judged(state, round_no, host, guest):
    """The round_result that follows from both throws and the score before them (pure: the
    host sends it, the guest recomputes it rather than take the host's word for the score)."""
    wins = dict(state["wins"])
    winner = winner_of(host, guest)
    if winner != "draw":
        wins[winner] += 1
    over = round_no >= state["best_of"] or (
        state["termination"] == "first_to_win" and max(wins.values()) >= state["rounds_to_win"])
    game_winner = "none"
    if over:
        game_winner = ("draw" if wins["host"] == wins["guest"]
                       else "host" if wins["host"] > wins["guest"] else "guest")
    return {"action": "round_result", "round": round_no, "host_choice": host,
            "guest_choice": guest, "round_winner": winner, "host_wins": wins["host"],
            "guest_wins": wins["guest"], "game_over": over, "game_winner": game_winner}


class RockPaperScissorsHooks(Hooks):
    def proto_start(self):
        best_of = self.ctx.options["best_of"]
        self.state.update(best_of=best_of, rounds_to_win=best_of // 2 + 1,
                          termination=self.ctx.options["termination"], wins={"host": 0, "guest": 0},
                          winner=None, history=[])

    def proto_next_message(self, allowed, decision=None):
        if "join" in allowed:
            return HookResult(response={"action": "join"})
        if "ready" in allowed:
            return HookResult(response={"action": "ready", "best_of": self.state["best_of"],
                                        "rounds_to_win": self.state["rounds_to_win"],
                                        "termination": self.state["termination"]})
        return HookResult()

    def proto_on_message(self, message):
        action = message["action"]
        if action == "join":
            return self.proto_next_message(["ready"])
        if action == "ready":
            self.state.update(best_of=message["best_of"], rounds_to_win=message["rounds_to_win"],
                              termination=message["termination"])
        elif action == "round_result":
            # the engine checked both throws against the reveals; the score is ours to check
            expected = judged(self.state, message["round"], message["host_choice"],
                              message["guest_choice"])
            wrong = [k for k in expected if message.get(k) != expected[k]]
            if wrong:
                return HookResult(abort=f"the host's round {message['round']} result does not "
                                        f"follow from the throws ({', '.join(wrong)})")
            self.state["wins"] = {"host": message["host_wins"], "guest": message["guest_wins"]}
            self._remember(message)
            if message["game_over"]:
                self.state["winner"] = message["game_winner"]
        elif action == "error":
            return HookResult(abort=f"peer reported {message['reason']}")
        return None

    def _you(self, side):
        return {self.ctx.role: "you", self.ctx.peer: "the peer"}.get(side, side)

    def _remember(self, result):
        """Every earlier throw, as this side saw it: what a player (or a model) plays on."""
        role, peer = self.ctx.role, self.ctx.peer
        self.state["history"].append({"round": result["round"], "you": result[f"{role}_choice"],
                                      "peer": result[f"{peer}_choice"],
                                      "winner": self._you(result["round_winner"])})
        del self.state["history"][:-HISTORY]

    def proto_round_point(self, round_no):
        wins = self.state["wins"]
        return DecisionPoint(legal=["rock", "paper", "scissors"],
                             message=f"round {round_no}: rock, paper or scissors?",
                             view={"round": round_no, "my_wins": wins[self.ctx.role],
                                   "peer_wins": wins[self.ctx.peer],
                                   "rounds_to_win": self.state["rounds_to_win"],
                                   "history": [dict(h) for h in self.state["history"]]})

    def proto_round_choose(self, round_no, point):
        return self.ctx.rng.choice(point.legal)

    def proto_round_judge(self, round_no, host_value, guest_value):
        result = judged(self.state, round_no, host_value, guest_value)
        self.state["wins"] = {"host": result["host_wins"], "guest": result["guest_wins"]}
        if result["game_over"]:
            self.state["winner"] = result["game_winner"]
        self._remember(result)
        return result

    def proto_describe(self, message):
        """The game's words, from this side: ``round 2: you rock, the peer scissors — you
        win (you 1 – 0 the peer)``."""
        if message["action"] == "round_result":
            role, peer = self.ctx.role, self.ctx.peer
            won = message["round_winner"]
            verdict = "a draw" if won == "draw" else f"{self._you(won)} win" + (
                "" if won == role else "s")
            return (f"round {message['round']}: you {message[f'{role}_choice']}, the peer "
                    f"{message[f'{peer}_choice']} — {verdict} (you {message[f'{role}_wins']} – "
                    f"{message[f'{peer}_wins']} the peer)")
        if message["action"] == "ready":
            return (f"best of {message['best_of']}: {message['rounds_to_win']} wins take the game"
                    if message["termination"] == "first_to_win"
                    else f"{message['best_of']} rounds, the most wins take the game")
        return None

    def proto_finish(self, outcome):
        return {"winner": self.state.get("winner"), "score": dict(self.state.get("wins", {}))}
