"""The browser UI's API against a real session over the in-memory wire: the token, the
Host and content-type guards, the event stream, and deciding through POST /api/decide."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from lingxi.errors import InputError
from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.drivers.live import LiveSession
from lingxi.session.runner import load_protocol
from lingxi.ui import start_ui

HANG_GUARD = 30  # seconds; only stops a broken run from hanging the suite
RPS = {"best_of": 3, "termination": "fixed_rounds"}
BUILTINS = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "protocols"


class Stream:
    """An SSE reader: (event name, data, id) triples from GET /api/events."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.aiter_lines()

    async def next(self) -> tuple[str, Any, str | None]:
        name, data, ident = "message", [], None
        async for line in self.lines:
            if line == "":
                if data:
                    return name, json.loads("\n".join(data)), ident
                name, ident = "message", None
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
            elif field == "id":
                ident = value
        raise AssertionError("the event stream ended without `event: end`")


@pytest.fixture
async def ui():
    live = LiveSession()
    server = await start_ui(live, BUILTINS / "rock-paper-scissors" / "ui")
    yield live, server
    await server.close()


def _client(server) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.base_url, timeout=HANG_GUARD)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::", ""])
async def test_a_non_loopback_host_is_refused(host) -> None:
    with pytest.raises(InputError) as refused:
        await start_ui(LiveSession(), None, host=host)
    assert refused.value.code == "ui.not_loopback"


async def test_a_busy_port_is_a_typed_error(ui) -> None:
    _, server = ui
    with pytest.raises(InputError) as busy:
        await start_ui(LiveSession(), None, port=server.port)
    assert busy.value.code == "ui.port_unavailable"


async def test_the_url_carries_a_random_token_and_every_api_call_needs_it(ui) -> None:
    live, server = ui
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
    assert len(server.token) >= 24
    async with _client(server) as client:
        for headers, params in (({}, {}), ({"X-Lingxi-Token": "nope"}, {}),
                                ({}, {"token": server.token[:-1]})):
            refused = await client.get("/api/state", headers=headers, params=params)
            assert refused.status_code == 403 and refused.json()["code"] == "ui.bad_token"
        for path in ("/api/events", "/api/decide", "/api/abort"):
            method = client.get if path == "/api/events" else client.post
            assert (await method(path)).status_code == 403
        by_header = await client.get("/api/state", headers={"X-Lingxi-Token": server.token})
        by_query = await client.get("/api/state", params={"token": server.token})
    assert by_header.status_code == by_query.status_code == 200
    assert by_header.json() == live.state()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io",
                                  "localhost:1", "10.0.0.1:{port}"])
async def test_a_foreign_host_header_is_refused_even_with_the_token(ui, host) -> None:
    _, server = ui
    async with _client(server) as client:
        for path in ("/api/state", "/", "/lingxi-ui.js"):
            refused = await client.get(path, params={"token": server.token},
                                       headers={"Host": host.format(port=server.port)})
            assert refused.status_code == 403 and refused.json()["code"] == "ui.bad_host"
        fine = await client.get("/api/state", params={"token": server.token},
                                headers={"Host": f"localhost:{server.port}"})
    assert fine.status_code == 200


