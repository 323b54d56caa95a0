"""Guess Number hooks: the host keeps a secret, the guest bisects.

Host: draws the secret from self.ctx.rng, answers every guess, announces the
end. Guest: guesses the middle of what is still possible; in manual control
mode a decider picks the number within the remaining bounds instead.
"""

from lingxi.hooks import DecisionPoint, HookResult, Hooks


class GuessNumberHooks(Hooks):
    def proto_start(self):
        options = self.ctx.options
        self.state.update(low=options["range_min"], high=options["range_max"],
                          budget=options["max_attempts"], attempt=0, over=False, winner=None)
        if self.ctx.role == "host":
            self.state["secret"] = self.ctx.rng.randint(self.state["low"], self.state["high"])

    # -- host ---------------------------------------------------------------
    def _answer(self, message):
        number, attempt = message["number"], message["attempt"]
        if attempt != self.state["attempt"] + 1:
            return HookResult(abort=f"attempt {attempt} is out of sequence")
        self.state["attempt"] = attempt
        secret = self.state["secret"]
        result = "correct" if number == secret else ("higher" if secret > number else "lower")
        if result == "correct":
            self.state.update(over=True, winner="guest")
        elif attempt >= self.state["budget"]:
            self.state.update(over=True, winner="host")
        return HookResult(response={"action": "hint", "attempt": attempt, "result": result,
                                    "game_over": self.state["over"]})

    # -- guest --------------------------------------------------------------
    def _guess(self, number):
        self.state["attempt"] += 1
        self.state["last"] = number
        return HookResult(response={"action": "guess", "attempt": self.state["attempt"],
                                    "number": number})

    # -- both ---------------------------------------------------------------
    def proto_next_message(self, allowed, decision=None):
        if "join" in allowed:
            return HookResult(response={"action": "join"})
        if "guess" in allowed:
            low, high = self.state["low"], self.state["high"]
            return self._guess(decision if decision is not None else (low + high) // 2)
        if "game_over" in allowed:
            return HookResult(response={"action": "game_over", "winner": self.state["winner"],
                                        "secret": self.state["secret"],
                                        "attempts": self.state["attempt"]})
        return HookResult()

    def proto_on_message(self, message):
        action = message["action"]
        if action == "join":
            return HookResult(response={"action": "ready", "range_min": self.state["low"],
                                        "range_max": self.state["high"],
                                        "max_attempts": self.state["budget"]})
        if action == "guess":
            return self._answer(message)
        if action == "ready":
            self.state.update(low=message["range_min"], high=message["range_max"],
                              budget=message["max_attempts"])
        elif action == "hint":
            guessed = self.state.get("last")
            self.state.setdefault("history", []).append((guessed, message["result"]))
            if message["result"] == "higher" and guessed is not None:
                self.state["low"] = guessed + 1
            elif message["result"] == "lower" and guessed is not None:
                self.state["high"] = guessed - 1
            self.state["over"] = message["game_over"]
        elif action == "game_over":
            self.state.update(winner=message["winner"], secret=message["secret"])
            if not self._hints_consistent(message["secret"]):
                return HookResult(abort="the revealed secret contradicts the hints")
            # who won follows from the hints, not from the host's word
            found = any(result == "correct" for _, result in self.state.get("history", []))
            if message["winner"] != ("guest" if found else "host"):
                return HookResult(abort=f"the host names {message['winner']} the winner, "
                                        "but the hints say otherwise")
        elif action == "error":
            return HookResult(abort=f"peer reported {message['reason']}")
        return None

    def _you(self, side):
        return "you" if side == self.ctx.role else "the peer"

    def proto_decision_point(self, allowed):
        if self.ctx.role != "guest" or "guess" not in allowed:
            return None
        low, high = self.state["low"], self.state["high"]
        left = self.state["budget"] - self.state["attempt"]
        return DecisionPoint(bounds=(low, high), default=(low + high) // 2,
                             message=f"your guess: a number from {low} to {high} "
                                     f"({left} {'guess' if left == 1 else 'guesses'} left)",
                             view={"low": low, "high": high, "attempts_left": left})

    def proto_describe(self, message):
        """The game's words, from this side: the guest guesses, the host answers."""
        action = message["action"]
        guesser = self._you("guest")
        if action == "ready":
            return (f"the host thinks of a number from {message['range_min']} to "
                    f"{message['range_max']}; {message['max_attempts']} guesses")
        if action == "guess":
            verb = "guess" if guesser == "you" else "guesses"
            return f"{guesser} {verb} {message['number']} (guess {message['attempt']})"
        if action == "hint":
            words = {"higher": "higher", "lower": "lower", "correct": "correct!"}
            return f"guess {message['attempt']}: {words[message['result']]}"
        if action == "game_over":
            return f"the secret was {message['secret']}"
        return None

    def proto_finish(self, outcome):
        return {"winner": self.state.get("winner"), "attempts": self.state.get("attempt")}

    def _hints_consistent(self, secret):
        for number, result in self.state.get("history", []):
            expected = "correct" if number == secret else ("higher" if secret > number else "lower")
            if expected != result:
                return False
        return True
