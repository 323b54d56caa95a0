"""Peak memory of a long self-play against a short one (flat cost per round).

A ping-pong protocol (one guest message and one host answer per round) is
played for 10 rounds and for N rounds (default 10,000) over the in-memory
driver, each in a fresh process, streaming events and transcript to a state
folder as a real session does. tracemalloc's peak for the whole run is
printed for both, with the difference; the aim is a difference under 20 MiB.
Run: .venv/bin/python benchmarks/memory.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SPEC = {
    "name": "Ping Pong (benchmark)", "spec_version": "1.0",
    "messages": [
        {"name": "ping", "direction": "guest_to_host", "fields": {
            "action": {"type": "enum", "values": ["ping"], "required": True},
            "n": {"type": "integer", "min": 1, "max": 1000000, "required": True}}},
        {"name": "pong", "direction": "host_to_guest", "fields": {
            "action": {"type": "enum", "values": ["pong"], "required": True},
            "n": {"type": "integer", "min": 1, "max": 1000000, "required": True},
            "game_over": {"type": "boolean", "required": True}}},
    ],
    "flow": {"phases": [{"phase": "play", "repeat": "until game_over", "exchange": [
        {"message": "ping", "direction": "guest_to_host"},
        {"message": "pong", "direction": "host_to_guest"}]}]},
    "rules": {"end": "after `rounds` pongs"},
    "parameters": {"rounds": {"type": "integer", "min": 1, "max": 1000000, "default": 10}},
}

HOOKS = '''
from lingxi.hooks import HookResult, Hooks


class PingPong(Hooks):
    def proto_next_message(self, allowed, decision=None):
        if "ping" in allowed:
            self.state["n"] = self.state.get("n", 0) + 1
            return HookResult(response={"action": "ping", "n": self.state["n"]})
        return HookResult()

    def proto_on_message(self, message):
        if message["action"] == "ping":
            over = message["n"] >= self.ctx.options["rounds"]
            return HookResult(response={"action": "pong", "n": message["n"], "game_over": over})
        return None
'''

CHILD = '''
import json, sys, tracemalloc
tracemalloc.start()
from lingxi.session import run_pair, load_protocol
protocol = load_protocol(sys.argv[1])
result = run_pair(protocol, options={"rounds": int(sys.argv[2])}, state_dir=sys.argv[3],
                  keep_events=False)
assert result.host.status == "completed", result.host
print(json.dumps({"rounds": result.host.rounds, "peak": tracemalloc.get_traced_memory()[1]}))
'''


def measure(folder: Path, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as state:
        out = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(rounds), state],
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "ping-pong"
        folder.mkdir()
        (folder / "spec.json").write_text(json.dumps(SPEC))
        (folder / "hooks.py").write_text(HOOKS)
        short, long = measure(folder, 10), measure(folder, args.rounds)
    mib = 1024 * 1024
    print(f"peak memory, {short['rounds']:>6} rounds: {short['peak'] / mib:7.2f} MiB")
    print(f"peak memory, {long['rounds']:>6} rounds: {long['peak'] / mib:7.2f} MiB")
    diff = (long["peak"] - short["peak"]) / mib
    print(f"difference: {diff:.2f} MiB ({diff * mib / max(1, long['rounds'] - 10):.0f} bytes per "
          f"round; aim: under 20 MiB)")


if __name__ == "__main__":
    main()