async def test_posts_must_be_json_from_this_origin(ui) -> None:
    _, server = ui
    token = {"X-Lingxi-Token": server.token}
    async with _client(server) as client:
        form = await client.post("/api/decide", headers=token, data={"value": "rock"})
        plain = await client.post("/api/decide", content=b'{"value": "rock"}',
                                  headers={**token, "Content-Type": "text/plain"})
        foreign = await client.post("/api/decide", json={"value": "rock"},
                                    headers={**token, "Origin": "http://evil.example"})
        broken = await client.post("/api/decide", content=b"{nope",
                                   headers={**token, "Content-Type": "application/json"})
        listed = await client.post("/api/decide", json=["rock"], headers=token)
        valueless = await client.post("/api/decide", json={"point_id": "d1"}, headers=token)
        huge = await client.post("/api/decide", json={"value": "x" * 70_000}, headers=token)
        idle = await client.post("/api/decide", json={"value": "rock"}, headers={
            **token, "Origin": server.base_url})
    assert form.status_code == plain.status_code == 415
    assert form.json()["code"] == "ui.content_type"
    assert foreign.status_code == 403 and foreign.json()["code"] == "ui.bad_origin"
    assert broken.status_code == listed.status_code == 400
    assert broken.json()["code"] == "ui.bad_json"
    assert valueless.status_code == 422 and valueless.json()["code"] == "ui.missing_value"
    assert huge.status_code == 413 and huge.json()["code"] == "ui.too_large"
    # from the page's own origin the request reaches the session (nothing to decide yet)
    assert idle.status_code == 409 and idle.json()["code"] == "session.no_pending_decision"


async def test_the_page_the_shared_script_and_bundle_files_only(ui) -> None:
    _, server = ui
    async with _client(server) as client:
        page = await client.get("/")
        script = await client.get("/lingxi-ui.js")
        style = await client.get("/lingxi-ui.css")
        outside = [await client.get(path) for path in (
            "/../spec.json", "/%2e%2e/spec.json", "/..%2fspec.json", "/.hidden", "/nope.html")]
    assert page.status_code == 200 and "/lingxi-ui.js" in page.text
    assert "Rock-Paper-Scissors" in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert "innerHTML" not in script.text and "LingxiUI" in script.text
    assert style.status_code == 200 and "css" in style.headers["content-type"]
    assert [r.status_code for r in outside] == [404] * 5


async def test_without_a_bundle_the_generic_page_is_served(tmp_path) -> None:
    server = await start_ui(LiveSession(), tmp_path)  # a folder without index.html
    try:
        async with _client(server) as client:
            page = await client.get("/")
    finally:
        await server.close()
    assert page.status_code == 200 and "LingxiUI.start(" in page.text
    assert page.headers["x-lingxi-page"] == "generic"


async def _play(server, live: LiveSession, choices: list[str]) -> dict[str, Any]:
    """Answer every decision through the API while reading the event stream to its end."""
    seen: dict[str, Any] = {"events": [], "states": [], "refusals": [], "ids": []}
    token = {"X-Lingxi-Token": server.token}
    async with _client(server) as client, client.stream(
            "GET", "/api/events", params={"token": server.token}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = Stream(response)
        answered: set[str] = set()
        while True:
            name, data, ident = await stream.next()
            if name == "end":
                return seen
            if name == "message":
                seen["events"].append(data)
                seen["ids"].append(int(ident))
                continue
            seen["states"].append(data)
            pending = data["pending_decision"]
            if pending is None or pending["point_id"] in answered:
                continue
            assert pending["legal"] == ["rock", "paper", "scissors"]
            assert pending["seconds_left"] is not None and pending["seconds_left"] > 0
            illegal = await client.post("/api/decide", json={"value": "lizard"}, headers=token)
            stale = await client.post("/api/decide", json={"value": "rock", "point_id": "d99"},
                                      headers=token)
            seen["refusals"].append((illegal.status_code, illegal.json()["code"],
                                     stale.status_code, stale.json()["code"]))
            choice = choices[len(answered)]
            made = await client.post("/api/decide", headers=token, json={
                "value": choice, "point_id": pending["point_id"]})
            assert made.json() == {"ok": True, "point_id": pending["point_id"]}, made.text
            answered.add(pending["point_id"])


async def test_a_person_plays_rock_paper_scissors_through_the_api(ui, tmp_path) -> None:
    live, server = ui
    player = asyncio.ensure_future(_play(server, live, ["paper", "rock", "scissors"]))
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol("rock-paper-scissors"), options=RPS, seed=7, state_dir=tmp_path,
        config=SessionConfig(peer_timeout=10.0),
        host_kwargs={"live": live, "decider": lambda request: None}), HANG_GUARD)
    seen = await asyncio.wait_for(player, HANG_GUARD)
    assert host.outcome.ok and guest.outcome.ok
    rounds = [e for e in seen["events"] if e["event"] == "round"]
    assert [r["host"] for r in rounds] == ["paper", "rock", "scissors"]
    assert seen["refusals"] == [(422, "decision.illegal", 409, "decision.stale")] * 3
    assert seen["events"][-1]["event"] in ("session.finished", "receipts.exchanged")
    assert seen["ids"] == sorted(set(seen["ids"]))  # each event once, in order
    assert seen["states"][-1]["finished"] and seen["states"][-1]["outcome"]["status"] \
        == "completed"
    assert [e["event"] for e in seen["events"]] == [e["event"] for e in live.events]

    async with _client(server) as client:
        late = await client.post("/api/decide", json={"value": "rock"},
                                 headers={"X-Lingxi-Token": server.token})
        aborted = await client.post("/api/abort", json={},
                                    headers={"X-Lingxi-Token": server.token})
        # a page that reconnects gets only what it missed, then the end
        async with client.stream("GET", "/api/events", params={"token": server.token},
                                 headers={"Last-Event-ID": str(seen["ids"][-3])}) as again:
            stream, names = Stream(again), []
            while (item := await stream.next())[0] != "end":
                names.append(item[0] if item[0] != "message" else item[1]["event"])
    assert late.status_code == 409 and late.json()["code"] == "session.finished"
    assert aborted.status_code == 409 and aborted.json()["code"] == "session.finished"
    assert names == ["state"] + [e["event"] for e in seen["events"][-2:]]


