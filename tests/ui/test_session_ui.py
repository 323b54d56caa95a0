"""`lingxi session ui SESSION` attaches the browser page to a session that is already
running in another process: the page's API shows it, an answer given there plays, and the
page server stops once the session is over and its end was delivered."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx

from .cli_runs import HANG_GUARD, Run, env_for
from .test_api import Stream


async def test_a_running_session_gets_its_page_afterwards(tmp_path) -> None:
    host = await Run.start(["host", "--protocol-dir", "rock-paper-scissors", "--endpoint",
                            "tcp://127.0.0.1:0", "--control-mode", "human", "--options",
                            '{"best_of": 1}', "--state-dir", str(tmp_path / "h")],
                           tmp_path / "home-h")
    guest = page = None
    try:
        endpoint = (await host.wait_for(r" on (tcp://127\.0\.0\.1:\d+)$")).group(1)
        guest = await Run.start(["guest", "--endpoint", endpoint], tmp_path / "home-g")
        await host.wait_for(r"your move|rock, paper or scissors")
        page = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "lingxi", "session", "ui", str(tmp_path / "h"), "--json",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=env_for(tmp_path / "home-h"))
        assert page.stdout is not None
        line = await asyncio.wait_for(page.stdout.readline(), HANG_GUARD)
        url = json.loads(line)["url"]
        base, token = url.split("/?token=")
        async with httpx.AsyncClient(base_url=base, timeout=HANG_GUARD) as client:
            state = (await client.get("/api/state", params={"token": token})).json()
            assert state["role"] == "host" and state["protocol"].startswith("Rock-Paper")
            point = state["pending_decision"]["point_id"]
            assert state["pending_decision"]["legal"] == ["rock", "paper", "scissors"]
            headers = {"X-Lingxi-Token": token}
            bad = await client.post("/api/decide", json={"value": "lizard"}, headers=headers)
            assert bad.status_code == 422 and bad.json()["code"] == "decision.illegal"
            typed = await client.post("/api/input", json={"line": "hi"}, headers=headers)
            assert typed.status_code == 422 and typed.json()["code"] == "session.no_input"
            async with client.stream("GET", "/api/events", params={"token": token}) as events:
                played = await client.post("/api/decide", headers=headers,
                                           json={"value": "paper", "point_id": point})
                assert played.json() == {"ok": True, "point_id": point}
                stream, seen = Stream(events), []
                while (item := await stream.next())[0] != "end":
                    seen.append(item)
        assert await asyncio.wait_for(page.wait(), HANG_GUARD) == 0
        assert (await host.finish())[0] == 0 and (await guest.finish())[0] == 0
    finally:
        for run in (host, guest):
            if run is not None:
                run.kill()
        if page is not None and page.returncode is None:
            page.kill()
    rounds = [data for name, data, _ in seen if name == "message" and data["event"] == "round"]
    assert [r["host"] for r in rounds] == ["paper"]
    final = [data for name, data, _ in seen if name == "state"][-1]
    assert final["finished"] and final["outcome"]["status"] == "completed"
