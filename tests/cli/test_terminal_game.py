"""Two people play a whole game of crazy eights in two terminals, reading them as a person
would: every prompt names the top card and the hand, a card is typed as it is shown, the
end says "you won" or "you lost" on each side, and no protocol message name appears.

Terminals are pseudo-terminals driven by pexpect; HANG_GUARD only stops a broken run from
hanging the suite, nothing here asserts on timing.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from lingxi.session.runner import load_protocol

HANG_GUARD = 120
LINGXI = str(Path(sys.executable).parent / "lingxi")
HEADER = re.compile(r"^-- (.+) \(\d+ s to answer\) --\r?$", re.M)
PROMPT = r"1-\d+ \(\d+ s left\)> "
CHOICE = re.compile(r"^  (\d+)\) (.+?)\r?$", re.M)


def _spawn(args: list[str], home: Path) -> tuple[pexpect.spawn, io.StringIO]:
    env = {**os.environ, "LINGXI_HOME": str(home), "LINGXI_DEBUG": "", "COLUMNS": "250"}
    child = pexpect.spawn(LINGXI, args, env=env, encoding="utf-8", timeout=HANG_GUARD,
                          dimensions=(60, 250))
    seen = io.StringIO()
    child.logfile_read = seen
    return child, seen


class Player:
    """One terminal: answers each new decision with its first choice, typed as shown."""

    def __init__(self, child: pexpect.spawn, seen: io.StringIO) -> None:
        self.child, self.seen = child, seen
        self.answered = 0
        self.blocks: list[str] = []
        self.typed: list[str] = []
        self.done = False

    def step(self) -> None:
        if self.done:
            return
        found = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT], timeout=0.2)
        if found == 1:
            self.done = True
            return
        text = self.seen.getvalue()
        headers = list(HEADER.finditer(text))
        if found != 0 or len(headers) <= self.answered:
            return  # no prompt yet, or the open prompt shown again below a console line
        block = text[headers[-1].start():]
        self.blocks.append(block)
        choices = CHOICE.findall(block)
        word = choices[0][1].strip()
        typed = word.split(" ", 1)[1] if word.startswith("play ") else word
        self.typed.append(typed)
        self.answered = len(headers)
        self.child.sendline(typed)


@pytest.mark.slow  # a whole game: `make test-slow`
def test_a_whole_game_of_crazy_eights_in_two_terminals(tmp_path) -> None:
    host, host_seen = _spawn(["host", "--protocol-dir", "crazy-eights", "--endpoint",
                              "tcp://127.0.0.1:0", "--control-mode", "human", "--seed", "3",
                              "--state-dir", str(tmp_path / "h")], tmp_path / "home-h")
    try:
        host.expect(r"on (tcp://127\.0\.0\.1:\d+)")
        guest, guest_seen = _spawn(["guest", "--endpoint", host.match.group(1),
                                    "--control-mode", "human", "--seed", "4", "--state-dir",
                                    str(tmp_path / "g")], tmp_path / "home-g")
        try:
            players = [Player(host, host_seen), Player(guest, guest_seen)]
            for _ in range(3000):
                if all(p.done for p in players):
                    break
                for player in players:
                    player.step()
            assert all(p.done for p in players), "the game did not end"
            codes = [host.wait(), guest.wait()]
        finally:
            guest.terminate(force=True)
    finally:
        host.terminate(force=True)
    assert codes == [0, 0], host_seen.getvalue()[-2000:]
    outputs = [p.seen.getvalue() for p in players]
    for player in players:
        assert player.blocks, "nobody was asked"
        for block in player.blocks:
            assert re.search(r"^  top card: [2-9TJQKA][SHDC]\r?$", block, re.M), block
            assert re.search(r"^  hand: ([2-9TJQKA][SHDC] ?)+\r?$", block, re.M), block
            assert "(spades to follow)" in block or "(hearts to follow)" in block or \
                "(diamonds to follow)" in block or "(clubs to follow)" in block
    # the cards typed as they are shown were taken: each play is the typed card
    for folder, player in (("h", players[0]), ("g", players[1])):
        events = [json.loads(line) for line in (tmp_path / folder / "events.jsonl")
                  .read_text().splitlines()]
        made = [e["value"] for e in events if e["event"] == "decision.made"]
        assert len(made) == player.answered
        for value, typed in zip(made, player.typed, strict=True):
            assert typed == " ".join([value.get("card", value["action"])]
                                     + ([value["note"]] if value.get("note") else []))
        assert not [e for e in events if e["event"] == "decision.timeout_fallback"]
    finished = json.loads((tmp_path / "h" / "snapshot.json").read_text())["outcome"]
    winner = finished["summary"]["winner"]
    ends = {"host": "you won", "guest": "you lost"} if winner == "host" else \
        {"host": "you lost", "guest": "you won"} if winner == "guest" else \
        {"host": "a draw", "guest": "a draw"}
    for role, text in zip(("host", "guest"), outputs, strict=True):
        assert f"outcome: {ends[role]}" in text
    names = [m.name for m in load_protocol("crazy-eights").spec.messages.values()]
    for text in outputs:
        for name in names:
            if name != "pass":  # "pass" is also the game's own word ("the peer passes")
                assert not re.search(rf"\b{re.escape(name)}\b", text), name
        assert "{" not in text  # no JSON anywhere
