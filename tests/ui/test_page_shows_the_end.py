"""A person plays through the page that `lingxi host --ui` prints, against a `lingxi guest`
in another process, to the end: the page shows how the game ended, the same as the state
folder's record (the rounds, the outcome, the transcript head), and keeps showing it once
the host's process — and with it the page's server — is gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_runs import HANG_GUARD, Run, events_of
from .test_browser import ICON
from .test_pages_browser import _open, browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # whole games: `make test-slow`

RPS_OPTIONS = json.dumps({"best_of": 3, "termination": "fixed_rounds"})


async def _host_and_guest(tmp_path: Path, protocol: str, options: str | None):
    args = ["host", "--protocol-dir", protocol, "--endpoint", "tcp://127.0.0.1:0",
            "--control-mode", "human", "--ui", "--state-dir", str(tmp_path / "host"),
            "--seed", "5"]
    host = await Run.start(args + (["--options", options] if options else []),
                           tmp_path / "home-host")
    url = (await host.wait_for(r"^ui: (http://\S+)$")).group(1)
    endpoint = (await host.wait_for(r" on (tcp://127\.0\.0\.1:\d+)$")).group(1)
    guest = await Run.start(["guest", "--endpoint", endpoint, "--seed", "9", "--state-dir",
                             str(tmp_path / "guest")], tmp_path / "home-guest")
    return host, guest, url


def _headline(summary: dict, role: str) -> str:
    peer = "guest" if role == "host" else "host"
    winner = summary.get("winner")
    score = summary.get("score") or {}
    tally = f" {score[role]}–{score[peer]}" if score else ""
    return {role: "You won", peer: "You lost", "draw": "A draw"}[winner] + tally


async def _finish(page, host: Run, guest: Run, tmp_path: Path):
    """Both processes exit; then the page still holds the whole record."""
    from playwright.async_api import expect

    host_code, _ = await host.finish()
    guest_code, _ = await guest.finish()
    assert (host_code, guest_code) == (0, 0), host.lines + guest.lines
    events = events_of(tmp_path / "host")
    finished = next(e for e in events if e["event"] == "session.finished")
    receipts = next(e for e in events if e["event"] == "receipts.exchanged")
    # the server is gone now (the process exited): what the page shows stays
    await expect(page.locator("body")).to_have_attribute("data-finished", "true")
    outcome = page.locator("#lx-outcome")
    await expect(outcome).to_be_visible()
    await expect(outcome.locator(".lx-headline")).to_have_text(
        _headline(finished["summary"], "host"))
    proof = page.locator("#lx-proof")
    await expect(proof).to_have_attribute("data-verified", "true")
    await expect(proof).to_contain_text(receipts["transcript_head"])
    await expect(page.locator("#lx-status")).to_contain_text("this page keeps its record")
    return events, finished


async def test_rock_paper_scissors_best_of_3_through_the_page_shows_the_end(
        browser, tmp_path) -> None:  # noqa: F811
    from playwright.async_api import expect

    host, guest, url = await _host_and_guest(tmp_path, "rock-paper-scissors", RPS_OPTIONS)
    try:
        page = await _open(browser, url)
        rounds = page.locator("#lx-log li.lx-round")
        for number, choice in enumerate(["rock", "paper", "scissors"], start=1):
            decision = page.locator(f'#lx-decision[data-point="d{number}"]')
            await decision.get_by_role("button", name=ICON[choice]).click()
            await expect(rounds).to_have_count(number)
        events, finished = await _finish(page, host, guest, tmp_path)
        shown = await rounds.all_text_contents()
        board = await page.locator("#board").text_content()
        assert page.errors == []
    finally:
        host.kill()
        guest.kill()
    played = [e for e in events if e["event"] == "round"]
    assert [e["host"] for e in played] == ["rock", "paper", "scissors"]
    assert len(shown) == 3
    for line, event in zip(shown, played, strict=True):
        assert line.startswith(f"round {event['round']}: you {ICON[event['host']]} vs peer "
                               f"{ICON[event['guest']]}")
    score = finished["summary"]["score"]
    assert board == f"You {score['host']} – {score['guest']} Peer"


async def test_crazy_eights_to_the_end_through_the_page_shows_the_winner(
        browser, tmp_path) -> None:  # noqa: F811
    host, guest, url = await _host_and_guest(tmp_path, "crazy-eights", None)
    try:
        page = await _open(browser, url)
        answered = 0
        last = ""
        while True:
            point = await (await page.wait_for_function("""last => {
              if (document.body.dataset.finished === "true") return "end";
              const d = document.querySelector("#lx-decision");
              if (d && !d.hidden && d.dataset.point && d.dataset.point !== last
                  && !d.querySelector("button:disabled")) return d.dataset.point;
              return false;
            }""", arg=last, timeout=HANG_GUARD * 1000)).json_value()
            if point == "end":
                break
            await page.locator(f'#lx-decision[data-point="{point}"] button.lx-choice'
                               ).first.click()
            last, answered = point, answered + 1
        events, finished = await _finish(page, host, guest, tmp_path)
        moves = await page.locator("#lx-log li", has_text="play").count()
        log = await page.locator("#lx-log").text_content()
        assert page.errors == []
    finally:
        host.kill()
        guest.kill()
    made = [e for e in events if e["event"] == "decision.made"]
    assert answered == len(made) >= 1
    over = next(e for e in events if e["event"] == "mp.game_over")
    assert over["winner"] == finished["summary"]["winner"]
    assert moves >= 1 and "game over" in log
    assert sum(1 for e in events if e["event"] == "mp.move") >= answered
