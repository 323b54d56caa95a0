"""The play loop: frame -> catalog -> view -> actor -> selection -> action -> evidence.

``PlayRun`` is independent of the browser: it talks to a *driver* (``capture``,
``snapshot``, ``perform``, ``drain_events``, ``virtual_time_ms``) and to an
actor (``select(view, frame_png)``), so it runs in tests against fakes. Every
view is validated against ActorView/4 before the actor sees it; every answer
is validated against actor-selection-v2 and then against the frame (targets,
cells, candidates). A rejected answer becomes a protocol error in the next
view; after two retries the action is spent as ``{"kind": "none"}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from lingxi.actor.contracts import (
    ContractViolation,
    validate_history_entry,
    validate_selection,
    validate_view,
)
from lingxi.actor.vision import share_decoded
from lingxi.canonical import canonical_bytes, canonical_json, sha256_hex
from lingxi.errors import LingxiError
from lingxi.playtest.catalog import Catalog, build_catalog
from lingxi.playtest.errors import PlayError, SelectionRejected
from lingxi.playtest.events import EventLog
from lingxi.playtest.frames import Frame, FrameStore, decode, frame_change
from lingxi.playtest.geometry import Box, Grid
from lingxi.playtest.inputs import InputModels, via
from lingxi.playtest.match3 import candidate_set, is_standard_board, swap_candidates
from lingxi.playtest.motion import Motion, changed_cells, inside, marked_cells, significant
from lingxi.playtest.objectives import Brief, Progress
from lingxi.playtest.pixels import FrameFinder
from lingxi.playtest.selection import normalize
from lingxi.playtest.settle import (
    FrameTest,
    Lead,
    Settled,
    idle_probe,
    no_test,
    read_activity,
    settle,
)
from lingxi.playtest.view import build_view, legal_selections

MAX_ATTEMPTS = 3  # the first answer and at most two retries
HOVER_PROBE_MS = 50
FIXED_BUDGET_MS = 600  # RunConfig(settle=False): the old fixed budget, for benchmarks
PLACEHOLDER_SELECTION = {"type": "wait", "ms": 100,
                         "reason": "placeholder: no schema-valid selection was received; "
                                   "the action was spent as none"}


class PlayerQuit(Exception):
    """The actor (a person) chose to stop: the run ends early, normally."""


class Driver(Protocol):
    """What the loop needs of a browser tab. Optional: ``fit_camera()`` (camera moves),
    ``hover(x, y)`` and ``park()`` (hover probe), ``risks()`` (replay risks),
    ``shown_score()`` (the score the page's markup shows, for games that send none)."""

    virtual_time_ms: int

    def capture(self) -> bytes: ...
    def snapshot(self) -> dict[str, Any]: ...
    def perform(self, action: dict[str, Any], model: str = "mouse") -> int: ...
    def advance(self, ms: int) -> None: ...
    def drain_events(self) -> tuple[list[Any], int]: ...


class Actor(Protocol):
    def select(self, view: dict[str, Any], frame_png: bytes) -> Any: ...


@dataclass
class RunConfig:
    run_id: str
    game_source: str
    game_url: str
    actor_name: str
    seed: int
    budget: int
    brief: Brief
    actor_options: dict[str, str] = field(default_factory=dict)
    swap_via: str = "auto"  # drag | taps | auto (detect the input model, see inputs.py)
    # For benchmarks/play.py only: the loop as it was before settling (a fixed 600 ms after
    # each input, one frame) and before the post frame was reused as the next pre frame.
    settle: bool = True
    reuse_frames: bool = True


@dataclass
class StepInfo:
    """What the progress display gets after each action."""

    index: int
    budget: int
    valid: bool
    score: float | None
    selection_type: str


class PlayRun:
    def __init__(self, driver: Driver, actor: Actor, config: RunConfig, out_dir: Path, *,
                 pixel_finder: FrameFinder | None = None,
                 classify: Callable[[Any, Any], list[int]] | None = None,
                 on_step: Callable[[StepInfo], None] | None = None) -> None:
        self.driver = driver
        self.actor = actor
        self.config = config
        self.out_dir = Path(out_dir)
        self.pixel_finder = pixel_finder
        self.classify = classify
        self.on_step = on_step
        self.frames = FrameStore(self.out_dir)
        self.events = EventLog()
        self.progress = Progress(config.brief)
        self.history: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.views_written = 0
        self.score: float | None = None
        self.score_before: float | None = None  # the game's own score before the first action
        self.score_source: str | None = None  # "bridge" (the game said it) or "page" (markup)
        self.lattice_dims: dict[str, int] | None = None
        self.swap_count = 0
        self.stop_reason = "budget"
        self.initial: Frame | None = None
        self.motion = Motion()
        self.models = InputModels(config.swap_via)
        self.post: Frame | None = None  # the last frame taken; the next action's pre frame
        self.harness_log: list[dict[str, Any]] = []  # every harness step, in order
        self.start_steps: list[dict[str, Any]] = []  # those before the first action
        self.replay: dict[str, Any] | None = None
        self.risks_seen: list[str] | None = None
        self._idle_probed_at = -1
        self._pre_at = -1  # the virtual instant the pre frame was known to show the page at
        self._woken = False  # a first swap woke the game (see _woke); once a run
        self._raw: list[Any] = []  # bridge events drained but not yet recorded
        self._drained_at: int | None = None  # the virtual time of the last drain
        self._dropped = 0
        self.has_hover = False
        self.board_reached_at: int | None = None
        self.responses = 0
        self.scores: list[tuple[int, float]] = []  # (action index, score) when it changed
        self._probed_boards: set[tuple[int, int, int, int]] = set()
        self._checked_entries: set[tuple[str, int]] = set()
        self._checked_candidates: set[str] = set()

    # -- perception -----------------------------------------------------------------------
    def _catalog(self, frame: Frame) -> Catalog:
        finder = self.pixel_finder(frame.png) if self.pixel_finder else None
        return build_catalog(self.driver.snapshot(), finder)

    def _swaps(self, catalog: Catalog, frame: Frame) -> dict[str, Any] | None:
        first = catalog.lattices[0].grid if catalog.lattices else None
        if first is not None and self.swap_count == 0:
            # not (yet) a standard board: say what was seen
            self.lattice_dims = {"rows": first.rows, "columns": first.columns}
        for target in catalog.lattices:
            grid = target.grid
            if grid is not None and is_standard_board(frame.pixels, grid, self.classify):
                self.lattice_dims = {"rows": grid.rows, "columns": grid.columns}
                candidates = swap_candidates(target.id, grid.rows, grid.columns, self.config.seed)
                self.swap_count = len(candidates)
                return candidate_set(candidates)
        return None

    def _drain(self) -> list[Any]:
        """Drain the bridge now (kept for _record_events); returns what arrived. Not read
        again at the virtual instant of the last drain: with the clock paused and no input
        since (every input is followed by a settle), the game has said nothing more."""
        if self.driver.virtual_time_ms == self._drained_at:
            return []
        self._drained_at = self.driver.virtual_time_ms
        raw, dropped = self.driver.drain_events()
        self._raw.extend(raw)
        self._dropped += dropped
        return raw

    def _record_events(self, start_ms: int) -> list[dict[str, Any]]:
        self._drain()
        raw, dropped, self._raw, self._dropped = self._raw, self._dropped, [], 0
        added = self.events.add_bridge_batch(raw, dropped, (start_ms, self.driver.virtual_time_ms))
        for event in added:
            score = event["data"].get("score") if event["source"] == "bridge" else None
            if isinstance(score, int | float) and not isinstance(score, bool):
                self.score = score
                self.score_source = "bridge"
        return added

    def _shown_score(self) -> dict[str, Any] | None:
        """The score the page shows, read after an action when the game never sent one on
        the bridge (a game not written for Lingxi): an observed ``score`` event when it
        changed (the first read included), else None. A game's own word wins: once a bridge
        score arrives the page is not read again."""
        read = getattr(self.driver, "shown_score", None)
        if self.score_source == "bridge" or read is None:
            return None
        found = read()
        if found is None:
            return None
        value, element = found
        if self.score_source == "page" and value == self.score:
            return None
        self.score, self.score_source = value, "page"
        return self.events.add_observed("score", self.driver.virtual_time_ms,
                                        {"score": value, "element": element})

    def _validate(self, view: dict[str, Any]) -> None:
        """Validate ``view`` against ActorView/4.

        Equivalent to ``validate_view(view)``: the view is checked with an empty
        history, and each history entry (immutable once made) is checked once
        against ``#/$defs/historyEntry`` the first time it appears; the same for
        an identical swap-candidate set (the schema checks it independently of
        the rest of the view).
        """
        history = view["history"]
        if len(history) > 64:
            raise ContractViolation("view.invalid", "history holds more than 64 entries",
                                    path="$.history")
        candidates = view["interactionCandidates"]
        key = sha256_hex(canonical_bytes(candidates)) if candidates is not None else None
        if key is not None and key in self._checked_candidates:
            validate_view({**view, "history": [], "interactionCandidates": None})
        else:
            validate_view({**view, "history": []})
            if key is not None:
                self._checked_candidates.add(key)
        for index, entry in enumerate(history):
            entry_key = (entry["actionId"], len(entry["gameEvents"]))
            if entry_key in self._checked_entries:
                continue
            try:
                validate_history_entry(entry)
            except ContractViolation as error:
                error.path = f"$.history[{index}]{(error.path or '$')[1:]}"
                raise
            self._checked_entries.add(entry_key)

    # -- one action -----------------------------------------------------------------------
    def _ask(self, view_args: dict[str, Any], frame: Frame, catalog: Catalog,
             swaps: dict[str, Any] | None):
        attempts: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        schema_valid: dict[str, Any] | None = None
        by_id = {c["candidateId"]: c for c in swaps["candidates"]} if swaps else None
        legal = legal_selections(swaps is not None)["types"]
        unreachable = 0
        with (self.out_dir / "views.jsonl").open("a", encoding="utf-8") as views:
            for _ in range(MAX_ATTEMPTS):
                view = build_view(protocol_errors=list(errors), **view_args)
                try:
                    self._validate(view)
                except ContractViolation as error:
                    raise PlayError("play.internal_view_invalid",
                                    f"the harness built an invalid view: {error}") from error
                text = canonical_json(view)
                views.write(text + "\n")
                self.views_written += 1
                share_decoded(frame.png, frame.pixels)  # an actor's vision need not decode it
                try:
                    # the actor gets its own copy: nothing it does to it reaches the record
                    selection = self.actor.select(json.loads(text), frame.png)
                except LingxiError as error:
                    if error.code == "actor.human_quit":
                        raise PlayerQuit(error.message) from error
                    err = {"code": error.code, "message": _short(error.message or error.code)}
                    attempts.append({"selection": None, "error": err})
                    errors.append(err)
                    if error.code == "actor.llm_http" and "status" not in error.details:
                        unreachable += 1
                    continue
                except Exception as error:  # an actor bug must not end the run
                    err = {"code": "actor.error",
                           "message": _short(f"{type(error).__name__}: {error}")}
                    attempts.append({"selection": None, "error": err})
                    errors.append(err)
                    continue
                try:
                    validate_selection(selection)
                    selection = _jsonable(selection)
                    schema_valid = selection
                    action = normalize(selection, catalog, legal_types=legal, candidates=by_id,
                                       swap_via=via(self.models.order()[0]))
                except ContractViolation as error:
                    err = {"code": "selection.invalid",
                           "message": _short(f"{error.path or '$'}: {error.message}")}
                except SelectionRejected as error:
                    err = {"code": error.code, "message": _short(error.message)}
                else:
                    attempts.append({"selection": _jsonable(selection), "error": None})
                    return selection, action, attempts, errors
                attempts.append({"selection": _jsonable(selection), "error": err})
                errors.append(err)
        if unreachable == MAX_ATTEMPTS:  # nobody to ask: stop instead of playing nothing
            raise PlayError("play.actor_unreachable",
                            f"the actor's endpoint cannot be reached: {errors[-1]['message']}")
        reason = errors[-1]["message"] if errors else "no selection"
        return schema_valid, {"kind": "none", "reason": reason[:500]}, attempts, errors

    def _step(self, harness: list[dict[str, Any]], step: dict[str, Any]) -> None:
        harness.append(step)
        self.harness_log.append(step)

    def _settle(self, first: bytes | None = None, decided: FrameTest = no_test,
                lead: Lead | None = None) -> Settled:
        """Settle after an input; ``decided`` is what the caller looks for in the frames
        (``settled.decided``: some frame taken showed it; ``lead``: a wait's frame and
        activity from before it; see settle.settle)."""
        if not self.config.settle:
            self.driver.advance(FIXED_BUDGET_MS)
            png = self.driver.capture()
            pixels = decode(png)
            return Settled(png, FIXED_BUDGET_MS, False, [pixels], decided(pixels))
        return settle(self.driver, self.motion, first=first, decided=decided, lead=lead)

    def _lead(self, action: dict[str, Any], pre: Frame) -> Lead | None:
        """For a wait whose pre frame shows the page now (taken at this virtual instant, no
        input since: every input is followed by a settle whose last frame is the next pre),
        that frame and the page's activity now: the wait is then the settle's first chunk."""
        if (action["kind"] != "wait" or not self.config.settle
                or self._pre_at != self.driver.virtual_time_ms):
            return None
        return pre.png, read_activity(self.driver)

    def _probe_board(self, index: int, catalog: Catalog, harness: list[dict[str, Any]]) -> bool:
        """When a board is first seen: learn what moves on its own and whether hovering a
        cell changes it. True when probes ran (the pre frame must then be taken again)."""
        grid = catalog.lattices[0].grid if catalog.lattices else None
        if grid is None:
            return False
        key = (round(grid.x), round(grid.y), grid.rows, grid.columns)
        if key in self._probed_boards:
            return False
        self._probed_boards.add(key)
        if self.driver.virtual_time_ms != self._idle_probed_at:  # the board is new since then
            self._drain()
            step = idle_probe(self.driver, self.motion)
            raw = self._drain()
            self.motion.idle_event_types.update(_event_types(raw))
            step["idleEventTypes"] = sorted(self.motion.idle_event_types)
            self._step(harness, step)
            self._idle_probed_at = self.driver.virtual_time_ms
        hover, park = getattr(self.driver, "hover", None), getattr(self.driver, "park", None)
        if hover is not None and park is not None:
            before = decode(self.driver.capture())
            x, y = grid.cell_box((grid.rows + 1) // 2, (grid.columns + 1) // 2).anchor()
            hover(x, y)
            self.driver.advance(HOVER_PROBE_MS)
            during = decode(self.driver.capture())
            park()
            self.driver.advance(HOVER_PROBE_MS)
            changed = self.motion.changes(before, during)
            effect = significant(changed)
            self.has_hover = self.has_hover or effect
            self._step(harness, {"kind": "hover_probe", "at": {"x": x, "y": y},
                                 "changedFraction": round(float(changed.mean()), 4),
                                 "hoverEffect": effect})
        return True

    def _pre(self, index: int) -> tuple[Frame, Catalog, dict[str, Any] | None, list]:
        harness: list[dict[str, Any]] = []
        pre = self.post if self.config.reuse_frames else None
        if pre is None:
            pre = self.frames.save(f"frames/action-{index}-pre.png", self.driver.capture())
        catalog = self._catalog(pre)
        swaps = self._swaps(catalog, pre)
        if swaps is not None and self._probe_board(index, catalog, harness):
            settled = self._settle()
            pre = self.frames.save(f"frames/action-{index}-pre.png", settled.png)
            catalog = self._catalog(pre)
            swaps = self._swaps(catalog, pre)
        if swaps is not None and self.board_reached_at is None:
            self.board_reached_at = index
        self._pre_at = self.driver.virtual_time_ms
        return pre, catalog, swaps, harness

    def _responds(self, pre: np.ndarray, point: tuple[int, int] | None,
                  catalog: Catalog) -> FrameTest:
        """The test of a frame for a response to an input: it differs from ``pre`` beyond
        idle motion and hover."""
        hover_box = _box_at(catalog, point) if (self.has_hover and point is not None) else None

        def test(frame: np.ndarray) -> bool:
            diff = self.motion.changes(pre, frame)
            return significant(diff) and not (hover_box is not None and inside(diff, hover_box))
        return test

    def _shows_swap(self, pre: np.ndarray, grid: Grid,
                    cells: tuple[tuple[int, int], tuple[int, int]]) -> FrameTest:
        """The test of a frame for a received swap: both of its cells or three or more cells
        of the board changed (a hover or a selection changes one)."""
        def test(frame: np.ndarray) -> bool:
            changed = changed_cells(self.motion.changes(pre, frame), grid)
            return set(cells) <= changed or len(changed) >= 3
        return test

    def _answered(self, raw: list[Any]) -> bool:
        """The game's own word that it took a swap: a ``score`` field that moved in its bridge
        events (the move counted even if the board showed nothing while the harness looked),
        so a received verdict never rests on a frame diff alone."""
        last = self.score
        for item in raw:
            try:
                event = json.loads(item[1])
            except (TypeError, ValueError, IndexError):
                continue
            score = event.get("score") if isinstance(event, dict) else None
            if isinstance(score, int | float) and not isinstance(score, bool) and score != last:
                return True
        return False

    def _swap_cells(self, selection, swaps, catalog):
        candidate = next(c for c in swaps["candidates"]
                         if c["candidateId"] == selection["candidateId"])
        grid = catalog.by_id[candidate["latticeId"]].grid
        a, b = ((e["cell"]["row"], e["cell"]["column"]) for e in candidate["pair"])
        return grid, (a, b)

    def _execute(self, action: dict[str, Any], selection: dict[str, Any] | None, pre: Frame,
                 catalog: Catalog, swaps: dict[str, Any] | None,
                 harness: list[dict[str, Any]]) -> tuple[dict[str, Any], Settled, int, bool, str]:
        """Deliver ``action`` (a swap with each input model until the game receives it),
        settle; returns (action as performed, settled, virtual ms, responded, model)."""
        if action["kind"] != "swap":
            model = self.models.pointer()
            lead = self._lead(action, pre)
            spent = self.driver.perform(action, model)
            responds = self._responds(pre.pixels, _last_point(action), catalog)
            settled = self._settle(decided=responds, lead=lead)
            responded = settled.decided
            responded = responded or bool(_event_types(self._drain()) - self.motion.idle_event_types)
            if (not responded and action["kind"] == "tap" and model == "mouse"
                    and self.models.confirmed is None and self.models.swap_via == "auto"):
                # a start button that only listens for touches: try a touch tap once
                self._step(harness, {"kind": "input_probe", "model": "mouse", "received": False,
                                     "virtualTimeMs": spent + settled.spent_ms})
                spent += settled.spent_ms + self.driver.perform(action, "touch")
                settled = self._settle(decided=responds)
                responded = settled.decided
                if responded:
                    self.models.received("touch")
                model = "touch"
            return action, settled, spent + settled.spent_ms, responded, model
        grid, cells = self._swap_cells(selection, swaps, catalog)
        order = self.models.order()
        total = 0
        base = pre.pixels  # what a try is compared with (the frame after a wake, see below)
        queue = list(order)
        attempt = -1
        while queue:
            model = queue.pop(0)
            attempt += 1
            performed = {**action, "via": via(model)}
            self.models.tried(model)
            spent = self.driver.perform(performed, model)
            settled = self._settle(decided=self._shows_swap(base, grid, cells))
            total += spent + settled.spent_ms
            raw = self._drain()
            received = settled.decided or self._answered(raw)
            if received:
                self.models.received(model)
                if attempt:
                    self._step(harness, {"kind": "input_probe", "model": model, "received": True,
                                         "virtualTimeMs": spent + settled.spent_ms})
                return performed, settled, total, True, model
            probe = {"kind": "input_probe", "model": model, "received": False,
                     "virtualTimeMs": spent + settled.spent_ms}
            if self._woke(base, settled, raw, grid):
                # The game answered the press with something other than the swap (a "tap to
                # begin" went away, it said so on the bridge): many games take their first
                # click into the canvas to unlock audio, focus or start, and swallow it. The
                # same model is tried once more, compared with the frame after that answer.
                self._woken = True
                probe["woke"] = True
                queue.insert(0, model)
                base = settled.pixels
                self._step(harness, probe)
                continue
            self._step(harness, probe)
            cleanup = self._deselect(pre, settled, grid, model, harness)
            if cleanup is not None:
                total += cleanup.spent_ms
                settled = cleanup
        self.models.missed()
        return performed, settled, total, False, model

    def _woke(self, base: np.ndarray, settled: Settled, raw: list[Any], grid: Grid) -> bool:
        """True when an unreceived swap still drew an answer from the game before any swap
        was ever received: a bridge event of a type it does not emit on its own, or a
        significant change not confined to the board (a "tap to begin" went away; a change
        inside the board is a selection or a hover, which the model's own retries handle).
        The game took the press as its wake-up. Once a run."""
        if self._woken or self.models.ever:
            return False
        if _event_types(raw) - self.motion.idle_event_types:
            return True
        seen: set[int] = set()
        for frame in settled.frames:
            if id(frame) in seen:
                continue
            seen.add(id(frame))
            diff = self.motion.changes(base, frame)
            if significant(diff) and not inside(diff, grid.box):
                return True
        return False

    def _deselect(self, pre: Frame, settled: Settled, grid: Grid, model: str,
                  harness: list[dict[str, Any]]) -> Settled | None:
        """An unreceived swap may leave one cell selected, which would knock the next
        two-tap swap out of step: tap that cell again once (recorded). A drag on a game
        that takes clicks leaves the cell it ended on selected (the press and the release
        on one canvas make a click there)."""
        cells = marked_cells(self.motion.changes(pre.pixels, settled.pixels), grid)
        if len(cells) != 1:
            return None
        row, column = next(iter(cells))
        x, y = grid.cell_box(row, column).anchor()
        spent = self.driver.perform({"kind": "tap", "x": x, "y": y},
                                    "touch" if model.startswith("touch") else "mouse")
        after = self._settle()
        left = marked_cells(self.motion.changes(pre.pixels, after.pixels), grid)
        self._step(harness, {"kind": "deselect", "cell": {"row": row, "column": column},
                             "cleared": not left, "virtualTimeMs": spent + after.spent_ms})
        after.spent_ms += spent
        return after

    def _act(self, index: int) -> None:
        cfg = self.config
        pre, catalog, swaps, harness = self._pre(index)
        view_args = {
            "brief": cfg.brief.text, "frame_ref": pre.ref, "frame_hash": pre.sha256,
            "catalog": catalog.view(pre.ref, pre.sha256), "history": self.history,
            "remaining_budget": cfg.budget - index + 1,
            "virtual_time_ms": self.driver.virtual_time_ms,
            "objective_progress": self.progress.view(), "swaps": swaps,
        }
        selection, action, attempts, errors = self._ask(view_args, pre, catalog, swaps)
        valid = action["kind"] != "none"
        pre_seq = self.events.last_seq
        start = self.driver.virtual_time_ms
        model = None
        if valid:
            action, settled, budget_ms, responded, model = self._execute(
                action, selection, pre, catalog, swaps, harness)
            png = settled.png
        else:
            budget_ms, responded, png = 0, False, pre.png
        fit = getattr(self.driver, "fit_camera", None)
        move = fit() if fit is not None else None
        if move is not None:
            self._step(harness, move)
            after = self._settle()
            budget_ms += after.spent_ms
            png = after.png
        bridge = self._record_events(start)
        before = self.score
        shown = self._shown_score()
        post = self.frames.save(f"frames/action-{index}-post.png", png)
        self.post = post
        change = frame_change(pre.pixels, post.pixels)
        new_events = list(bridge)
        if shown is not None:
            new_events.append(shown)
        if change is not None:
            new_events.append(self.events.add_observed("frame_changed",
                                                       self.driver.virtual_time_ms, change))
        self.progress.observe(new_events)
        answered = any(e["source"] == "bridge" and e["type"] not in self.motion.idle_event_types
                       for e in bridge)
        # the score the page shows moved inside the action: the game executed it (issue 24.3)
        scored = shown is not None and before is not None
        causal = valid and (responded or scored if action["kind"] == "swap"
                            else (responded or answered or scored))
        self.responses += causal
        entry = {
            "actionId": f"action-{index}",
            "selection": selection if selection is not None else PLACEHOLDER_SELECTION,
            "normalized": action, "valid": valid, "retryCount": len(attempts) - 1,
            "preFrameRef": pre.ref, "preFrameHash": pre.sha256, "preEventSeq": pre_seq,
            "virtualTimeBudgetMs": budget_ms,
            "postFrameRef": post.ref, "postFrameHash": post.sha256,
            "postEventSeq": self.events.last_seq, "causalGameResponse": causal,
            "gameEvents": new_events,
            "protocolErrors": [f"{e['code']}: {e['message']}" for e in errors],
        }
        self.history.append(entry)
        self.history = self.history[-64:]
        step = {
            "actionId": entry["actionId"], "attempts": attempts, "selection": selection,
            "normalized": action, "valid": valid, "retryCount": entry["retryCount"],
            "preFrameRef": pre.ref, "preFrameHash": pre.sha256, "postFrameRef": post.ref,
            "postFrameHash": post.sha256, "virtualTimeBudgetMs": budget_ms,
            "virtualTimeMs": self.driver.virtual_time_ms, "causalGameResponse": causal,
            "gameEvents": new_events, "targetSetHash": catalog.target_set_hash,
            "targets": catalog.evidence(), "harnessSteps": harness,
        }
        if model is not None:
            step["inputModel"] = model
        if action["kind"] == "swap" and selection is not None and swaps is not None:
            _, cells = self._swap_cells(selection, swaps, catalog)
            step["swapCells"] = [{"row": r, "column": c} for r, c in cells]
        if self.score is not None and (not self.scores or self.scores[-1][1] != self.score):
            self.scores.append((index, self.score))
        self.steps.append(step)
        if self.on_step:
            kind = selection["type"] if valid and selection else "none"
            self.on_step(StepInfo(index, cfg.budget, valid, self.score, kind))

    def _start(self) -> None:
        """Before the first view: fit the camera, let the page settle, learn idle motion."""
        fit = getattr(self.driver, "fit_camera", None)
        move = fit() if fit is not None else None
        if move is not None:
            self._step(self.start_steps, move)
        settled = self._settle()
        self._step(self.start_steps, {"kind": "settle", "virtualTimeMs": settled.spent_ms,
                                      "bounded": settled.bounded})
        self._drain()  # what the game said while loading is not idle chatter
        loaded = self.driver.virtual_time_ms
        self.progress.observe(self._record_events(0))
        step = idle_probe(self.driver, self.motion)
        self.motion.idle_event_types.update(_event_types(self._drain()))
        step["idleEventTypes"] = sorted(self.motion.idle_event_types)
        self._step(self.start_steps, step)
        self._idle_probed_at = self.driver.virtual_time_ms
        self.progress.observe(self._record_events(loaded))
        shown = self._shown_score()
        if shown is not None:
            self.progress.observe([shown])
        self.initial = self.frames.save("frames/frame-initial.png", self.driver.capture())
        self.post = self.initial
        self.score_before = self.score

    def score_gained(self) -> float | None:
        """What the actor's actions added to the score (a cascade during loading is not theirs)."""
        if self.score is None:
            return None
        return self.score - (self.score_before or 0)

    def _risks(self) -> list[str]:
        if self.risks_seen is None:
            risks = getattr(self.driver, "risks", None)
            self.risks_seen = list(risks()) if risks is not None else []
        return self.risks_seen

    def replay_verdict(self) -> dict[str, Any]:
        """Whether this run can be replayed: checked against a second run when one was made
        (``self.replay``), otherwise the non-determinism sources the page was seen using."""
        reasons = self._risks()
        if self.replay is not None:
            out = dict(self.replay)
            out["reasons"] = sorted(set(out.get("reasons", [])) | set(reasons))
            return out
        return {"replayable": "no" if reasons else "unknown", "reasons": reasons, "checked": False}

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Play the whole budget; returns the evidence document (also written to disk)."""
        from lingxi.playtest.evidence import write_bundle

        (self.out_dir / "views.jsonl").write_text("", encoding="utf-8")
        try:
            self._start()
            for index in range(1, self.config.budget + 1):
                self._act(index)
            self._risks()
        except PlayError as error:
            self.stop_reason = f"error: {error.code}"
            write_bundle(self)
            raise
        except PlayerQuit:
            self.stop_reason = "quit"
            self._risks()
        except KeyboardInterrupt:
            self.stop_reason = "interrupted"
            write_bundle(self)
            raise
        return write_bundle(self)


MAX_RECORDED_ANSWER = 16_384  # bytes of an actor's answer kept in evidence
MAX_ERROR_MESSAGE = 300  # characters of a protocol error message shown to the actor


def _event_types(raw: list[Any]) -> set[str]:
    """The ``type`` of each raw bridge event (``[time, json]`` pairs), where readable."""
    out = set()
    for item in raw:
        try:
            event = json.loads(item[1])
            kind = event.get("type") if isinstance(event, dict) else None
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        out.add(str(kind)[:64] if kind is not None else "event")
    return out


def _last_point(action: dict[str, Any]) -> tuple[int, int] | None:
    """Where the pointer was last during ``action`` (hover effects would sit there)."""
    if action["kind"] == "tap":
        return action["x"], action["y"]
    if action["kind"] == "drag":
        return action["path"][-1]["x"], action["path"][-1]["y"]
    if action["kind"] == "swap":
        return action["to"]["x"], action["to"]["y"]
    return None


def _box_at(catalog: Catalog, point: tuple[int, int]) -> Box | None:
    """The lattice cell or region under ``point`` (the extent of a hover effect there)."""
    x, y = point
    for target in catalog.targets:
        if target.kind == "spatial_grid" or not target.box.contains_point(x, y):
            continue
        if target.grid is None:
            return target.box
        grid = target.grid
        column = int((x - grid.x) // grid.cell_width) + 1
        row = int((y - grid.y) // grid.cell_height) + 1
        if grid.has_cell(row, column):
            return grid.cell_box(row, column)
    return None


def _jsonable(value: Any) -> Any:
    """``value`` if it survives a JSON round trip (actors may return anything), else its repr;
    an oversized answer is replaced by a note saying how big it was."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:1000]
    if len(text) > MAX_RECORDED_ANSWER:
        return f"<answer of {len(text)} bytes, not recorded>"
    return json.loads(text)


def _short(message: str) -> str:
    return message if len(message) <= MAX_ERROR_MESSAGE else message[:MAX_ERROR_MESSAGE - 1] + "…"
