"""Issue 24 through the harness, one zoo game per item (docs/playtest.md).

Each test plays a zoo game written for that item with ``lingxi.playtest.launch.play``
in Debian's Chromium and asserts what the item promises a user of the harness.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lingxi.actor.contracts import validate_evidence
from lingxi.playtest.objectives import Brief

pytestmark = pytest.mark.browser

ZOO = Path(__file__).resolve().parent / "zoo"


@pytest.fixture(scope="module")
def browser():
    from lingxi.playtest.browser import Browser

    with Browser() as shared:
        yield shared


def play(browser, game, out, *, actor="greedy-match3", budget=3, seed=1, replay=False,
         options=None):
    from lingxi.actor.actors import create_actor
    from lingxi.playtest.launch import play as run

    def fresh():
        return create_actor(actor, seed=seed, options=dict(options or {}))

    evidence = run(str(ZOO / game), fresh(), actor_name=actor, actor_options=dict(options or {}),
                   seed=seed, budget=budget, brief=Brief("score"), out=out,
                   run_id=f"{game}-{seed}", browser=browser,
                   replay_actor=fresh if replay else None)
    validate_evidence(evidence)
    return evidence


def swaps(evidence):
    return [s for s in evidence["steps"] if s["normalized"]["kind"] == "swap"]


def test_native_drag_of_default_draggable_images(browser, tmp_path):
    """24.1: <img> tiles swapped by the browser's own drag (no draggable="true")."""
    evidence = play(browser, "candy-drag", tmp_path / "run", budget=3)
    made = swaps(evidence)
    assert made, "greedy made no swap"
    assert all(s["causalGameResponse"] for s in made), [s.get("inputModel") for s in made]
    assert {s["inputModel"] for s in made} == {"mouse"}  # received on the first model
    assert not any(h["kind"] == "input_probe" for s in made for h in s["harnessSteps"])
    swap_events = [e for e in evidence["events"] if e["type"] == "swap"]
    assert swap_events and all(e["data"]["via"] == "dnd" for e in swap_events)
    assert evidence["summary"]["score"] and evidence["summary"]["score"] > 0


def bridge(step, kind):
    return [e for e in step["gameEvents"] if e["source"] == "bridge" and e["type"] == kind]


def test_settling_waits_for_a_game_that_thinks_between_stages(browser, tmp_path):
    """24.3: a game that pauses 300-500 ms between cascade stages with no visual change
    and drops input while busy: every move the game made finishes inside its own action
    and is recorded as received; no input is sent into the busy game."""
    evidence = play(browser, "busy-cascade", tmp_path / "run", budget=5)
    made = [s for s in evidence["steps"] if bridge(s, "swap")]
    assert len(made) >= 3, "greedy made fewer than three swaps the game executed"
    for step in evidence["steps"]:
        executed = bridge(step, "swap")
        assert len(executed) <= 1, step["actionId"]  # no second move inside one action
        if executed:
            assert step["causalGameResponse"], step["actionId"]
            assert bridge(step, "idle"), f"{step['actionId']}: settled before the move ended"
            assert not any(h["kind"] == "deselect" for h in step["harnessSteps"])
    settles = [h for h in evidence["harnessSteps"] if h["kind"] == "settle"]
    assert settles and not settles[0]["bounded"]


def test_the_camera_fits_a_centred_wide_layout_once(browser, tmp_path):
    """24.5: a 560 px stage centred on the window: one camera move to its whole width (the
    score at its left edge in the first frame), none after, and greedy's own vision sees
    the board the harness lists candidates for on every step."""
    evidence = play(browser, "centred-wide", tmp_path / "run", budget=4)
    moves = [h for h in evidence["harnessSteps"] if h["kind"] == "camera"]
    moves += [h for s in evidence["steps"] for h in s["harnessSteps"] if h["kind"] == "camera"]
    assert len(moves) == 1, moves
    assert moves[0]["pageSize"]["width"] == 560
    assert evidence["summary"]["cameraScale"] == round(390 / 560, 4)
    for step in evidence["steps"]:
        assert "no board found" not in (step["selection"] or {}).get("reason", ""), step["actionId"]
    assert evidence["summary"]["responses"] == 4


