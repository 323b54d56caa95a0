"""A rock-paper-scissors agent written against Lingxi's Python API.

It hosts a best-of-N game on a loopback port and decides every throw itself
(a callback that sees only the decision's projection: legal values, the hooks'
view of the score, the time left). A second, autonomous Lingxi guest joins in
the same process, so the example runs on its own:

    .venv/bin/python examples/agents/rps_agent.py --best-of 5

Point a real guest at it instead with --serve (then run, in another terminal,
`lingxi guest --endpoint <printed endpoint>`).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
from pathlib import Path

from lingxi.session import RequestDecision, SessionConfig, load_protocol
from lingxi.session.net import guest_session, host_session
from lingxi.wire.identity import Identity


class CyclingAgent:
    """Throws rock, paper, scissors in turn; an async decider (a sync one works too)."""

    def __init__(self) -> None:
        self.cycle = itertools.cycle(["rock", "paper", "scissors"])
        self.asked = 0

    async def __call__(self, request: RequestDecision) -> str:
        self.asked += 1
        choice = next(self.cycle)
        assert choice in request.legal  # the legal values come with every point
        score = request.view  # the hooks' projection: round, my_wins, peer_wins, ...
        print(f"round {score.get('round')}: {score.get('my_wins')}-{score.get('peer_wins')}, "
              f"{request.timeout_seconds:g}s to decide -> {choice}", flush=True)
        return choice


async def main(best_of: int, serve: bool, home: Path) -> int:
    protocol = load_protocol("rock-paper-scissors")
    agent = CyclingAgent()
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    host = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", options={"best_of": best_of},
        identity=Identity.generate(), state_dir=home / "host", decider=agent,
        config=SessionConfig(peer_timeout=30.0), on_listening=listening.set_result))
    endpoint = await listening
    print(f"hosting on {endpoint}", flush=True)
    if not serve:  # the example's own opponent: the guest's hooks decide
        guest = await guest_session(protocol, endpoint, identity=Identity.generate(),
                                    state_dir=home / "guest")
        print(f"guest: {guest.outcome.status} {guest.outcome.summary}")
    result = await host
    print(f"host: {result.outcome.status} {result.outcome.summary}; "
          f"the agent decided {agent.asked} times; receipts verified: "
          f"{result.receipts_verified}")
    return 0 if result.outcome.ok and result.receipts_verified else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--best-of", type=int, default=3)
    parser.add_argument("--serve", action="store_true",
                        help="wait for a real guest instead of playing one in-process")
    parser.add_argument("--state-dir", type=Path, help="where to keep the session folders")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raise SystemExit(asyncio.run(main(args.best_of, args.serve, args.state_dir or Path(tmp))))
