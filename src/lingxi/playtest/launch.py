"""Set up and run one play: resolve the game, start server and browser, build the actor.

This is the I/O shell around :class:`lingxi.playtest.runner.PlayRun` that the
``lingxi play`` command and the benchmarks call.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lingxi.playtest.errors import PlayInputError
from lingxi.playtest.objectives import Brief
from lingxi.playtest.runner import PlayRun, RunConfig, StepInfo

BUNDLE_FILES = ("evidence.json", "views.jsonl", "report.html")


@dataclass(frozen=True)
class GameSource:
    source: str  # what the user gave
    root: Path | None  # folder to serve, for a local game
    page: str  # path under root (local) or the full URL
    base: str = "/"  # the URL path the folder is served under (local games)


_ABSOLUTE_REF = re.compile(r"""\b(?:src|href)\s*=\s*["']?(/[^/"'\s>?#][^"'\s>?#]*)""",
                           re.IGNORECASE)
MAX_BASE_DEPTH = 3


def detect_base(root: Path, page: str) -> str:
    """The base path a build was made for, read from the absolute URLs its page asks for.

    A Vite/webpack build for ``/game/`` writes ``<script src="/game/assets/index-….js">``;
    served at ``/`` that is a 404. Each absolute ``src``/``href`` votes for the prefix that,
    removed, names a file of the folder (``/`` when the path names one as it is); the prefix
    with most votes wins, ``/`` when none names a file.
    """
    try:
        html = (root / page).read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return "/"
    votes: dict[str, int] = {}
    for ref in _ABSOLUTE_REF.findall(html):
        parts = [p for p in ref.split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            continue
        for depth in range(0, min(MAX_BASE_DEPTH, len(parts) - 1) + 1):
            if (root.joinpath(*parts[depth:])).is_file():
                base = "/" + "".join(p + "/" for p in parts[:depth])
                votes[base] = votes.get(base, 0) + 1
                break
    if not votes:
        return "/"
    return max(sorted(votes, key=len), key=lambda b: votes[b])


def make_actor(name: str, *, seed: int, options: dict[str, str]) -> Any:
    """An actor from lingxi.actor's registry (so the CLI needs only this layer)."""
    from lingxi.actor.actors import create_actor

    return create_actor(name, seed=seed, options=options)


def with_seed(url: str, seed: int) -> str:
    """``url`` with ``seed=<seed>`` added to its query unless it already has one."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(key == "seed" for key, _ in query):
        query.append(("seed", str(seed)))
    return urlunsplit(parts._replace(query=urlencode(query)))


def resolve_game(game: str, base: str | None = None) -> GameSource:
    """A game folder (with index.html), an .html file, or an http(s) URL. A local game is
    served under ``base`` (``--base``), or the base its page's absolute URLs show."""
    from lingxi.playtest.server import normalize_base

    if re.match(r"^https?://", game, re.IGNORECASE):
        if base is not None:
            raise PlayInputError("play.bad_option",
                                 "--base is for a game folder or file; a URL has its own path")
        return GameSource(game, None, game)
    path = Path(game).expanduser()
    if path.is_dir():
        if not (path / "index.html").is_file():
            raise PlayInputError("play.no_index", f"{path} has no index.html")
        root, page = path.resolve(), "index.html"
    elif path.is_file() and path.suffix.lower() in (".html", ".htm"):
        root, page = path.resolve().parent, path.name
    else:
        raise PlayInputError("play.no_game",
                             f"{game} is not a game folder, an .html file or an http(s) URL")
    chosen = normalize_base(base) if base is not None else detect_base(root, page)
    return GameSource(game, root, page, chosen)


def prepare_out(out: Path, *, overwrite: bool = False) -> Path:
    """Create ``out``; a non-empty folder is refused, except a previous play bundle when
    ``overwrite`` is set (then that bundle is replaced)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise PlayInputError("play.out_not_dir", f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        names = {p.name for p in out.iterdir()}
        if not names & set(BUNDLE_FILES):
            raise PlayInputError("play.out_not_empty",
                                 f"{out} is not empty and holds no play bundle; choose another --out")
        if not overwrite:
            raise PlayInputError("play.out_exists",
                                 f"{out} holds an earlier play bundle; pass --overwrite to replace "
                                 "it, or choose another --out")
        for name in BUNDLE_FILES:
            (out / name).unlink(missing_ok=True)
        frames = out / "frames"
        if frames.is_dir():
            for png in frames.glob("*.png"):
                png.unlink()
    out.mkdir(parents=True, exist_ok=True)
    return out


def play(game: str, actor: Any, *, actor_name: str, actor_options: dict[str, str], seed: int,
         budget: int, brief: Brief, out: Path, run_id: str, swap_via: str = "auto",
         on_step: Callable[[StepInfo], None] | None = None,
         browser: Any = None, overwrite: bool = False,
         replay_actor: Callable[[], Any] | None = None,
         init_scripts: tuple[str, ...] = (), settle: bool = True,
         reuse_frames: bool = True, base: str | None = None) -> dict[str, Any]:
    """Play ``game`` with ``actor`` for ``budget`` actions; returns the evidence document.

    ``browser`` (a :class:`lingxi.playtest.browser.Browser`) is reused when given,
    so several runs can share one Chromium; otherwise one is started and closed.
    ``replay_actor`` (a factory for a fresh, identically seeded actor) asks for a
    replay check: the run is made a second time and compared frame by frame, view
    by view; the verdict goes into ``summary.replay``. ``init_scripts`` run in the
    page before its own scripts (test instrumentation, e.g. to report a score the
    game only draws). ``base`` serves a local game under that URL path (default: the base
    its page's absolute URLs show, see :func:`detect_base`).
    """
    from lingxi.playtest.browser import Browser
    from lingxi.playtest.pixels import vision_finder, vision_kinds
    from lingxi.playtest.server import StaticServer

    source = resolve_game(game, base)
    out = prepare_out(out, overwrite=overwrite)
    server = (StaticServer(source.root, source.page, source.base)
              if source.root is not None else None)
    try:
        url = server.url if server else source.page
        url = with_seed(url, seed)
        own = browser is None
        if own:
            browser = Browser()
        try:
            config = RunConfig(run_id=run_id, game_source=source.source, game_url=url,
                               actor_name=actor_name, actor_options=dict(actor_options),
                               seed=seed, budget=budget, brief=brief, swap_via=swap_via,
                               settle=settle, reuse_frames=reuse_frames)

            def one(who: Any, folder: Path, steps: Callable[[StepInfo], None] | None) -> PlayRun:
                page = browser.open(url, seed=seed, init_scripts=init_scripts)
                try:
                    run = PlayRun(page, who, config, folder, pixel_finder=vision_finder(),
                                  classify=vision_kinds(), on_step=steps)
                    run.run()
                    return run
                finally:
                    page.close()

            first = one(actor, out, on_step)
            if replay_actor is not None:
                with tempfile.TemporaryDirectory(prefix="lingxi-replay-") as folder:
                    again = replay_actor()
                    try:
                        second = one(again, Path(folder), None)
                    finally:
                        close = getattr(again, "close", None)
                        if close is not None:
                            close()
                    first.replay = compare_runs(first, second)
            from lingxi.playtest.evidence import write_bundle

            return write_bundle(first)
        finally:
            if own:
                browser.close()
    finally:
        if server is not None:
            server.close()


def compare_runs(first: PlayRun, second: PlayRun) -> dict[str, Any]:
    """The replay verdict of two runs with the same game, actor and seed."""
    reasons: list[str] = []
    divergence = None
    for a, b in zip(first.frames.index, second.frames.index, strict=False):
        if a != b:
            divergence = a["ref"]
            reasons.append(f"{a['ref']} differs between two runs with the same seed")
            break
    if divergence is None and len(first.frames.index) != len(second.frames.index):
        divergence = "frames"
        reasons.append("the two runs took different numbers of frames")
    if divergence is None:
        views = [(r.out_dir / "views.jsonl").read_bytes().splitlines() for r in (first, second)]
        for number, (a, b) in enumerate(zip(*views, strict=False), start=1):
            if a != b:
                where = first_difference(json.loads(a), json.loads(b))
                divergence = f"views.jsonl line {number} at {where}"
                reasons.append(f"view {number} differs between the two runs, first at {where}")
                break
    if divergence is None:
        events = [[(e["type"], e["virtualTimeMs"], e["data"]) for e in r.events.events]
                  for r in (first, second)]
        if events[0] != events[1]:
            index = next((i for i, (a, b) in enumerate(zip(*events, strict=False)) if a != b),
                         min(len(events[0]), len(events[1])))
            divergence = f"events #{index + 1}"
            reasons.append(f"the game's events differ between the two runs from event "
                           f"#{index + 1} ({_event_text(events[0], index)} vs "
                           f"{_event_text(events[1], index)})")
    if first.stop_reason != second.stop_reason:
        reasons.append(f"the runs stopped differently ({first.stop_reason} / {second.stop_reason})")
        divergence = divergence or "stopReason"
    return {"replayable": "no" if divergence else "yes", "reasons": reasons, "checked": True,
            "firstDivergence": divergence}


def first_difference(a: Any, b: Any, path: str = "$") -> str:
    """The JSON path where two documents first differ (depth first, keys in order)."""
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{path}.{key}")
        return path
    if isinstance(a, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return first_difference(x, y, f"{path}[{index}]")
        return f"{path}[{min(len(a), len(b))}]" if len(a) != len(b) else path
    return path


def _event_text(events: list[Any], index: int) -> str:
    """One event as ``type @ t ms`` for a replay reason (harness-made text: type is cut)."""
    if index >= len(events):
        return "none"
    kind, when, _ = events[index]
    return f"{str(kind)[:64]!r} at {when} ms"
