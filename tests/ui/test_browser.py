"""A person plays rock-paper-scissors best of 3 in Chromium, through the protocol's live
page, against an autonomous guest over the in-memory wire."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from lingxi.session.core.machine import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.drivers.live import LiveSession
from lingxi.session.runner import load_protocol
from lingxi.ui import start_ui

pytestmark = pytest.mark.browser
CHROMIUM = os.environ.get("LINGXI_CHROMIUM", "/usr/bin/chromium")
BUILTINS = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "protocols"
HANG_GUARD = 30  # seconds; only stops a broken run from hanging the suite
ICON = {"rock": "✊ rock", "paper": "✋ paper", "scissors": "✌️ scissors"}


def _chromium() -> str:
    if not Path(CHROMIUM).exists():
        message = f"Chromium not found at {CHROMIUM} (make browser installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


async def test_a_person_plays_best_of_3_to_the_end_in_the_page(tmp_path) -> None:
    executable = _chromium()
    from playwright.async_api import async_playwright, expect

    expect.set_options(timeout=HANG_GUARD * 1000)  # a slow machine waits longer, never less
    live = LiveSession()
    server = await start_ui(live, BUILTINS / "rock-paper-scissors" / "ui")
    session = asyncio.ensure_future(memory_session(
        load_protocol("rock-paper-scissors"), options={"best_of": 3,
                                                       "termination": "fixed_rounds"},
        seed=11, state_dir=tmp_path, config=SessionConfig(peer_timeout=HANG_GUARD),
        host_kwargs={"live": live, "decider": lambda request: None}))
    choices = ["rock", "paper", "scissors"]
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path=executable, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = await browser.new_page()
            page.set_default_timeout(HANG_GUARD * 1000)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(server.url)
            rounds = page.locator("#lx-log li.lx-round")
            for number, choice in enumerate(choices, start=1):
                decision = page.locator(f'#lx-decision[data-point="d{number}"]')
                await expect(decision.locator("#lx-countdown")).to_contain_text("s left")
                await expect(decision.locator("button.lx-choice")).to_have_count(3)
                await decision.get_by_role("button", name=ICON[choice]).click()
                # the round's result is on the page as it happens: before the next
                # decision is answered (the session is still waiting for this person)
                await expect(rounds).to_have_count(number)
                await expect(rounds.nth(number - 1)).to_contain_text(
                    f"round {number}: you {ICON[choice]} vs peer")
                if number < len(choices):
                    assert not live.finished
            outcome = page.locator("#lx-outcome")
            await expect(outcome).to_be_visible()
            await expect(outcome).to_contain_text("Session completed")
            host, guest = await asyncio.wait_for(session, HANG_GUARD)
            winner = host.outcome.summary["winner"]
            expected = {"host": "you (host)", "guest": "the peer (guest)"}.get(winner, winner)
            await expect(outcome).to_contain_text(f"winner: {expected}")
            await expect(page.locator("#lx-decision")).to_be_hidden()
            await expect(page.locator("body")).to_have_attribute("data-finished", "true")
            shown = await rounds.all_text_contents()
            await browser.close()
    finally:
        if not session.done():
            session.cancel()
        await server.close()
    assert host.outcome.ok and guest.outcome.ok
    played = [e for e in live.events if e["event"] == "round"]
    assert [e["host"] for e in played] == choices
    for line, event in zip(shown, played, strict=True):
        result = event["result"]
        won = {"host": "you win", "guest": "peer wins"}.get(result["round_winner"], "draw")
        assert line == (f"round {event['round']}: you {ICON[event['host']]} vs peer "
                        f"{ICON[event['guest']]} → {won} (you {result['host_wins']} – "
                        f"{result['guest_wins']} peer)")
    assert errors == []
