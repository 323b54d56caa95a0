"""The zoo of fixture games (issue 13) in Debian's Chromium, driven by plain Playwright.

Each game must draw its board, take one legal swap through the input model it was
written for (and score), and deal the same board for the same seed; ``lingxi play``
must run on each. The games expose ``window.__zoo`` (board, score, cell centres) for
this test only: the harness never reads page state, so nothing here helps an actor.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from lingxi.actor.contracts import validate_evidence, validate_view

pytestmark = pytest.mark.browser

ZOO = Path(__file__).resolve().parent / "zoo"
GAMES = ("busy-cascade", "candy-drag", "cascade", "centred-wide", "four-in-row", "hover-fps",
         "outline-select", "pairs", "phaser3", "pixi", "react-dnd", "slide-2048", "touch-only",
         "wide-start")
NOT_MATCH3 = ("pairs", "slide-2048")  # issue 24.6: games for the explorer actor
# Games in the style of ones not written for Lingxi: nothing on the bridge (its own test
# below reads the page instead)
NO_BRIDGE = ("outline-select",)
MATCH3 = tuple(g for g in GAMES if g not in NOT_MATCH3 + NO_BRIDGE)
# Games laid out as a bundler ships them (issue 24.4): served under a base path, code in
# hashed files under assets/, the engine shared with phaser3 by a symlink (tested in
# test_real_builds.py).
BUILDS = ("phaser-build",)
VENDORED = {"phaser3": ["phaser.min.js"], "pixi": ["pixi.min.js"],
            "react-dnd": ["react.production.min.js", "react-dom.production.min.js"]}
VIEWPORT = {"width": 390, "height": 844}
# The page's bridge, as the harness defines it, but recording into a list we can read.
RECORD_EVENTS = """
window.__events = [];
Object.defineProperty(window, "lingxi", {value: Object.freeze({emit: (e) => window.__events.push(e)})});
"""


# ---- the folders -------------------------------------------------------------------------

def test_every_game_has_its_files_and_no_network():
    assert sorted(p.name for p in ZOO.iterdir() if p.is_dir()) == sorted(GAMES + BUILDS)
    for game in GAMES:
        folder = ZOO / game
        for name in ("index.html", "game.js", "README.md"):
            assert (folder / name).is_file(), f"{game}/{name}"
        html = (folder / "index.html").read_text(encoding="utf-8")
        code = html + (folder / "game.js").read_text(encoding="utf-8")
        assert not re.search(r"""src=["']?(https?:)?//""", html), game  # no CDN
        assert not re.search(r"""<link[^>]+href=["']?(https?:)?//""", html), game
        # a link away is allowed only to a name that cannot resolve (.invalid, RFC 2606)
        assert all(host.endswith(".invalid") for host in
                   re.findall(r"""<a [^>]*href=["']https?://([^/"']+)""", html)), game
        assert "Date.now" not in code and "new Date" not in code, game
        assert "Math.random" in code and "seed" in code, game
        engines = sorted(p.name for p in folder.glob("*.min.js"))
        assert engines == sorted(VENDORED.get(game, [])), game
        if engines:
            assert "MIT" in (folder / "LICENSE").read_text(encoding="utf-8"), game
        else:
            assert not (folder / "LICENSE").exists(), game
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["index.html", "game.js", "README.md", *engines, *(["LICENSE"] if engines else [])])


def test_builds_have_their_files_and_no_network():
    for game in BUILDS:
        folder = ZOO / game
        assert sorted(p.name for p in folder.iterdir()) == ["README.md", "assets", "index.html"]
        html = (folder / "index.html").read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), game  # no CDN
        code = "".join(p.read_text(encoding="utf-8") for p in (folder / "assets").glob("index-*.js"))
        assert "Date.now" not in code and "new Date" not in code, game
        assert "Math.random" in code and "seed" in code, game
        engine = folder / "assets" / "vendor-phaser-3.90.0.min.js"
        assert engine.is_symlink() and engine.resolve() == (ZOO / "phaser3" / "phaser.min.js")


# ---- plain Playwright ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    from lingxi.playtest.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Zoo:
    """One static server and one browser context per game, opened on first use."""

    def __init__(self, chromium):
        self.chromium, self.servers, self.contexts = chromium, {}, {}

    def open(self, name, seed):
        from lingxi.playtest.server import StaticServer

        if name not in self.servers:
            self.servers[name] = StaticServer(ZOO / name)
            self.contexts[name] = self.chromium.new_context(
                viewport=VIEWPORT, device_scale_factor=1, has_touch=name == "touch-only")
        return Game(self.contexts[name], self.servers[name], seed)

    def close(self):
        for context in self.contexts.values():
            context.close()
        for server in self.servers.values():
            server.close()


