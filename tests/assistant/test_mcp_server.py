"""`lingxi mcp` through the official MCP SDK's own client (stdio): the tools an assistant
sees, a scripted model that plays rock-paper-scissors to the end against a Lingxi agent,
inputs refused by schema and by the command line, the peer's words marked as data."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

HANG_GUARD = 60  # seconds; only stops a broken run from hanging the suite
TOOLS = {"list_protocols", "read_protocol", "browse", "host", "join", "guest",
         "list_sessions", "session_state", "decide", "abort", "verify"}
THROWS = ["rock", "paper", "scissors"]


def _env(home: Path) -> dict[str, str]:
    return {"LINGXI_HOME": str(home), "PYTHONUNBUFFERED": "1",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


class Assistant:
    """An MCP client session on `lingxi mcp`; calls return (ok, data or error text)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, tool: str, **arguments: Any) -> tuple[bool, Any]:
        result = await asyncio.wait_for(self.session.call_tool(tool, arguments), HANG_GUARD)
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            return False, text
        return True, result.structured_content if result.structured_content is not None \
            else json.loads(text)


async def _assistant(home: Path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "lingxi", "mcp"],
                                   env=_env(home))
    return stdio_client(params)


async def _lingxi_host(home: Path, *args: str) -> tuple[asyncio.subprocess.Process, str]:
    """A Lingxi agent of its own: `lingxi host`, autonomous, on a free port."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lingxi", "host", *args, "--endpoint", "tcp://127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **_env(home)})
    assert process.stderr is not None
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), HANG_GUARD)).decode()
        assert line, "the host ended before listening"
        found = re.search(r" on (tcp://127\.0\.0\.1:\d+)$", line.strip())
        if found:
            return process, found.group(1)


async def test_the_tools_an_assistant_sees(tmp_path) -> None:
    async with await _assistant(tmp_path) as (read, write), ClientSession(read, write) as s:
        info = await s.initialize()
        assert "peer_text" in (info.instructions or "")
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS
        host = tools["host"].input_schema["properties"]
        assert host["protocol"]["pattern"] and host["endpoint"]["pattern"].startswith("^tcp://")
        assert set(host["control_mode"]["enum"]) == {"human", "hybrid", "autonomous"}
        assert tools["decide"].input_schema["required"] == ["session", "value"]
        protocols = await Assistant(s).call("list_protocols")
        assert protocols[0] and "rock-paper-scissors" in [
            p["name"] for p in protocols[1]["protocols"]]
        ok, rules = await Assistant(s).call("read_protocol", protocol="rock-paper-scissors")
        assert ok and rules["parameters"]["best_of"]["default"] == 3 and "rules" in rules


@pytest.mark.slow  # a whole game: `make test-slow`
async def test_a_scripted_model_plays_rock_paper_scissors_to_the_end(tmp_path) -> None:
    agent, endpoint = await _lingxi_host(
        tmp_path / "agent", "--protocol-dir", "rock-paper-scissors", "--options",
        '{"best_of": 3, "termination": "fixed_rounds"}', "--state-dir",
        str(tmp_path / "agent-state"), "--seed", "2")
    try:
        async with await _assistant(tmp_path / "me") as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            me = Assistant(s)
            ok, started = await me.call("guest", endpoint=endpoint)
            assert ok, started
            handle = started["session"]
            played: list[str] = []
            while True:  # the model: read the state, answer each open decision
                ok, state = await me.call("session_state", session=handle, events=50)
                assert ok, state
                if state["state"] in ("finished", "gone: process ended"):
                    break
                pending = state["pending_decision"]
                if pending and pending["point_id"] not in [p for p, _ in played]:
                    assert pending["legal"] == THROWS and pending["message"]
                    throw = THROWS[len(played) % 3]
                    ok, answer = await me.call("decide", session=handle, value=throw,
                                               point_id=pending["point_id"])
                    assert ok, answer
                    played.append((pending["point_id"], throw))
                await asyncio.sleep(0.2)
            ok, verdict = await me.call("verify", session=handle)
            assert ok and verdict["ok"] is True, verdict
        code = await asyncio.wait_for(agent.wait(), HANG_GUARD)
    finally:
        if agent.returncode is None:
            agent.kill()
    assert code == 0
    assert state["state"] == "finished" and state["outcome"]["status"] == "completed"
    rounds = [e for e in state["recent_events"] if e["event"] == "round"]
    assert [r["guest"] for r in rounds] == [t for _, t in played] == THROWS
    mine = json.loads((tmp_path / "agent-state" / "snapshot.json").read_text())["outcome"]
    assert state["outcome"]["summary"]["winner"] == mine["summary"]["winner"]
    # the host's own words (its "ready" line) come back marked, never as plain text
    received = [e for e in state["recent_events"] if e["event"] == "message.received"]
    assert received and all("text" not in e for e in received)
    assert any("3 rounds" in str(e.get("peer_text")) for e in received)
    assert "peer_text" in state["untrusted"]


@pytest.mark.parametrize("tool, arguments, refusal", [
    ("host", {"protocol": "../../etc/passwd"}, "pattern"),
    ("host", {"protocol": "rock-paper-scissors", "endpoint": "http://x:1"}, "pattern"),
    ("host", {"protocol": "rock-paper-scissors", "options": {"bestof": 5}},
     "options.undeclared: "),
    ("host", {"protocol": "no-such-game"}, "protocol.not_found: "),
    ("host", {"protocol": "rock-paper-scissors", "control_mode": "sudo"}, "control_mode"),
    ("session_state", {"session": "../../x"}, "pattern"),
    ("session_state", {"session": "mcp-000000000000"}, "session.not_found: "),
    ("decide", {"session": "mcp-000000000000", "value": "x" * 70000}, "mcp.too_large: "),
    ("join", {"invitation_id": "inv-1; rm -rf /"}, "pattern"),
    ("abort", {"session": "mcp-1", "reason": "x" * 501}, "reason"),
])
async def test_inputs_are_refused_with_a_reason(tmp_path, tool, arguments, refusal) -> None:
    async with await _assistant(tmp_path) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        ok, text = await Assistant(s).call(tool, **arguments)
    assert not ok and refusal in text, text


async def test_an_illegal_decision_is_refused_and_the_point_stays_open(tmp_path) -> None:
    agent, endpoint = await _lingxi_host(
        tmp_path / "agent", "--protocol-dir", "rock-paper-scissors", "--options",
        '{"best_of": 1}')
    try:
        async with await _assistant(tmp_path / "me") as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            me = Assistant(s)
            handle = (await me.call("guest", endpoint=endpoint))[1]["session"]
            while True:
                state = (await me.call("session_state", session=handle))[1]
                if state["pending_decision"]:
                    break
                await asyncio.sleep(0.1)
            ok, text = await me.call("decide", session=handle, value="lizard")
            assert not ok and "decide: decision.illegal: 'lizard' is not allowed" in text
            ok, text = await me.call("decide", session=handle, value="rock", point_id="d9")
            assert not ok and "decide: decision.stale: " in text
            ok, _ = await me.call("abort", session=handle, reason="enough")
            assert ok
            state = (await me.call("session_state", session=handle))[1]
            assert state["state"] == "finished"
            assert state["outcome"]["code"] == "session.aborted_locally"
        await asyncio.wait_for(agent.wait(), HANG_GUARD)
    finally:
        if agent.returncode is None:
            agent.kill()