async def test_abort_through_the_api_ends_the_session_and_tells_the_peer(ui) -> None:
    live, server = ui

    async def leave_at_the_first_decision():
        async with _client(server) as client:
            while live.pending is None:
                await live.wait_changed(1.0)
            bad = await client.post("/api/abort", json={"reason": 5},
                                    headers={"X-Lingxi-Token": server.token})
            assert bad.status_code == 422 and bad.json()["code"] == "ui.bad_reason"
            done = await client.post("/api/abort", json={"reason": "gone for lunch"},
                                     headers={"X-Lingxi-Token": server.token})
            assert done.json() == {"ok": True}

    leaver = asyncio.ensure_future(leave_at_the_first_decision())
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol("rock-paper-scissors"), options=RPS, seed=7,
        config=SessionConfig(peer_timeout=10.0),
        host_kwargs={"live": live, "decider": lambda request: None}), HANG_GUARD)
    await asyncio.wait_for(leaver, HANG_GUARD)
    assert host.outcome.code == "session.aborted_locally" and host.outcome.by == "local"
    assert guest.outcome.by == "peer"
    assert host.outcome.reason == "gone for lunch"


async def test_close_ends_open_event_streams(ui) -> None:
    live, server = ui
    async with _client(server) as client, client.stream(
            "GET", "/api/events", params={"token": server.token}) as response:
        stream = Stream(response)
        first = await stream.next()
        assert first[0] == "state" and first[1]["finished"] is False
        await asyncio.wait_for(server.close(), HANG_GUARD)
        with pytest.raises((AssertionError, httpx.HTTPError)):
            await stream.next()


async def test_ctrl_c_stays_the_sessions_while_the_ui_runs() -> None:
    """uvicorn's own SIGINT/SIGTERM handlers would swallow Ctrl-C until the UI stops."""
    import signal

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = await start_ui(LiveSession(), None)
    try:
        during = {sig: signal.getsignal(sig) for sig in before}
    finally:
        await server.close()
    assert during == before