@pytest.fixture(scope="module")
def zoo(chromium):
    opened = Zoo(chromium)
    yield opened
    opened.close()


class Game:
    """One open page of a zoo game."""

    def __init__(self, context, server, seed):
        self.context = context
        self.page = context.new_page()
        self.errors = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.add_init_script(RECORD_EVENTS)
        self.page.goto(f"{server.url}?seed={seed}")
        self.page.wait_for_function("() => window.__zoo && window.__zoo.board().length > 0")
        self.frames(2)

    def frames(self, n):
        self.page.evaluate("(n) => new Promise((done) => { const next = (k) => k ? "
                           "requestAnimationFrame(() => next(k - 1)) : done(); next(n); })", n)

    def board(self):
        return self.page.evaluate("() => window.__zoo.board()")

    def score(self):
        return self.page.evaluate("() => window.__zoo.score()")

    def events(self, kind=None):
        found = self.page.evaluate("() => window.__events")
        return [e for e in found if kind is None or e.get("type") == kind]

    def center(self, cell):
        x, y = self.page.evaluate("([r, c]) => window.__zoo.cellCenter(r, c)", list(cell))
        return x, y

    def settle(self):
        self.page.wait_for_function("() => !window.__zoo.busy()", timeout=15_000)

    def screenshot(self):
        from PIL import Image

        return Image.open(io.BytesIO(self.page.screenshot())).convert("RGB")

    def close(self):
        self.page.close()
        assert not self.errors, self.errors


def runs(board, least):
    """Cells in horizontal or vertical runs of at least ``least`` equal kinds."""
    rows, columns, hit = len(board), len(board[0]), set()
    for r in range(rows):
        for c in range(columns):
            if c + least <= columns and len({board[r][c + i] for i in range(least)}) == 1:
                hit |= {(r, c + i) for i in range(least)}
            if r + least <= rows and len({board[r + i][c] for i in range(least)}) == 1:
                hit |= {(r + i, c) for i in range(least)}
    return hit


def swaps(board, least, *, fewer_than=None):
    """Adjacent pairs whose swap makes a run of ``least`` (and none of ``fewer_than``)."""
    found = []
    for r in range(len(board)):
        for c in range(len(board[0])):
            for z in ((r, c + 1), (r + 1, c)):
                if z[0] >= len(board) or z[1] >= len(board[0]):
                    continue
                after = [row[:] for row in board]
                after[r][c], after[z[0]][z[1]] = after[z[0]][z[1]], after[r][c]
                if runs(after, least) and not (fewer_than and runs(after, fewer_than)):
                    found.append(((r, c), z))
    return found


def in_view(game, pair):
    return all(0 < x < VIEWPORT["width"] and 0 < y < VIEWPORT["height"]
               for x, y in (game.center(cell) for cell in pair))


def assert_board_drawn(game):
    """The pixel at each visible cell centre shows its kind: one colour per kind, distinct."""
    image, board = game.screenshot(), game.board()
    seen = {}
    for r, row in enumerate(board):
        for c, kind in enumerate(row):
            x, y = game.center((r, c))
            if 0 <= x < image.width and 0 <= y < image.height:
                seen.setdefault(kind, []).append(image.getpixel((int(x), int(y))))
    assert len(seen) >= 4, "fewer than four kinds visible"
    colour = {kind: Counter(pixels).most_common(1)[0][0] for kind, pixels in seen.items()}
    assert len(set(colour.values())) == len(colour), "two kinds drawn alike"
    agree = sum(p == colour[k] for k, pixels in seen.items() for p in pixels)
    total = sum(len(pixels) for pixels in seen.values())
    assert agree >= 0.9 * total  # a sparkle may sit on a few centres


# ---- the input models ------------------------------------------------------------------------

def mouse_drag(game, a, b, *, hold_ms=0):
    (ax, ay), (bx, by) = game.center(a), game.center(b)
    mouse = game.page.mouse
    mouse.move(ax, ay)
    mouse.down()
    if hold_ms:
        game.page.wait_for_timeout(hold_ms)
    mouse.move(bx, by, steps=8)
    if hold_ms:
        game.page.wait_for_timeout(hold_ms)
    mouse.up()


def polled_drag(game, a, b):
    """Phaser reads the pointer once per frame: hold it down across frames."""
    mouse_drag(game, a, b, hold_ms=120)


def two_taps(game, a, b):
    for cell in (a, b):
        game.page.mouse.click(*game.center(cell))
        game.page.wait_for_timeout(60)


