"""``lingxi play`` input errors: one line, exit 2, JSON with --json, never a traceback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lingxi.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, ["play", *args])


def test_help_lists_the_options():
    result = invoke("--help")
    assert result.exit_code == 0
    for option in ("--actor", "--actor-option", "--budget", "--brief", "--seed", "--out", "--json"):
        assert option in result.output


def test_missing_game(tmp_path):
    result = invoke(str(tmp_path / "nope"), "--actor", "random", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "play.no_game" in result.output and "Traceback" not in result.output


def test_folder_without_index(tmp_path):
    result = invoke(str(tmp_path), "--actor", "random", "--out", str(tmp_path / "o"), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "play.no_index"


def test_unknown_actor_and_bad_option(tmp_path):
    result = invoke(str(tmp_path), "--actor", "chess-master", "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "actor.unknown"
    result = invoke(str(tmp_path), "--actor", "random", "--actor-option", "novalue")
    assert result.exit_code == 2 and "play.bad_actor_option" in result.output


def test_bad_brief_file(tmp_path):
    brief = tmp_path / "brief.json"
    brief.write_text("{not json")
    result = invoke(str(tmp_path), "--actor", "random", "--brief", str(brief))
    assert result.exit_code == 2 and "play.bad_brief" in result.output


def test_out_folder_with_other_files_is_refused(tmp_path):
    game = tmp_path / "game"
    game.mkdir()
    (game / "index.html").write_text("<p>hi</p>")
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    result = invoke(str(game), "--actor", "random", "--out", str(out))
    assert result.exit_code == 2 and "play.out_not_empty" in result.output
    assert (out / "precious.txt").read_text() == "keep me"


def test_budget_must_be_positive(tmp_path):
    result = invoke(str(tmp_path), "--actor", "random", "--budget", "0")
    assert result.exit_code == 2


def test_an_earlier_bundle_is_not_overwritten_silently(tmp_path):
    from lingxi.playtest.launch import prepare_out

    out = tmp_path / "out"
    (out / "frames").mkdir(parents=True)
    (out / "evidence.json").write_text("{}")
    (out / "frames" / "action-1-post.png").write_bytes(b"png")
    game = tmp_path / "game"
    game.mkdir()
    (game / "index.html").write_text("<p>hi</p>")
    result = invoke(str(game), "--actor", "random", "--out", str(out), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "play.out_exists"
    assert (out / "evidence.json").read_text() == "{}"
    prepare_out(out, overwrite=True)  # --overwrite: the old bundle goes
    assert not (out / "evidence.json").exists() and not any((out / "frames").iterdir())


def test_an_html_file_in_a_folder_without_index(tmp_path):
    from lingxi.playtest.launch import resolve_game
    from lingxi.playtest.server import StaticServer

    page = tmp_path / "match3.html"
    page.write_text("<p>game</p>")
    source = resolve_game(str(page))
    assert source.page == "match3.html"
    with StaticServer(source.root, source.page) as server:  # no play.no_index
        assert server.url.endswith("/match3.html")


def test_board_line_tells_a_small_lattice_from_none():
    from lingxi.cli.play import board_line

    assert board_line({"latticeDimensions": None, "swapCandidates": 0}) == "board: no lattice found"
    small = board_line({"latticeDimensions": {"rows": 4, "columns": 3}, "swapCandidates": 0})
    assert small == "board: 4×3 lattice seen, not a standard Match-3 board (no swap candidates)"
    full = board_line({"latticeDimensions": {"rows": 8, "columns": 8}, "swapCandidates": 112})
    assert full == "board: 8×8 lattice, 112 swap candidates"
