"""``lingxi play``: let an actor play a browser game through ActorView/4."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import click

from lingxi.cli.common import handle_errors, json_option, key_values, print_json
from lingxi.playtest.errors import PlayInputError


def _parse_options(pairs: tuple[str, ...]) -> dict[str, str]:
    return key_values(pairs, "--actor-option", "play.bad_actor_option")


def _run_id(game: str, seed: int) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", game.rstrip("/").split("/")[-1] or "game")[:40]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stem.strip('-') or 'game'}-s{seed}-{stamp}"


def score_line(summary: dict) -> str:
    """The score the actor's actions gained (not what the game scored on its own first)."""
    gained = summary.get("scoreGained")
    if gained is None:
        return "no score reported"
    before = summary.get("scoreBeforeActions")
    page = " (read from the page)" if summary.get("scoreSource") == "page" else ""
    return (f"score {gained:+g} from its actions" + (f" ({before:g} before them)" if before else "")
            + page)


def board_line(summary: dict) -> str:
    """What the run saw of a board, in one line."""
    dims = summary.get("latticeDimensions")
    if not dims:
        return "board: no lattice found"
    size = f"{dims['rows']}×{dims['columns']} lattice"
    if summary.get("swapCandidates"):
        return f"board: {size}, {summary['swapCandidates']} swap candidates"
    return f"board: {size} seen, not a standard Match-3 board (no swap candidates)"


@click.command("play")
@click.argument("game")
@click.option("--actor", "actor_name", required=True,
              help="Who plays: random, greedy-match3, explorer, scripted, human or llm.")
@click.option("--actor-option", "actor_option", multiple=True, metavar="KEY=VALUE",
              help="An option for the actor (repeatable), e.g. script=moves.json, url=…, model=….")
@click.option("--budget", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="Number of actions the actor may take.")
@click.option("--brief", default=None,
              help="What the actor is asked to do: text, or a .json / text file with "
                   "obligations (see docs/playtest.md).")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed for the game (?seed=), Math.random, swap candidate order and the actor.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Bundle folder [default: play-out/<run id>].")
@click.option("--swap-via", type=click.Choice(["auto", "drag", "taps"]), default="auto",
              show_default=True,
              help="How a swap_pair is performed: a drag, two taps, or auto (drag, switching "
                   "method after two swaps the game ignored).")
@click.option("--base", default=None, metavar="PATH",
              help="Serve a game folder under this URL path (e.g. /game/) [default: the base "
                   "its index.html's absolute URLs show, else /].")
@click.option("--check-replay", is_flag=True,
              help="Play a second time with the same seed and say whether the runs were identical.")
@click.option("--overwrite", is_flag=True, help="Replace an earlier bundle in --out.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@json_option
@handle_errors
def play(game: str, actor_name: str, actor_option: tuple[str, ...], budget: int,
         brief: str | None, seed: int, out: Path | None, swap_via: str, base: str | None,
         check_replay: bool,
         overwrite: bool, no_progress: bool, as_json: bool) -> None:
    """Let an actor play GAME (a folder with index.html, an .html file or a URL).

    The game runs in Debian's Chromium at 390×844 under virtual time. Each step
    the actor gets an ActorView/4 (validated) and the frame, and answers one
    selection; the harness executes it and records frames, views, events and an
    HTML report in the bundle folder. Exit 0 when the run completes (or the human
    player quits), 2 for bad input or when the browser, the game or the actor's
    endpoint cannot be used.
    """
    from lingxi.playtest.launch import make_actor
    from lingxi.playtest.launch import play as run_play
    from lingxi.playtest.objectives import load_brief
    from lingxi.playtest.progress import progress_reporter

    options = _parse_options(actor_option)
    the_brief = load_brief(brief)
    run_id = _run_id(game, seed)
    out = out if out is not None else Path("play-out") / run_id
    if actor_name == "human":
        options.setdefault("frame_root", str(out))
    actor = make_actor(actor_name, seed=seed, options=options)
    replay = None
    if check_replay:
        if actor_name == "human":
            raise PlayInputError("play.bad_option", "--check-replay cannot replay a human player")

        def replay() -> object:
            return make_actor(actor_name, seed=seed, options=options)
    try:
        show = not no_progress and not as_json and actor_name != "human"  # human prompts use stderr
        with progress_reporter(budget, enabled=show) as on_step:
            evidence = run_play(game, actor, actor_name=actor_name, actor_options=options,
                                seed=seed, budget=budget, brief=the_brief, out=out,
                                run_id=run_id, swap_via=swap_via, on_step=on_step,
                                overwrite=overwrite, replay_actor=replay, base=base)
    finally:
        actor.close()
    summary = evidence["summary"]
    if as_json:
        print_json({"ok": True, "runId": evidence["runId"], "out": str(out), "summary": summary})
        return
    click.echo(f"run {evidence['runId']}: {summary.get('responses', 0)} of {summary['actions']} "
               f"actions received by the game, " + score_line(summary))
    click.echo(f"actions: {summary['validActions']} valid, {summary['protocolErrors']} "
               "protocol errors")
    click.echo(board_line(summary))
    blocked = (summary.get("blocked") or {}).get("count", 0)
    if blocked:
        click.echo(f"blocked: {blocked} requests or navigations off the machine (see evidence.json)")
    missing = (summary.get("missing") or {}).get("count", 0)
    if missing:
        click.echo(f"missing: {missing} files the game asked for were not found (a build made "
                   "for another base path? see --base and evidence.json summary.missing)")
    if summary.get("cameraScale"):
        click.echo(f"camera: zoomed out to {summary['cameraScale']:.2f} to fit the page")
    verdict = summary.get("replay") or {}
    if verdict.get("checked") or verdict.get("replayable") == "no":
        why = "; ".join(verdict.get("reasons", [])) or "two runs gave identical frames and views"
        click.echo(f"replayable: {verdict['replayable']} ({why})")
    click.echo(f"bundle: {out}  (evidence.json, views.jsonl, report.html, frames/)")


if __name__ == "__main__":  # python -m lingxi.cli.play (used by tests in a fresh process)
    play()
