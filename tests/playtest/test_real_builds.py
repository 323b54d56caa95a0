"""Issue 24.4: canvas games built and shipped the way real ones are (docs/playtest.md,
"Published builds").

Zoo ``phaser-build`` is a Phaser 3 Match-3 made like a published one: a bundle built for
the base path ``/game/``, the engine's ENVELOP scale mode (a canvas that covers the window
and overflows it), a Start button drawn on the canvas and a "tap to begin" gate that
swallows the first press. Before this work the harness served it at ``/`` (nothing
loaded: no lattice, 0 actions received), zoomed out four times chasing a canvas that
grows with the window (0.82 → 0.4), and spent the first swap on every input model.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.playtest.errors import PlayInputError
from lingxi.playtest.launch import detect_base, resolve_game
from lingxi.playtest.server import StaticServer, normalize_base

from .test_zoo_smoke import swaps

ZOO = Path(__file__).resolve().parent / "zoo"
BUILD = ZOO / "phaser-build"


# ---- base paths (no browser) ---------------------------------------------------------------

def test_the_base_a_build_was_made_for_is_read_from_its_page(tmp_path):
    assert detect_base(BUILD, "index.html") == "/game/"
    assert detect_base(ZOO / "phaser3", "index.html") == "/"  # relative URLs: served at /
    page = tmp_path / "index.html"
    # absolute at the root (the file exists as named) beats a prefix that names nothing
    (tmp_path / "app.js").write_text("1")
    page.write_text('<script src="/app.js"></script><img src="/cdn/none.png">')
    assert detect_base(tmp_path, "index.html") == "/"
    # two levels deep; a path with .. votes for nothing
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "a.js").write_text("1")
    page.write_text('<script src="/org/play/static/a.js"></script>'
                    '<link href="/org/play/static/a.js"><script src="/../../etc/passwd"></script>')
    assert detect_base(tmp_path, "index.html") == "/org/play/"
    assert resolve_game(str(tmp_path)).base == "/org/play/"
    assert resolve_game(str(tmp_path), "/elsewhere").base == "/elsewhere/"  # --base wins


@pytest.mark.parametrize("bad", ["../up", "/a/../b/", "a b", "http://x/", "/q?x=1", "/a//b"])
def test_a_base_that_is_not_a_url_path_is_refused(bad):
    with pytest.raises(PlayInputError) as refused:
        normalize_base(bad)
    assert refused.value.code == "play.bad_base"


def test_base_is_refused_for_a_url_and_bad_bases_exit_2(tmp_path):
    result = CliRunner().invoke(cli, ["play", "http://127.0.0.1:9/game/", "--base", "/game/",
                                      "--actor", "random", "--out", str(tmp_path / "o"),
                                      "--json"])
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "play.bad_option"
    result = CliRunner().invoke(cli, ["play", str(BUILD), "--base", "../x", "--actor", "random",
                                      "--out", str(tmp_path / "p")])
    assert result.exit_code == 2 and "play.bad_base" in result.output
    assert "Traceback" not in result.output


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_the_server_serves_the_folder_under_its_base_and_counts_404s():
    with StaticServer(BUILD, base="/game/") as server:
        assert server.url.endswith("/game/index.html")
        root = server.url[: -len("game/index.html")]
        assert _get(server.url) == 200
        assert _get(root + "game/assets/vendor-phaser-3.90.0.min.js") == 200
        assert server.missing.count == 0
        assert _get(root + "index.html") == 404  # outside the base, as on the real host
        assert _get(root + "game/assets/nope.js") == 404
        assert server.missing.count == 2
        assert server.missing.paths == ["/index.html", "/game/assets/nope.js"]


# ---- whole runs in Chromium ------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    from lingxi.playtest.browser import Browser

    with Browser() as shared:
        yield shared


def play(browser, out, *, actor, budget, base=None, seed=1):
    from lingxi.actor.actors import create_actor
    from lingxi.actor.contracts import validate_evidence
    from lingxi.playtest.launch import play as run
    from lingxi.playtest.objectives import Brief

    evidence = run(str(BUILD), create_actor(actor, seed=seed, options={}), actor_name=actor,
                   actor_options={}, seed=seed, budget=budget, brief=Brief("score"), out=out,
                   run_id=f"phaser-build-{actor}-{seed}", browser=browser, base=base)
    validate_evidence(evidence)
    return evidence


def cameras(evidence):
    return [h for h in evidence["harnessSteps"] if h["kind"] == "camera"] + [
        h for s in evidence["steps"] for h in s["harnessSteps"] if h["kind"] == "camera"]


@pytest.mark.browser
@pytest.mark.slow
def test_a_published_canvas_build_is_played(browser, tmp_path):
    """Board reached, every swap received (the first after the game woke up), one camera
    move and back for a canvas that covers the window, greedy ahead of random."""
    greedy = play(browser, tmp_path / "greedy", actor="greedy-match3", budget=6)
    summary = greedy["summary"]
    assert summary["missing"] == {"count": 0, "files": []}
    assert summary["boardReached"] and summary["latticeDimensions"] == {"rows": 9, "columns": 9}
    assert summary["swapCandidates"] == 144
    swaps = [s for s in greedy["steps"] if s["normalized"]["kind"] == "swap"]
    assert len(swaps) >= 4
    assert all(s["causalGameResponse"] and s["inputModel"] == "mouse" for s in swaps)
    probes = [h for h in swaps[0]["harnessSteps"] if h["kind"] == "input_probe"]
    assert probes == [{"kind": "input_probe", "model": "mouse", "received": False, "woke": True,
                       "virtualTimeMs": probes[0]["virtualTimeMs"]},
                      {"kind": "input_probe", "model": "mouse", "received": True,
                       "virtualTimeMs": probes[1]["virtualTimeMs"]}]
    assert not any(h["kind"] == "input_probe" for s in swaps[1:] for h in s["harnessSteps"])
    moves = cameras(greedy)
    assert len(moves) == 2, moves
    assert moves[-1]["followsWindow"] is True and moves[-1]["scale"] == 1
    assert "cameraScale" not in summary  # the run is seen as a phone shows it
    boxes = {json.dumps([t["box"] for t in s["targets"] if t["kind"] == "lattice"][:1])
             for s in swaps}
    assert len(boxes) == 1, boxes  # the board stays put once the camera is settled
    assert summary["responses"] == summary["actions"]

    random = play(browser, tmp_path / "random", actor="random", budget=6)
    assert (summary["scoreGained"] or 0) > (random["summary"]["scoreGained"] or 0)


@pytest.mark.browser
@pytest.mark.slow
def test_a_build_served_at_the_wrong_base_says_what_is_missing(browser, tmp_path):
    evidence = play(browser, tmp_path / "run", actor="greedy-match3", budget=1, base="/")
    missing = evidence["summary"]["missing"]
    assert missing["count"] >= 2
    assert {"path": "/game/assets/index-9c03fa.js", "status": 404} in missing["files"]
    assert not evidence["summary"]["boardReached"]
    report = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "game files not found" in report and "--base" in report


@pytest.mark.browser
def test_the_build_behaves_as_its_readme_says(browser):
    """The zoo game itself, in plain Playwright under its base: a seeded board, a Start
    button that exists only on the canvas, a first press into the play scene that only
    wakes the game, then a drag that swaps."""
    with StaticServer(BUILD, base="/game/") as server:
        context = browser._browser.new_context(viewport={"width": 390, "height": 844},
                                               device_scale_factor=1)
        try:
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(server.url + "?seed=3")
            page.wait_for_function("() => window.__zoo && window.__zoo.scene() === 'menu'")
            box = page.evaluate("() => { const r = document.querySelector('canvas')"
                                ".getBoundingClientRect(); return [r.left, r.width]; }")
            assert box[1] > 390  # ENVELOP: the canvas is wider than the window
            assert page.locator("button, [role=button], a").count() == 0  # Start is drawn
            k = box[1] / 720
            page.mouse.click(box[0] + 360 * k, 760 * k)
            page.wait_for_function("() => window.__zoo.scene() === 'play'")
            first = page.evaluate("() => window.__zoo.board()")
            assert page.evaluate("() => window.__zoo.awake()") is False
            x, y = page.evaluate("() => window.__zoo.cellCenter(4, 4)")
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x + 40, y, steps=4)
            page.mouse.up()
            page.wait_for_timeout(50)
            assert page.evaluate("() => window.__zoo.awake()") is True
            assert page.evaluate("() => window.__zoo.board()") == first  # only woken
            (ar, ac), (br, bc) = swaps(first, 3)[0]
            (ax, ay), (bx, by) = (page.evaluate("([r, c]) => window.__zoo.cellCenter(r, c)", cell)
                                  for cell in ([ar, ac], [br, bc]))
            page.mouse.move(ax, ay)
            page.mouse.down()
            page.mouse.move(bx, by, steps=4)
            page.mouse.up()
            page.wait_for_function("() => window.__zoo.score() > 0", timeout=15_000)
            again = context.new_page()
            again.goto(server.url + "?seed=3")
            again.wait_for_function("() => window.__zoo && window.__zoo.scene() === 'menu'")
            box = again.evaluate("() => { const r = document.querySelector('canvas')"
                                 ".getBoundingClientRect(); return [r.left, r.width]; }")
            again.mouse.click(box[0] + 360 * k, 760 * k)
            again.wait_for_function("() => window.__zoo.scene() === 'play'")
            assert again.evaluate("() => window.__zoo.board()") == first  # same seed, same deal
            assert not errors, errors
        finally:
            context.close()
