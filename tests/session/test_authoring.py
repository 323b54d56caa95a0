"""The authoring path of docs/protocol-authoring.md: template -> hooks -> protocol test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lingxi.cli import cli

HOOKS = {
    "turn-based-game": 'from lingxi.hooks import DecisionPoint, HookResult, Hooks\n\n\nclass RaceTo20(Hooks):\n    """Each move adds 1-3 to the guest\'s position; reach 20 before max_turns."""\n\n    def proto_start(self):\n        self.state.update(turn=0, position=0)\n\n    def proto_decision_point(self, allowed):\n        if "move" in allowed:\n            return DecisionPoint(bounds=(1, 3), default=3, view={"position": self.state["position"]})\n        return None\n\n    def proto_next_message(self, allowed, decision=None):\n        if "join" in allowed:\n            return HookResult(response={"action": "join"})\n        if "move" in allowed:\n            self.state["turn"] += 1\n            step = decision or self.ctx.rng.randint(1, 3)\n            target = min(99, self.state["position"] + step)\n            return HookResult(response={"action": "move", "turn": self.state["turn"],\n                                        "position": target})\n        if "end" in allowed:\n            return HookResult(response={"action": "end", "winner": self.state["winner"]})\n        return HookResult()\n\n    def proto_on_message(self, message):\n        action = message["action"]\n        if action == "join":\n            return HookResult(response={"action": "ready", "max_turns": self.ctx.options["max_turns"],\n                                        "first": "guest"})\n        if action == "move":\n            step = message["position"] - self.state["position"]\n            if message["turn"] != self.state["turn"] + 1 or not 1 <= step <= 3:\n                return HookResult(abort="illegal move")\n            self.state.update(turn=message["turn"], position=message["position"])\n            won = message["position"] >= 20\n            over = won or message["turn"] >= self.ctx.options["max_turns"]\n            self.state["winner"] = "guest" if won else "host"\n            return HookResult(response={"action": "round_result", "turn": message["turn"],\n                                        "guest_position": message["position"], "game_over": over,\n                                        "winner": self.state["winner"] if over else "none"})\n        if action == "round_result":\n            self.state["position"] = message["guest_position"]\n        return None\n',
    "request-response": '"""An upper-casing service on the request-response template."""\n\nimport hashlib\nimport json\n\nfrom lingxi.hooks import HookResult, Hooks\n\n\ndef digest(value):\n    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)\n    return hashlib.sha256(text.encode()).hexdigest()\n\n\nclass UpperService(Hooks):\n    def proto_next_message(self, allowed, decision=None):\n        if "request" in allowed:\n            return HookResult(response={"action": "request", "request_id": "r1",\n                                        "task": "upper-case this please"})\n        return HookResult()\n\n    def proto_on_message(self, message):\n        action = message["action"]\n        if action == "request":\n            result = {"text": message["task"].upper()}\n            return HookResult(response=[\n                {"action": "accept", "request_id": message["request_id"], "eta_seconds": 0},\n                {"action": "deliver", "request_id": message["request_id"], "result": result,\n                 "result_hash": digest(result)}])\n        if action == "deliver":\n            ok = digest(message["result"]) == message["result_hash"]\n            return HookResult(response={"action": "confirm", "request_id": message["request_id"],\n                                        "accepted": ok})\n        if action == "error":\n            return HookResult(abort=message["reason"])\n        return None\n',
}


@pytest.mark.parametrize("template", sorted(HOOKS))
def test_template_plus_hooks_passes_protocol_test_and_adversarial(template, tmp_path: Path):
    runner = CliRunner()
    folder = tmp_path / template
    folder.mkdir()
    made = runner.invoke(cli, ["protocol", "create", "--template", template, "--output",
                               str(folder / "spec.json")])
    assert made.exit_code == 0, made.output
    (folder / "hooks.py").write_text(HOOKS[template])
    result = runner.invoke(cli, ["protocol", "test", str(folder), "--adversarial", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["host"]["status"] == "completed" and data["receipts_verified"]
    assert data["adversarial"]["ok"]
    if template == "request-response":  # every envelope after the request carries its id
        state = Path(data["state_dir"]) / "guest" / "transcript.jsonl"
        envelopes = [json.loads(line)["envelope"] for line in state.read_text().splitlines()]
        protocol = [e for e in envelopes if not e["payload"]["action"].startswith("session.")]
        ids = {e.get("correlation_id") for e in protocol}
        assert len(protocol) == 4 and len(ids) == 1 and None not in ids
