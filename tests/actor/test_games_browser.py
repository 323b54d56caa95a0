"""The demo games in Chromium, seen only through pixels, played by the greedy actor.

Timers run on Playwright's fake clock, so "settles within 600 ms" is checked
exactly and the tests do not wait in real time.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lingxi.actor.actors import create_actor
from lingxi.actor.actors.match3 import adjacent_pairs, swap_gain
from lingxi.actor.vision import classify_cells, find_lattice

from .views import make_view

pytestmark = pytest.mark.browser

GAMES = Path(__file__).resolve().parents[2] / "examples" / "games"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
BRIDGE = "window.__events = []; window.lingxi = {emit: (e) => window.__events.push(e)};"


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (make browser installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


class Game:
    def __init__(self, browser, name: str, seed: int, bridge: bool = True):
        self.page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        if bridge:
            self.page.add_init_script(BRIDGE)
        self.page.clock.install()
        self.page.goto((GAMES / name / "index.html").as_uri() + f"?seed={seed}")

    def shot(self) -> bytes:
        return self.page.screenshot()

    def events(self) -> list[dict]:
        return self.page.evaluate("window.__events.splice(0)")

    def drag(self, a: tuple[int, int], b: tuple[int, int]) -> None:
        m = self.page.mouse
        m.move(*a)
        m.down()
        m.move((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        m.move(*b)
        m.up()

    def taps(self, a: tuple[int, int], b: tuple[int, int]) -> None:
        self.page.mouse.click(*a)
        self.page.mouse.click(*b)

    def settle(self, ms: int = 600) -> None:
        self.page.clock.run_for(ms)

    def close(self) -> None:
        self.page.close()


@pytest.fixture(params=["match3", "match3-canvas"])
def game(request, browser):
    g = Game(browser, request.param, seed=1)
    yield g
    g.close()


def test_board_is_found_from_pixels_as_8x8(game):
    png = game.shot()
    lattice = find_lattice(png)
    assert lattice is not None and (lattice.rows, lattice.columns) == (8, 8)
    assert 43 <= lattice.pitch_x <= 47 and 43 <= lattice.pitch_y <= 47
    kinds = classify_cells(png, lattice)
    assert len({k for row in kinds for k in row}) == 6
    assert max(swap_gain(kinds, a, b) for a, b in adjacent_pairs(8, 8)) >= 3  # the game dealt a move
    assert not _has_line(kinds)                                                  # no initial matches


def _has_line(kinds: list[list[int]]) -> bool:
    rows, cols = len(kinds), len(kinds[0])
    for r in range(rows):
        for c in range(cols):
            k = kinds[r][c]
            if c + 2 < cols and kinds[r][c + 1] == k == kinds[r][c + 2]:
                return True
            if r + 2 < rows and kinds[r + 1][c] == k == kinds[r + 2][c]:
                return True
    return False


def test_greedy_scores_by_drag_and_by_taps_and_every_move_settles_in_600ms(game):
    actor = create_actor("greedy-match3", seed=1, options={})
    assert [e["type"] for e in game.events()] == ["start"]
    score = 0
    for step in range(6):
        png = game.shot()
        view = make_view(png, seed=1)
        sel = actor.select(view, png)
        assert sel["type"] == "swap_pair"
        cand = next(c for c in view["interactionCandidates"]["match3Swaps"]["candidates"]
                    if c["candidateId"] == sel["candidateId"])
        lattice = find_lattice(png, rows=8, columns=8)
        a, b = (lattice.cell_center(p["cell"]["row"], p["cell"]["column"]) for p in cand["pair"])
        (game.drag if step % 2 == 0 else game.taps)(a, b)
        game.settle(600)
        events = game.events()
        swaps = [e for e in events if e["type"] == "swap"]
        assert swaps and swaps[0]["valid"] is True and swaps[0]["via"] == ("drag" if step % 2 == 0 else "taps")
        assert events[-1]["type"] == "idle"                  # settled inside 600 ms
        settled = game.shot()
        assert not _has_line(classify_cells(settled, find_lattice(settled, rows=8, columns=8)))
        score = events[-1]["score"]
    assert score >= 6 * 30
    assert game.errors == []


def test_greedy_plays_a_7x7_emoji_game_on_checkerboard_wells(browser):
    # A variant the vision code was not written for: 7x7, five emoji, no gaps,
    # checkerboard wells, a gradient page. The lattice size is the only hint.
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    page.add_init_script(BRIDGE)
    page.clock.install()
    page.goto((Path(__file__).resolve().parent / "pages" / "fruit7" / "index.html").as_uri() + "?seed=3")
    actor = create_actor("greedy-match3", seed=3, options={})
    try:
        for _ in range(4):
            png = page.screenshot()
            view = make_view(png, rows=7, columns=7, seed=3)
            sel = actor.select(view, png)
            cand = next(c for c in view["interactionCandidates"]["match3Swaps"]["candidates"]
                        if c["candidateId"] == sel["candidateId"])
            lattice = find_lattice(png, rows=7, columns=7)
            a, b = (lattice.cell_center(p["cell"]["row"], p["cell"]["column"]) for p in cand["pair"])
            page.mouse.move(*a)
            page.mouse.down()
            page.mouse.move(*b)
            page.mouse.up()
            page.clock.run_for(600)
            events = page.evaluate("window.__events.splice(0)")
            assert [e["valid"] for e in events if e["type"] == "swap"] == [True]
    finally:
        page.close()


def test_invalid_swap_reverts_within_600ms(game):
    png = game.shot()
    lattice = find_lattice(png, rows=8, columns=8)
    kinds = classify_cells(png, lattice)
    a, b = next((p, q) for p, q in adjacent_pairs(8, 8)
                if swap_gain(kinds, p, q) == 0 and kinds[p[0] - 1][p[1] - 1] != kinds[q[0] - 1][q[1] - 1])
    game.events()
    game.drag(lattice.cell_center(*a), lattice.cell_center(*b))
    game.settle(600)
    events = game.events()
    assert [e["type"] for e in events] == ["swap", "revert"] and events[0]["valid"] is False
    # The board is back as it was (a revert may repaint a few anti-aliased pixels).
    assert classify_cells(game.shot(), lattice) == kinds


def test_seeded_boards_and_no_bridge_needed(browser):
    shots = {}
    for seed, bridge in ((1, True), (1, False), (2, True)):
        g = Game(browser, "match3", seed=seed, bridge=bridge)
        shots[(seed, bridge)] = g.shot()
        assert g.errors == []
        g.close()
    assert shots[(1, True)] == shots[(1, False)]
    assert shots[(1, True)] != shots[(2, True)]


BOARDS = Path(__file__).resolve().parent / "pages" / "boards.html"


@pytest.mark.parametrize(("style", "rows", "columns"), [
    ("emoji-grid", 8, 8), ("gradient-circles", 7, 6), ("bordered-nogap", 8, 8), ("tiny-letters", 10, 10),
    ("toolbar-tiles", 6, 6), ("canvas-gradient", 9, 9), ("emoji-bare-page", 8, 8),
    ("offset-selected", 7, 7), ("similar-colours", 8, 8),
])
def test_boards_unlike_the_demos_are_read_right(browser, style, rows, columns):
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    try:
        page.goto(BOARDS.as_uri() + f"?style={style}&rows={rows}&cols={columns}&seed={rows * columns}")
        png = page.screenshot()
        truth = page.evaluate("window.truth")
    finally:
        page.close()
    lattice = find_lattice(png)
    assert lattice is not None and (lattice.rows, lattice.columns) == (rows, columns)
    x, y, size = truth["first"]
    cx, cy = lattice.cell_center(1, 1)
    assert abs(cx - (x + size / 2)) <= 4 and abs(cy - (y + size / 2)) <= 4
    kinds = classify_cells(png, lattice)
    mapping: dict[int, int] = {}
    for got_row, want_row in zip(kinds, truth["kinds"], strict=True):
        for got, want in zip(got_row, want_row, strict=True):
            assert mapping.setdefault(got, want) == want
    assert len(set(mapping.values())) == len(mapping)
