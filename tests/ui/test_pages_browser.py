"""Every built-in's live page in Chromium: it follows a whole session as it happens, shows
peer text as text, and each kind of decision widget (buttons for string and object values,
a number field for bounds, a text area) answers the session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.drivers.live import LiveSession
from lingxi.session.runner import load_protocol
from lingxi.ui import start_ui

from .test_browser import _chromium

pytestmark = pytest.mark.browser
BUILTINS = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "protocols"
NAMES = sorted(p.name for p in BUILTINS.iterdir() if (p / "ui" / "index.html").is_file())
HANG_GUARD = 30  # seconds; only stops a broken run from hanging the suite
HOSTILE = "hi <b>there</b><img src=x onerror=alert(1)> \u202eevil"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


async def _lines(lines):
    for line in lines:
        yield line


@pytest.fixture
async def browser():
    executable = _chromium()
    from playwright.async_api import async_playwright, expect

    expect.set_options(timeout=HANG_GUARD * 1000)  # a slow machine waits longer, never less
    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        yield chromium
        await chromium.close()


async def _open(browser, url: str):
    page = await browser.new_page()
    page.set_default_timeout(HANG_GUARD * 1000)
    page.errors, page.dialogs, page.accept_dialogs = [], [], False
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), asyncio.ensure_future(
        dialog.accept() if page.accept_dialogs else dialog.dismiss())))
    await page.goto(url)
    return page


def test_every_builtin_has_a_live_page() -> None:
    assert NAMES == ["chat", "crazy-eights", "guess-number", "hero-duel",
                     "rock-paper-scissors", "short-whist", "word-count"]
    for name in NAMES:
        html = (BUILTINS / name / "ui" / "index.html").read_text(encoding="utf-8")
        assert '<script src="/lingxi-ui.js"></script>' in html and "LingxiUI.start(page)" in html
        assert "innerHTML" not in html and "insertAdjacentHTML" not in html


@pytest.mark.parametrize("name", NAMES)
async def test_a_page_follows_a_whole_session_as_the_guest(browser, name) -> None:
    from playwright.async_api import expect

    live = LiveSession()
    server = await start_ui(live, BUILTINS / name / "ui")
    try:
        page = await _open(browser, server.url)
        await expect(page.locator("#lx-status")).to_contain_text("waiting for the session")
        host_kwargs = {"inputs": _lines([HOSTILE, "/quit"])} if name == "chat" else {}
        host, guest = await asyncio.wait_for(memory_session(
            load_protocol(name), seed=3, config=SessionConfig(peer_timeout=HANG_GUARD),
            host_kwargs=host_kwargs, guest_kwargs={"live": live}), HANG_GUARD)
        await expect(page.locator("body")).to_have_attribute("data-finished", "true")
        outcome = page.locator("#lx-outcome")
        await expect(outcome).to_contain_text(f"Session {guest.outcome.status}")
        await expect(page.locator("#lx-status")).to_contain_text("you are the guest")
        log = page.locator("#lx-log li")
        assert await log.count() >= 2
        assert (await log.last.text_content()).startswith("session completed")
        if name == "chat":
            line = page.locator("#lx-log li", has_text="hi <b>there</b>")
            await expect(line).to_have_text(
                "peer #1: hi <b>there</b><img src=x onerror=alert(1)> \\u202eevil")
            assert await page.locator("#lx-log b, #lx-log img").count() == 0
        assert page.errors == [] and page.dialogs == []
        await page.close()
    finally:
        await server.close()
    assert host.outcome.ok and guest.outcome.ok


NEXT_POINT = """last => {
  if (document.body.dataset.finished === "true") return "end";
  const d = document.querySelector("#lx-decision");
  if (d && !d.hidden && d.dataset.point && d.dataset.point !== last
      && !d.querySelector("button:disabled")) return d.dataset.point;
  return false;
}"""


async def _decide_all(page, answer) -> int:
    """Answer every decision the page shows with ``answer(decision locator)``; the count."""
    last, count = "", 0
    while True:
        point = await (await page.wait_for_function(NEXT_POINT, arg=last)).json_value()
        if point == "end":
            return count
        await answer(page.locator(f'#lx-decision[data-point="{point}"]'))
        last, count = point, count + 1


async def _run(name: str, role: str, page_answer, options=None):
    live = LiveSession()
    server = await start_ui(live, BUILTINS / name / "ui")
    kwargs = {"live": live, "decider": lambda request: None}
    session = asyncio.ensure_future(memory_session(
        load_protocol(name), options=options, seed=5,
        config=SessionConfig(peer_timeout=HANG_GUARD),
        **{f"{role}_kwargs": kwargs}))
    return live, server, session


async def test_a_number_field_within_the_bounds_plays_guess_number(browser) -> None:
    from playwright.async_api import expect

    live, server, session = await _run("guess-number", "guest", None)
    try:
        page = await _open(browser, server.url)

        async def bisect(decision):
            field = decision.locator("input#lx-value[type=number]")
            low, high = int(await field.get_attribute("min")), int(await field.get_attribute("max"))
            await field.fill(str((low + high) // 2))
            await decision.get_by_role("button", name="Send").click()

        count = await _decide_all(page, bisect)
        host, guest = await asyncio.wait_for(session, HANG_GUARD)
        await expect(page.locator("#lx-outcome")).to_contain_text("winner: you (guest)")
        assert page.errors == []
    finally:
        await server.close()
    assert guest.outcome.summary["winner"] == "guest"
    assert count == guest.outcome.summary["attempts"]
    guesses = [e["payload"]["number"] for e in live.events
               if e["event"] == "message.sent" and e.get("message") == "guess"]
    assert len(guesses) == count and guesses[0] == 50


async def test_a_text_area_sends_word_count_its_text(browser) -> None:
    from playwright.async_api import expect

    live, server, session = await _run("word-count", "guest", None)
    try:
        page = await _open(browser, server.url)

        async def write(decision):
            await decision.locator("textarea#lx-value").fill("one two\nthree")
            await decision.get_by_role("button", name="Send").click()

        assert await _decide_all(page, write) == 1
        host, guest = await asyncio.wait_for(session, HANG_GUARD)
        await expect(page.locator("#lx-log")).to_contain_text(
            "the peer delivered: 2 lines · 3 words · 13 characters")
        assert page.errors == []
    finally:
        await server.close()
    assert host.outcome.ok and guest.outcome.summary["accepted"] is True


async def test_buttons_for_object_values_play_crazy_eights(browser) -> None:
    from playwright.async_api import expect

    live, server, session = await _run("crazy-eights", "host", None)
    try:
        page = await _open(browser, server.url)
        labels: list[str] = []

        async def first_card(decision):
            button = decision.locator("button.lx-choice").first
            labels.append(await button.text_content())
            await button.click()

        count = await _decide_all(page, first_card)
        host, guest = await asyncio.wait_for(session, HANG_GUARD)
        await expect(page.locator("#lx-outcome")).to_contain_text("Session completed")
        assert page.errors == []
    finally:
        await server.close()
    assert host.outcome.ok and count >= 1
    made = [e["value"] for e in live.events if e["event"] == "decision.made"]
    requested = [e["legal"][0] for e in live.events if e["event"] == "decision.requested"]
    assert made == requested and len(made) == count
    assert all(label.startswith(("play ", "draw", "pass")) for label in labels)


async def test_the_generic_page_turns_into_the_protocols_once_the_offer_names_it(browser) -> None:
    """A guest starts its UI before it knows the protocol; the caller names the UI folder
    when the session starts, and the open generic page reloads into that page."""
    from playwright.async_api import expect

    live = LiveSession()
    server = await start_ui(live, None)
    live.listen(lambda record: record["event"] == "session.started" and server.use_ui_dir(
        BUILTINS / "rock-paper-scissors" / "ui"))
    try:
        page = await _open(browser, server.url)
        await expect(page).to_have_title("Lingxi session")
        await expect(page.locator("#lx-status")).to_contain_text("waiting for the session")
        session = asyncio.ensure_future(memory_session(
            load_protocol("rock-paper-scissors"), seed=3,
            config=SessionConfig(peer_timeout=HANG_GUARD),
            guest_kwargs={"live": live, "decider": lambda request: None}))
        await expect(page).to_have_title("Rock-Paper-Scissors (Lingxi)")
        await page.locator('#lx-decision[data-point="d1"]').get_by_role(
            "button", name="✋ paper").click()
        await expect(page.locator("#lx-log li.lx-round").first).to_contain_text(
            "round 1: you ✋ paper vs peer")
        page.accept_dialogs = True  # the person leaves through the page's button
        await page.get_by_role("button", name="Leave the session").click()
        host, guest = await asyncio.wait_for(session, HANG_GUARD)
        await expect(page.locator("#lx-outcome")).to_contain_text(
            "Session aborted (session.aborted_locally) — the person left (browser)")
        await expect(page.get_by_role("button", name="Leave the session")).to_be_hidden()
        assert page.errors == [] and len(page.dialogs) == 1
        assert guest.outcome.code == "session.aborted_locally" and host.outcome.by == "peer"
    finally:
        await server.close()


@pytest.mark.parametrize("name", NAMES)
async def test_a_page_opened_from_disk_replays_an_events_file(browser, name, tmp_path) -> None:
    from playwright.async_api import expect

    host_kwargs = {"inputs": _lines([HOSTILE, "/quit"])} if name == "chat" else {}
    await asyncio.wait_for(memory_session(
        load_protocol(name), seed=3, state_dir=tmp_path, host_kwargs=host_kwargs,
        config=SessionConfig(peer_timeout=HANG_GUARD)), HANG_GUARD)
    page = await _open(browser, (BUILTINS / name / "ui" / "index.html").as_uri())
    await page.locator("#lx-file").set_input_files(str(tmp_path / "guest" / "events.jsonl"))
    log = page.locator("#lx-log li")
    await expect(log.last).to_have_text("session completed")
    assert await log.count() >= 2
    if name == "chat":
        await expect(page.locator("#lx-log")).to_contain_text(
            "peer #1: hi <b>there</b><img src=x onerror=alert(1)> \\u202eevil")
        assert await page.locator("#lx-log b, #lx-log img").count() == 0
    # the shared script is not there (file://): the page's own fallback ran, without errors
    assert await page.evaluate("typeof window.LingxiUI") == "undefined"
    assert page.errors == [] and page.dialogs == []


async def test_a_person_chats_from_the_page(browser) -> None:
    from playwright.async_api import expect

    live = LiveSession()
    server = await start_ui(live, BUILTINS / "chat" / "ui")

    async def guest_lines():  # answers once the host's first line went out
        while not any(e["event"] == "message.sent" and e.get("text") for e in live.events):
            await asyncio.sleep(0.05)
        yield "hello, page"
        while not live.finished:
            await asyncio.sleep(0.05)

    try:
        page = await _open(browser, server.url)
        session = asyncio.ensure_future(memory_session(
            load_protocol("chat"), config=SessionConfig(peer_timeout=HANG_GUARD),
            host_kwargs={"live": live}, guest_kwargs={"inputs": guest_lines()}))
        box = page.locator("#lx-input input[name=line]")
        await expect(box).to_be_visible()
        await expect(page.locator("#lx-status")).to_contain_text("you are the host")
        await box.fill("hi from the browser")
        await box.press("Enter")
        await expect(page.locator("#lx-log li", has_text="peer #1: hello, page")).to_have_count(1)
        await expect(page.locator("#lx-log li", has_text="you #1: hi from the browser")
                     ).to_have_count(1)
        await box.fill("/quit")
        await box.press("Enter")
        host, guest = await asyncio.wait_for(session, HANG_GUARD)
        await expect(page.locator("body")).to_have_attribute("data-finished", "true")
        assert page.errors == []
    finally:
        await server.close()
    assert host.outcome.ok and guest.outcome.ok


@pytest.mark.parametrize("name", ["crazy-eights", "short-whist"])
async def test_a_card_played_leaves_the_hand_and_the_peer_passes_in_plain_words(
        browser, name) -> None:
    from playwright.async_api import expect

    live, server, session = await _run(name, "host", None)
    suit = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}

    def face(card: str) -> str:
        return card[0].replace("T", "10") + suit[card[1]]

    try:
        page = await _open(browser, server.url)
        hand = page.locator("#hand .lx-cards").nth(1).locator(".lx-card")
        played = 0

        async def play_first_card(decision):
            nonlocal played
            button = decision.locator("button.lx-choice").first
            value = json.loads(await button.get_attribute("data-value"))
            before = await hand.all_text_contents()
            await button.click()
            if value.get("action") == "play":
                played += 1
                gone = [c for c in before if c != face(value["card"])]
                await expect(hand).to_have_text(gone)  # at once, not at the next decision

        await _decide_all(page, play_first_card)
        await asyncio.wait_for(session, HANG_GUARD)
        log = await page.locator("#lx-log").text_content()
        assert page.errors == []
    finally:
        await server.close()
    assert played >= 1
    assert "passs" not in log
    passes = sum(1 for e in live.events if e["event"] == "mp.move" and e["by"] == "guest"
                 and e["action"] == "pass")
    assert log.count("the peer passes") == passes