async def test_chat_lines_typed_in_the_browser_reach_the_peer() -> None:
    live = LiveSession()
    server = await start_ui(live, BUILTINS / "chat" / "ui")

    async def guest_lines():
        await asyncio.sleep(0.2)
        yield "hi from the terminal"
        while not any(e.get("text") == "#2: /quit" or e["event"] == "session.finished"
                      for e in live.events):
            await asyncio.sleep(0.05)
        yield None

    async def type_lines():
        async with _client(server) as client:
            while "mode" not in live.info:
                await asyncio.sleep(0.01)
            headers = {"X-Lingxi-Token": server.token}
            bad = await client.post("/api/input", json={"line": "two\nlines"}, headers=headers)
            assert bad.status_code == 422 and bad.json()["code"] == "ui.bad_line"
            ok = await client.post("/api/input", json={"line": "hello from the page"},
                                   headers=headers)
            assert ok.json() == {"ok": True}
            while not any(e["event"] == "message.received" and e.get("message") == "chat"
                          for e in live.events):
                await asyncio.sleep(0.05)
            await client.post("/api/input", json={"line": "/quit"}, headers=headers)

    try:
        typist = asyncio.ensure_future(type_lines())
        host, guest = await asyncio.wait_for(memory_session(
            load_protocol("chat"), config=SessionConfig(peer_timeout=10.0),
            host_kwargs={"live": live}, guest_kwargs={"inputs": guest_lines()}), HANG_GUARD)
        await asyncio.wait_for(typist, HANG_GUARD)
    finally:
        await server.close()
    assert host.outcome.ok and guest.outcome.ok
    sent = [e.get("text") for e in live.events if e["event"] == "message.sent"]
    assert "#1: hello from the page" in sent
    assert ("message.received", "#1: hi from the terminal") in [
        (e["event"], e.get("text")) for e in live.events]


async def test_input_into_a_game_is_refused(ui) -> None:
    live, server = ui

    async def try_typing():
        async with _client(server) as client:
            while live.pending is None:
                await live.wait_changed(1.0)
            refused = await client.post("/api/input", json={"line": "rock"},
                                        headers={"X-Lingxi-Token": server.token})
            assert refused.status_code == 422 and refused.json()["code"] == "session.no_input"
            live.abort("done")

    typist = asyncio.ensure_future(try_typing())
    await asyncio.wait_for(memory_session(
        load_protocol("rock-paper-scissors"), options=RPS, config=SessionConfig(peer_timeout=10.0),
        host_kwargs={"live": live, "decider": lambda request: None}), HANG_GUARD)
    await asyncio.wait_for(typist, HANG_GUARD)


async def test_a_page_gets_the_whole_end_before_the_server_goes(ui, tmp_path) -> None:
    """The CLI closes the UI as soon as the session returns: a page that is behind still
    receives every event (the last round, the receipts with the transcript head), then the
    final state with the outcome, then `end` — in that order — before the server stops."""
    live, server = ui
    async with _client(server) as client, client.stream(
            "GET", "/api/events", params={"token": server.token}) as response:
        stream = Stream(response)
        assert (await stream.next())[0] == "state"
        host, _ = await asyncio.wait_for(memory_session(
            load_protocol("rock-paper-scissors"), options=RPS, seed=7, state_dir=tmp_path,
            config=SessionConfig(peer_timeout=10.0), host_kwargs={"live": live}), HANG_GUARD)
        closing = asyncio.ensure_future(server.close())  # the page has read nothing yet
        seen = []
        while (item := await stream.next())[0] != "end":
            seen.append(item)
        await asyncio.wait_for(closing, HANG_GUARD)
    names = [data["event"] if name == "message" else name for name, data, _ in seen]
    assert names.count("round") == 3
    assert names[-3:] == ["session.finished", "receipts.exchanged", "state"]
    first_outcome = next(i for i, (name, data, _) in enumerate(seen)
                         if name == "state" and data["outcome"])
    assert first_outcome == len(seen) - 1  # never an outcome before the rounds behind it
    assert seen[-1][1]["outcome"]["summary"] == host.outcome.summary
    receipts = seen[-2][1]
    assert receipts["verified"] is True
    assert receipts["transcript_head"] == json.loads(
        (tmp_path / "host" / "receipts.json").read_text())["local"]["head"]
