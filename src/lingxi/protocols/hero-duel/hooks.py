"""Hero Duel hooks: a pure round judge over options.balance, shared by host and guest.

``judge`` is a plain function of (previous result, round, moves, options);
the host uses it to build each round result and the guest's engine calls
``proto_round_judge_pure`` to recompute it (shadow judge).
"""

from lingxi.hooks import DecisionPoint, HookResult, Hooks

SKILLS = {"skill_a": "a", "skill_b": "b", "ult": "ult"}
MOVES = ["strike", "skill_a", "skill_b", "ult"]


def start_state(balance):
    side = {"hp": balance["hp"], "mana": balance["mana"], "cd_a": 0, "cd_b": 0, "cd_ult": 0}
    return {"host": dict(side), "guest": dict(side)}


def state_from(result, balance):
    if result is None:
        return start_state(balance)
    return {side: {"hp": result[f"{side}_hp"], "mana": result[f"{side}_mana"],
                   "cd_a": result[f"{side}_cd_a"], "cd_b": result[f"{side}_cd_b"],
                   "cd_ult": result[f"{side}_cd_ult"]} for side in ("host", "guest")}


def resolve(me, move, balance):
    """Damage dealt by ``move``; pays cost and sets cooldown on ``me`` (a copy)."""
    if move in SKILLS:
        skill, cd_key = balance[move], "cd_" + SKILLS[move]
        if me["mana"] >= skill["cost"] and me[cd_key] == 0:
            me["mana"] -= skill["cost"]
            me[cd_key] = skill["cd"]
            return skill["dmg"]
    return balance["atk"]


def judge(prior, round_no, host_move, guest_move, options):
    balance, max_rounds = options["balance"], options["max_rounds"]
    state = state_from(prior, balance)
    dealt = {"host": resolve(state["host"], host_move, balance),
             "guest": resolve(state["guest"], guest_move, balance)}
    state["host"]["hp"] = max(0, state["host"]["hp"] - dealt["guest"])
    state["guest"]["hp"] = max(0, state["guest"]["hp"] - dealt["host"])
    for side in state.values():
        for key in ("cd_a", "cd_b", "cd_ult"):
            side[key] = max(0, side[key] - 1)
        side["mana"] = min(balance["mana"], side["mana"] + balance["mana_regen"])
    host_hp, guest_hp = state["host"]["hp"], state["guest"]["hp"]
    over = host_hp == 0 or guest_hp == 0 or round_no >= max_rounds
    winner = "none"
    if over:
        winner = "draw" if host_hp == guest_hp else ("host" if host_hp > guest_hp else "guest")
    round_winner = ("draw" if dealt["host"] == dealt["guest"]
                    else "host" if dealt["host"] > dealt["guest"] else "guest")
    out = {"action": "round_result", "round": round_no, "host_move": host_move,
           "guest_move": guest_move, "round_winner": round_winner, "game_over": over,
           "game_winner": winner}
    for side in ("host", "guest"):
        s = state[side]
        out.update({f"{side}_hp": s["hp"], f"{side}_mana": s["mana"],
                    f"{side}_damage_dealt": dealt[side], f"{side}_cd_a": s["cd_a"],
                    f"{side}_cd_b": s["cd_b"], f"{side}_cd_ult": s["cd_ult"]})
    return out


class HeroDuelHooks(Hooks):
    def proto_start(self):
        self.state.update(last=None, winner=None,
                          heroes={"host": self.ctx.options["host_hero"],
                                  "guest": self.ctx.options["guest_hero"]})

    def proto_next_message(self, allowed, decision=None):
        if "join" in allowed:
            return HookResult(response={"action": "join", "hero": self.state["heroes"]["guest"]})
        return HookResult()

    def proto_on_message(self, message):
        action = message["action"]
        if action == "join":
            self.state["heroes"]["guest"] = message["hero"]
            return HookResult(response={"action": "ready",
                                        "host_hero": self.state["heroes"]["host"],
                                        "guest_hero": message["hero"],
                                        "max_rounds": self.ctx.options["max_rounds"]})
        if action == "round_result":
            self.state["last"] = message
            if message["game_over"]:
                self.state["winner"] = message["game_winner"]
        elif action == "error":
            return HookResult(abort=f"peer reported {message['reason']}")
        return None

    def _me(self):
        return state_from(self.state["last"], self.ctx.options["balance"])[self.ctx.role]

    def proto_round_point(self, round_no):
        me, balance = self._me(), self.ctx.options["balance"]
        ready = [m for m in MOVES if m == "strike" or (
            me["mana"] >= balance[m]["cost"] and me["cd_" + SKILLS[m]] == 0)]
        return DecisionPoint(legal=list(MOVES), message=f"round {round_no}: your move",
                             view={"round": round_no, "hp": me["hp"], "mana": me["mana"],
                                   "castable": ready})

    def proto_round_choose(self, round_no, point):
        castable = point.view["castable"]
        if "ult" in castable:
            return "ult"
        return self.ctx.rng.choice(castable)

    def proto_round_judge(self, round_no, host_value, guest_value):
        result = judge(self.state["last"], round_no, host_value, guest_value, self.ctx.options)
        self.state["last"] = result
        if result["game_over"]:
            self.state["winner"] = result["game_winner"]
        return result

    def proto_round_judge_pure(self, prior, round_no, host_value, guest_value):
        return judge(prior, round_no, host_value, guest_value, self.ctx.options)

    def proto_describe(self, message):
        """The round in the game's words, from this side."""
        if message["action"] == "round_result":
            role, peer = self.ctx.role, self.ctx.peer
            return (f"round {message['round']}: you {message[f'{role}_move']} "
                    f"({message[f'{role}_damage_dealt']} damage), the peer "
                    f"{message[f'{peer}_move']} ({message[f'{peer}_damage_dealt']} damage) — "
                    f"HP you {message[f'{role}_hp']}, the peer {message[f'{peer}_hp']}")
        if message["action"] == "ready":
            heroes = {"host": message["host_hero"], "guest": message["guest_hero"]}
            return (f"your hero {heroes[self.ctx.role]} against {heroes[self.ctx.peer]}, "
                    f"at most {message['max_rounds']} rounds")
        return None

    def proto_finish(self, outcome):
        last = self.state.get("last") or {}
        return {"winner": self.state.get("winner"), "host_hp": last.get("host_hp"),
                "guest_hp": last.get("guest_hp")}