def test_a_2048_clone_is_played_with_the_arrows_and_new_game_is_avoided(browser, tmp_path):
    """24.6: the explorer learns the arrow keys play and score; "New Game" (a reset) is
    pressed at most once; greedy-match3 says it is not Match-3 and hands over."""
    explorer = play(browser, "slide-2048", tmp_path / "explorer", actor="explorer", budget=15)
    keys = [s for s in explorer["steps"] if s["normalized"]["kind"] == "key"]
    assert sum(s["causalGameResponse"] for s in keys) >= 8
    assert explorer["summary"]["scoreGained"] and explorer["summary"]["scoreGained"] > 0
    starts = [e for e in explorer["events"] if e["type"] == "start"]
    assert len(starts) <= 2  # the game's own start, and at most one press of New Game
    greedy = play(browser, "slide-2048", tmp_path / "greedy", budget=12)
    reasons = [(s["selection"] or {}).get("reason", "") for s in greedy["steps"]]
    assert any(r.startswith("not a Match-3 game") for r in reasons)
    assert len([e for e in greedy["events"] if e["type"] == "start"]) <= 2
    assert greedy["summary"]["responses"] >= 5


def test_a_tap_only_pairs_game_is_played_with_taps(browser, tmp_path):
    """24.6: the explorer taps the cards (almost every tap received); greedy-match3, which
    would drag between cards, hands over to it."""
    explorer = play(browser, "pairs", tmp_path / "explorer", actor="explorer", budget=12)
    assert explorer["summary"]["responses"] >= 9
    flips = [e for e in explorer["events"] if e["type"] == "flip"]
    assert len(flips) >= 9
    greedy = play(browser, "pairs", tmp_path / "greedy", budget=10)
    assert greedy["summary"]["responses"] >= 5


def test_a_game_not_written_for_lingxi_outline_selection_and_the_score_it_shows(browser, tmp_path):
    """Found on a third-party canvas game: the first probe's drag leaves a gem selected
    (press and release on one canvas make a click), drawn as an outline on the cell's border
    only; before, no deselect was made, every later two-tap swap started from a stale
    selection and every second swap was lost. The game sends no score: the one its page
    shows is read, and the "Best" beside it is not."""
    evidence = play(browser, "outline-select", tmp_path / "run", budget=5)
    made = swaps(evidence)
    assert len(made) == 5
    assert all(s["causalGameResponse"] for s in made), [s["harnessSteps"] for s in made]
    first = [h["kind"] for h in made[0]["harnessSteps"] if h["kind"] != "hover_probe"]
    assert first[:2] == ["input_probe", "deselect"], made[0]["harnessSteps"]
    deselect = next(h for h in made[0]["harnessSteps"] if h["kind"] == "deselect")
    assert deselect["cleared"] is True
    assert {s["inputModel"] for s in made[1:]} == {"taps"}
    summary = evidence["summary"]
    assert summary["scoreSource"] == "page"
    assert summary["scoreBeforeActions"] == 0  # not the page's "Best: 900"
    assert summary["scoreGained"] and summary["scoreGained"] >= 5 * 30
    shown = [e for e in evidence["events"] if e["type"] == "score"]
    assert shown and all(e["source"] == "observed" and e["data"]["element"] == "#score"
                         for e in shown)


def test_cascade_drops_input_while_it_animates(browser):
    """The zoo's cascade game on the harness's virtual clock (no real-time race, unlike the
    plain-Playwright check it replaces): a second swap 100 ms into the first one's
    animation (0.7-3.9 s) is dropped."""
    from lingxi.playtest.selection import drag_path
    from lingxi.playtest.server import StaticServer

    from .test_zoo_smoke import swaps as legal_swaps

    with StaticServer(ZOO / "cascade") as server:
        page = browser.open(server.url + "?seed=1", seed=1)
        try:
            page.drain_events()

            def swap_now():
                board = page._page.evaluate("() => window.__zoo.board()")
                (a, b) = legal_swaps(board, 3)[0]
                ends = [page._page.evaluate("([r, c]) => window.__zoo.cellCenter(r, c)", list(cell))
                        for cell in (a, b)]
                (ax, ay), (bx, by) = ([round(v) for v in end] for end in ends)
                page.perform({"kind": "drag", "path": drag_path((ax, ay), (bx, by)), "durationMs": 0})

            swap_now()
            page.advance(100)
            assert page._page.evaluate("() => window.__zoo.busy()") is True
            swap_now()  # lands mid-animation: dropped
            page.advance(6000)
            assert page._page.evaluate("() => window.__zoo.busy()") is False
            raw, _ = page.drain_events()
            assert sum('"type":"swap"' in text for _, text in raw) == 1
        finally:
            page.close()
