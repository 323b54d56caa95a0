"""A sealed-bid auction used by the core-seam tests: its judged fields are named
nothing like hero-duel's (winner, prices, budgets), so the shadow judge must
compare what the guest's pure judge returns, not a list of names."""

from __future__ import annotations

import json
from pathlib import Path


def _msg(name, direction, **fields):
    return {"name": name, "direction": direction, "fields": {
        "action": {"type": "enum", "values": [name], "required": True}, **fields}}


SPEC = {
    "name": "Sealed Auction", "spec_version": "1.0",
    "messages": [
        _msg("commit", "both", round={"type": "integer", "min": 1, "required": True},
             hash={"type": "hash", "required": True}),
        _msg("reveal", "both", round={"type": "integer", "min": 1, "required": True},
             bid={"type": "integer", "min": 1, "max": 50, "required": True},
             nonce={"type": "nonce", "required": True}),
        _msg("settle", "host_to_guest", round={"type": "integer", "min": 1, "required": True},
             winner={"type": "enum", "values": ["host", "guest", "tie"], "required": True},
             host_budget={"type": "integer", "min": 0, "max": 1000, "required": True},
             guest_budget={"type": "integer", "min": 0, "max": 1000, "required": True},
             game_over={"type": "boolean", "required": True}),
    ],
    "flow": {"mode": "simultaneous_round",
             "round": {"value_field": "bid", "value_type_ref": "reveal.fields.bid"},
             "phases": [{"phase": "lots", "repeat": "lots", "exchange": [
                 {"message": "commit", "direction": "host_to_guest"},
                 {"message": "commit", "direction": "guest_to_host"},
                 {"message": "reveal", "direction": "host_to_guest"},
                 {"message": "reveal", "direction": "guest_to_host"},
                 {"message": "settle", "direction": "host_to_guest"}]}]},
    "shadow_judge": True,
    "commit_reveal": {"algorithm": "SHA256", "nonce_length": 20, "nonce_charset": "hex"},
    "rules": {"auction": "highest bid wins the lot and pays it from its budget of 100"},
    "parameters": {"lots": {"type": "integer", "min": 1, "max": 9, "default": 3}},
}

HOOKS = '''
from lingxi.hooks import HookResult, Hooks


def judge(prior, host_bid, guest_bid):
    budgets = {"host": 100, "guest": 100} if prior is None else {
        "host": prior["host_budget"], "guest": prior["guest_budget"]}
    winner = "tie" if host_bid == guest_bid else ("host" if host_bid > guest_bid else "guest")
    if winner != "tie":
        budgets[winner] -= max(host_bid, guest_bid)
    return {"winner": winner, "host_budget": budgets["host"], "guest_budget": budgets["guest"]}


class Auction(Hooks):
    def proto_next_message(self, allowed, decision=None):
        return HookResult()

    def proto_on_message(self, message):
        return None

    def proto_round_choose(self, round_no, point):
        return 10 + round_no if self.ctx.role == "host" else 12

    def proto_round_judge(self, round_no, host_value, guest_value):
        result = judge(self.state.get("prior"), host_value, guest_value)
        self.state["prior"] = result
        return {"action": "settle", **result, "game_over": round_no >= self.ctx.options["lots"]}
'''

PURE = '''
    def proto_round_judge_pure(self, prior, round_no, host_value, guest_value):
        return judge(prior, host_value, guest_value)
'''


def echo_spec(low: int = 1, high: int = 1000) -> dict:
    """The same auction with integer bids ``low..high``, no ``choices``, and a settle that
    echoes the guest's bid (``guest_bid``), which the engine checks against the reveal."""
    spec = json.loads(json.dumps(SPEC))
    bid = {"type": "integer", "min": low, "max": high, "required": True}
    for message in spec["messages"]:
        if message["name"] == "reveal":
            message["fields"]["bid"] = dict(bid)
        if message["name"] == "settle":
            message["fields"]["guest_bid"] = dict(bid)
            for side in ("host_budget", "guest_budget"):
                message["fields"][side]["min"] = -high * 9
    return spec


ECHO = """
        result["guest_bid"] = guest_value
"""
CLAMP = """
    def proto_round_choose(self, round_no, point):
        bid = self.ctx.spec.messages["reveal"].fields["bid"]
        wanted = 10 + round_no if self.ctx.role == "host" else 12
        return max(bid["min"], min(bid["max"], wanted))
"""


def write(folder: Path, *, pure: bool = True, spec: dict | None = None) -> Path:
    """The auction's folder; with an ``echo_spec()`` the judge also echoes the guest's bid."""
    spec = spec or SPEC
    hooks = HOOKS
    if "guest_bid" in next(m for m in spec["messages"] if m["name"] == "settle")["fields"]:
        hooks = hooks.replace("        self.state[\"prior\"] = result\n",
                              "        self.state[\"prior\"] = result\n" + ECHO.lstrip("\n"))
        hooks += CLAMP  # the later definition wins: bids stay inside the declared range
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    (folder / "hooks.py").write_text(hooks + (PURE if pure else ""), encoding="utf-8")
    return folder