def html5_drop(game, a, b):
    game.page.drag_and_drop(f'[data-r="{a[0]}"][data-c="{a[1]}"]',
                            f'[data-r="{b[0]}"][data-c="{b[1]}"]')


def touch_swipe(game, a, b):
    (ax, ay), (bx, by) = game.center(a), game.center(b)
    cdp = game.context.new_cdp_session(game.page)
    for kind, points in (("touchStart", [(ax, ay)]), ("touchMove", [((ax + bx) / 2, (ay + by) / 2)]),
                         ("touchMove", [(bx, by)]), ("touchEnd", [])):
        cdp.send("Input.dispatchTouchEvent",
                 {"type": kind, "touchPoints": [{"x": x, "y": y} for x, y in points]})
    cdp.detach()


INPUT = {"busy-cascade": mouse_drag, "candy-drag": html5_drop, "centred-wide": mouse_drag, "phaser3": polled_drag, "pixi": two_taps, "react-dnd": html5_drop,
         "wide-start": mouse_drag, "cascade": mouse_drag, "touch-only": touch_swipe,
         "four-in-row": mouse_drag, "hover-fps": mouse_drag}


def start_if_needed(game, name):
    if name != "wide-start":
        return
    assert game.page.evaluate("() => window.__zoo.started()") is False
    assert game.page.locator("#board").is_hidden()  # nothing of the board before Start
    game.page.get_by_role("button", name="Start").click()
    game.frames(2)
    assert game.page.locator("#board").is_visible()


def legal_swap(game, least):
    found = swaps(game.board(), least)
    assert found, "the game dealt a board without a legal swap"
    visible = [pair for pair in found if in_view(game, pair)]
    return visible[0] if visible else found[0]


@pytest.mark.parametrize("name", MATCH3)
def test_board_drawn_and_one_legal_swap_scores(zoo, name):
    game = zoo.open(name, 1)
    try:
        start_if_needed(game, name)
        assert_board_drawn(game)
        least = game.page.evaluate("() => window.__zoo.minRun")
        a, b = legal_swap(game, least)
        if not in_view(game, (a, b)):
            x, y = game.center(a)
            game.page.evaluate("([x, y]) => window.scrollBy(x - 195, y - 422)", [x, y])
        before = game.board()
        INPUT[name](game, a, b)
        game.page.wait_for_function("() => window.__zoo.score() > 0", timeout=15_000)
        game.settle()
        swap = game.events("swap")[0]
        assert swap["valid"] is True
        assert sorted([swap["from"], swap["to"]]) == sorted([[a[0] + 1, a[1] + 1], [b[0] + 1, b[1] + 1]])
        assert game.events("score")[-1]["score"] == game.score() > 0
        assert game.board() != before
    finally:
        game.close()


@pytest.mark.parametrize("name", MATCH3)
def test_same_seed_same_board(zoo, name):
    boards = []
    for seed in (3, 3, 4):
        game = zoo.open(name, seed)
        boards.append(game.board())
        game.close()
    assert boards[0] == boards[1]
    assert boards[0] != boards[2]
    assert not runs(boards[0], 3)  # a fresh board holds no run
    assert swaps(boards[0], 4 if name == "four-in-row" else 3)


# ---- what each game stands for --------------------------------------------------------------

def test_four_in_row_rejects_a_run_of_three(zoo):
    game = zoo.open("four-in-row", 1)
    try:
        board = game.board()
        a, b = swaps(board, 3, fewer_than=4)[0]
        mouse_drag(game, a, b)
        game.page.wait_for_function("() => window.__events.some((e) => e.type === 'swap')")
        game.settle()
        assert game.events("swap")[0] == {
            "type": "swap", "valid": False, "via": "drag", "from": [a[0] + 1, a[1] + 1],
            "to": [b[0] + 1, b[1] + 1], "reason": "run of 3 is not enough"}
        assert game.board() == board and game.score() == 0
    finally:
        game.close()


def test_touch_only_ignores_the_mouse(zoo):
    game = zoo.open("touch-only", 1)
    try:
        board = game.board()
        a, b = legal_swap(game, 3)
        mouse_drag(game, a, b)
        two_taps(game, a, b)
        game.frames(10)
        assert game.board() == board and game.events("swap") == []
        touch_swipe(game, a, b)
        game.page.wait_for_function("() => window.__zoo.score() > 0")
    finally:
        game.close()


def test_pixi_counts_a_drag_as_one_tap_and_keeps_the_selection(zoo):
    game = zoo.open("pixi", 1)
    try:
        board = game.board()
        a, b = legal_swap(game, 3)
        mouse_drag(game, a, b)  # released on b: b is selected, nothing swapped
        game.frames(3)
        assert game.page.evaluate("() => window.__zoo.selected()") == list(b)
        assert game.board() == board
        game.page.mouse.click(*game.center(a))  # the leftover selection makes this a swap
        game.page.wait_for_function("() => window.__zoo.score() > 0")
    finally:
        game.close()


