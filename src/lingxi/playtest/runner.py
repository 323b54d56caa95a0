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

from lingxi.actor.contracts import (
    ContractViolation,
    validate_history_entry,
    validate_selection,
    validate_view,
)
from lingxi.canonical import canonical_bytes, canonical_json, sha256_hex
from lingxi.errors import LingxiError
from lingxi.playtest.catalog import Catalog, build_catalog
from lingxi.playtest.errors import PlayError, SelectionRejected
from lingxi.playtest.events import EventLog
from lingxi.playtest.frames import Frame, FrameStore, frame_change
from lingxi.playtest.match3 import candidate_set, is_standard_board, swap_candidates
from lingxi.playtest.objectives import Brief, Progress
from lingxi.playtest.pixels import FrameFinder
from lingxi.playtest.selection import normalize
from lingxi.playtest.view import build_view, legal_selections

MAX_ATTEMPTS = 3  # the first answer and at most two retries
SWAP_METHODS = ("drag", "taps")
SILENT_SWAPS_BEFORE_SWITCH = 2
PLACEHOLDER_SELECTION = {"type": "wait", "ms": 100,
                         "reason": "placeholder: no schema-valid selection was received; "
                                   "the action was spent as none"}


class Driver(Protocol):
    virtual_time_ms: int

    def capture(self) -> bytes: ...
    def snapshot(self) -> dict[str, Any]: ...
    def perform(self, action: dict[str, Any]) -> int: ...
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
    swap_via: str = "auto"  # drag | taps | auto (start with drag, switch after silent swaps)


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
        self.lattice_dims: dict[str, int] | None = None
        self.swap_count = 0
        self.stop_reason = "budget"
        self.initial: Frame | None = None
        self._checked_entries: set[tuple[str, int]] = set()
        self._checked_candidates: set[str] = set()
        self._swap_method = 0
        self._silent_swaps = 0

    # -- perception -----------------------------------------------------------------------
    def _catalog(self, frame: Frame) -> Catalog:
        finder = self.pixel_finder(frame.png) if self.pixel_finder else None
        return build_catalog(self.driver.snapshot(), finder)

    def _swaps(self, catalog: Catalog, frame: Frame) -> dict[str, Any] | None:
        for target in catalog.lattices:
            if is_standard_board(frame.pixels, target.grid, self.classify):
                grid = target.grid
                if self.lattice_dims is None:
                    self.lattice_dims = {"rows": grid.rows, "columns": grid.columns}
                candidates = swap_candidates(target.id, grid.rows, grid.columns, self.config.seed)
                self.swap_count = len(candidates)
                return candidate_set(candidates)
        return None

    def _record_events(self, start_ms: int) -> list[dict[str, Any]]:
        raw, dropped = self.driver.drain_events()
        added = self.events.add_bridge_batch(raw, dropped, (start_ms, self.driver.virtual_time_ms))
        for event in added:
            score = event["data"].get("score") if event["source"] == "bridge" else None
            if isinstance(score, int | float) and not isinstance(score, bool):
                self.score = score
        return added

    def _swap_via(self) -> str:
        if self.config.swap_via != "auto":
            return self.config.swap_via
        return SWAP_METHODS[self._swap_method]

    def _note_swap(self, action: dict[str, Any], responded: bool) -> None:
        """In auto mode, switch between drag and taps after swaps the game ignored.

        Games differ: some swap on a drag, some on two taps, some on both. An
        invalid swap also looks silent once it is reverted, so the method only
        changes after SILENT_SWAPS_BEFORE_SWITCH silent swaps in a row.
        """
        if self.config.swap_via != "auto" or action["kind"] != "swap":
            return
        self._silent_swaps = 0 if responded else self._silent_swaps + 1
        if self._silent_swaps >= SILENT_SWAPS_BEFORE_SWITCH:
            self._swap_method = 1 - self._swap_method
            self._silent_swaps = 0

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
            key = (entry["actionId"], len(entry["gameEvents"]))
            if key in self._checked_entries:
                continue
            try:
                validate_history_entry(entry)
            except ContractViolation as error:
                error.path = f"$.history[{index}]{(error.path or '$')[1:]}"
                raise
            self._checked_entries.add(key)

    # -- one action -----------------------------------------------------------------------
    def _ask(self, view_args: dict[str, Any], frame: Frame, catalog: Catalog,
             swaps: dict[str, Any] | None):
        attempts: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        schema_valid: dict[str, Any] | None = None
        by_id = {c["candidateId"]: c for c in swaps["candidates"]} if swaps else None
        legal = legal_selections(swaps is not None)["types"]
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
                try:
                    # the actor gets its own copy: nothing it does to it reaches the record
                    selection = self.actor.select(json.loads(text), frame.png)
                except LingxiError as error:
                    err = {"code": error.code, "message": _short(error.message or error.code)}
                    attempts.append({"selection": None, "error": err})
                    errors.append(err)
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
                                       swap_via=self._swap_via())
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
        reason = errors[-1]["message"] if errors else "no selection"
        return schema_valid, {"kind": "none", "reason": reason[:500]}, attempts, errors

    def _act(self, index: int) -> None:
        cfg = self.config
        pre = self.frames.save(f"frames/action-{index}-pre.png", self.driver.capture())
        catalog = self._catalog(pre)
        swaps = self._swaps(catalog, pre)
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
        budget_ms = self.driver.perform(action)
        bridge = self._record_events(start)
        post = self.frames.save(f"frames/action-{index}-post.png", self.driver.capture())
        change = frame_change(pre.pixels, post.pixels)
        new_events = list(bridge)
        if change is not None:
            new_events.append(self.events.add_observed("frame_changed",
                                                       self.driver.virtual_time_ms, change))
        self.progress.observe(new_events)
        causal = valid and (change is not None or any(e["source"] == "bridge" for e in bridge))
        self._note_swap(action, causal)
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
        self.steps.append({
            "actionId": entry["actionId"], "attempts": attempts, "selection": selection,
            "normalized": action, "valid": valid, "retryCount": entry["retryCount"],
            "preFrameRef": pre.ref, "preFrameHash": pre.sha256, "postFrameRef": post.ref,
            "postFrameHash": post.sha256, "virtualTimeBudgetMs": budget_ms,
            "virtualTimeMs": self.driver.virtual_time_ms, "causalGameResponse": causal,
            "gameEvents": new_events, "targetSetHash": catalog.target_set_hash,
            "targets": catalog.evidence(),
        })
        if self.on_step:
            kind = selection["type"] if valid and selection else "none"
            self.on_step(StepInfo(index, cfg.budget, valid, self.score, kind))

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Play the whole budget; returns the evidence document (also written to disk)."""
        from lingxi.playtest.evidence import write_bundle

        (self.out_dir / "views.jsonl").write_text("", encoding="utf-8")
        try:
            self.initial = self.frames.save("frames/frame-initial.png", self.driver.capture())
            self.progress.observe(self._record_events(0))
            for index in range(1, self.config.budget + 1):
                self._act(index)
        except PlayError as error:
            self.stop_reason = f"error: {error.code}"
            write_bundle(self)
            raise
        except KeyboardInterrupt:
            self.stop_reason = "interrupted"
            write_bundle(self)
            raise
        return write_bundle(self)


MAX_RECORDED_ANSWER = 16_384  # bytes of an actor's answer kept in evidence
MAX_ERROR_MESSAGE = 300  # characters of a protocol error message shown to the actor


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