PHASER_GESTURE = """async ([a, b, spread]) => {
  const canvas = document.querySelector("#game canvas");
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  const send = (type, [x, y], buttons) => canvas.dispatchEvent(new MouseEvent(type,
    {bubbles: true, cancelable: true, clientX: x, clientY: y, button: 0, buttons}));
  await frame();
  send("mousedown", a, 1);
  if (spread) { await frame(); await frame(); }
  send("mousemove", b, 1);
  if (spread) { await frame(); await frame(); }
  send("mouseup", b, 0);
}"""


def test_phaser_misses_a_press_released_before_the_next_frame(zoo):
    game = zoo.open("phaser3", 1)
    try:
        board = game.board()
        a, b = legal_swap(game, 3)
        ends = [list(game.center(a)), list(game.center(b))]
        game.page.evaluate(PHASER_GESTURE, [*ends, False])  # press to release in one task
        game.frames(40)
        assert game.board() == board and game.events("swap") == []
        game.page.evaluate(PHASER_GESTURE, [*ends, True])  # the same gesture over frames
        game.page.wait_for_function("() => window.__zoo.score() > 0")
    finally:
        game.close()


def test_hover_fps_changes_without_a_move(zoo):
    game = zoo.open("hover-fps", 1)
    try:
        board, first = game.board(), game.screenshot()
        game.frames(3)
        assert game.screenshot().tobytes() != first.tobytes()  # FPS counter, sparkles
        x, y = game.center((4, 4))
        game.page.mouse.move(x, y)
        game.frames(2)
        assert game.page.evaluate("() => window.__zoo.hover()") == [4, 4]
        assert game.board() == board and game.score() == 0 and game.events("swap") == []
    finally:
        game.close()


def test_outline_select_keeps_a_drag_as_a_selection_and_shows_its_score_only_on_the_page(zoo):
    game = zoo.open("outline-select", 1)
    try:
        assert_board_drawn(game)
        a, b = legal_swap(game, 3)
        mouse_drag(game, a, b)  # press and release on one canvas: a click where released
        game.frames(2)
        assert game.page.evaluate("() => window.__zoo.selected()") == list(b)
        game.page.mouse.click(*game.center(b))  # the same gem again: not a neighbour, cleared
        game.frames(2)
        assert game.page.evaluate("() => window.__zoo.selected()") is None
        two_taps(game, a, b)
        game.page.wait_for_function("() => window.__zoo.score() > 0", timeout=15_000)
        game.settle()
        assert game.page.locator("#score").inner_text() == str(game.score())
        assert game.events() == []  # nothing on the bridge
    finally:
        game.close()


# ---- through the CLI -------------------------------------------------------------------------

# The CLI on three games of different kinds in every run (DOM images with the browser's own
# drag, a canvas engine, a game that is not Match-3); the others in `make test-slow` — the
# harness on each game is tested in process above and in test_zoo_items.py, and a `lingxi
# play` process per game (its own Chromium) was two minutes of one worker.
CLI_EVERY_RUN = ("candy-drag", "phaser3", "slide-2048")


class CliRuns:
    """``lingxi play <game> --actor random --budget 3 --seed 1``, each game once, on demand.

    Separate processes: one thread can run only one Playwright sync session at a time.
    """

    def __init__(self, base: Path) -> None:
        self.base, self.done = base, {}
        self.env = {**os.environ, "LINGXI_HOME": str(base / "home")}

    def __getitem__(self, name):
        if name not in self.done:
            out = self.base / name
            command = [sys.executable, "-c", "from lingxi.cli import main; main()", "play",
                       str(ZOO / name), "--actor", "random", "--budget", "3", "--seed", "1",
                       "--out", str(out), "--json"]
            self.done[name] = out, subprocess.run(command, capture_output=True, text=True,
                                                  timeout=300, env=self.env)
        return self.done[name]


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    return CliRuns(tmp_path_factory.mktemp("zoo-cli"))


@pytest.mark.parametrize("name", [name if name in CLI_EVERY_RUN
                                  else pytest.param(name, marks=pytest.mark.slow)
                                  for name in GAMES])
def test_lingxi_play_random_runs(cli_runs, name):
    out, result = cli_runs[name]
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"]["actions"] == 3
    views = [json.loads(line) for line in (out / "views.jsonl").read_text().splitlines()]
    assert len(views) >= 3
    for view in views:
        validate_view(view)
    validate_evidence(json.loads((out / "evidence.json").read_text()))
