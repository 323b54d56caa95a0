"""human: a person types each selection at a prompt.

The prompt shows where the current frame is on disk, what is legal, the targets
and the budget. Input is either a JSON selection or a short form:

    tap r00                 tap l00 3 4 [north]      tap g01 17 8
    drag l00 1 1 l00 1 2    swap ms012               key ArrowUp
    wait 300                help                     quit

Bad input is explained and the prompt repeats; end of input or ``quit`` raises
ActorError(``actor.human_quit``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from .base import (
    SUB_ANCHORS,
    Actor,
    ActorError,
    check_options,
    legal_types,
    legality_problem,
    safe_keys,
    swap_candidates,
    target_dimensions,
    targets,
)

HELP = """selection forms:
  tap <target> [row col] [anchor]      e.g. tap r00 | tap l00 3 4 | tap g01 2 5 north
  drag <target> [row col] <target> [row col]   e.g. drag l00 1 1 l00 1 2
  swap <candidateId>                   e.g. swap ms012
  key <Key>                            e.g. key ArrowUp
  wait <ms>                            100..600
  or a JSON selection, e.g. {"type":"wait","ms":300}
  help | quit"""


class ParseError(ValueError):
    pass


def _take_ref(words: list[str], view: dict[str, Any]) -> dict[str, Any]:
    if not words:
        raise ParseError("missing target id")
    target_id = words.pop(0)
    target = {t["id"]: t for t in targets(view)}.get(target_id)
    ref: dict[str, Any] = {"targetId": target_id}
    needs_cell = target_id.startswith(("l", "g")) if target is None else target_dimensions(target) is not None
    if needs_cell:
        if len(words) < 2 or not (words[0].isdigit() and words[1].isdigit()):
            raise ParseError(f"target {target_id} needs a cell: {target_id} <row> <column>")
        ref["cell"] = {"row": int(words.pop(0)), "column": int(words.pop(0))}
    if words and words[0] in SUB_ANCHORS:
        anchor = words.pop(0)
        if anchor != "center":
            ref["subAnchor"] = anchor
    return ref


def parse_short(line: str, view: dict[str, Any]) -> dict[str, Any]:
    """A selection from the JSON or short form typed by a person (raises ParseError)."""
    text = line.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"bad JSON: {exc.msg}") from exc
        if not isinstance(value, dict):
            raise ParseError("a selection is a JSON object")
        return value
    words = text.replace(",", " ").split()
    if not words:
        raise ParseError("empty input")
    verb, rest = words[0].lower(), words[1:]
    if verb == "tap":
        selection = {"type": "tap", "target": _take_ref(rest, view)}
    elif verb == "drag":
        selection = {"type": "drag", "from": _take_ref(rest, view), "to": _take_ref(rest, view)}
    elif verb in ("swap", "swap_pair"):
        if len(rest) != 1:
            raise ParseError("usage: swap <candidateId>")
        return {"type": "swap_pair", "candidateId": rest[0]}
    elif verb == "key":
        if len(rest) != 1:
            raise ParseError("usage: key <Key>")
        return {"type": "key", "key": rest[0]}
    elif verb == "wait":
        if len(rest) != 1 or not rest[0].isdigit():
            raise ParseError("usage: wait <ms>")
        return {"type": "wait", "ms": int(rest[0])}
    else:
        raise ParseError(f"unknown command {verb!r} (type help)")
    if rest:
        raise ParseError(f"unexpected words: {' '.join(rest)}")
    return selection


class HumanActor(Actor):
    name = "human"

    def __init__(self, *, seed: int, options: dict[str, str] | None = None,
                 input_stream: TextIO | None = None, output_stream: TextIO | None = None) -> None:
        options = dict(options or {})
        check_options(self.name, options, {"frame_root"})
        self._root = Path(options["frame_root"]) if "frame_root" in options else None
        self._in = input_stream if input_stream is not None else sys.stdin
        self._out = output_stream if output_stream is not None else sys.stderr

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def describe(self, view: dict[str, Any]) -> str:
        ref = view.get("currentFrameRef", "?")
        frame = str(self._root / ref) if self._root else ref
        lines = [f"frame: {frame}",
                 f"budget: {view.get('remainingBudget')}  virtual time: {view.get('virtualTimeMs')} ms",
                 f"legal: {', '.join(legal_types(view))}"]
        for t in targets(view):
            dims = target_dimensions(t)
            size = f" {dims[0]}x{dims[1]}" if dims else ""
            lines.append(f"  {t['id']} {t['kind']}{size} ({'/'.join(t.get('allowedGestures', []))})")
        if "key" in legal_types(view):
            lines.append(f"keys: {', '.join(safe_keys(view))}")
        cands = swap_candidates(view)
        if cands:
            lines.append(f"swap candidates: {len(cands)} ({cands[0]['candidateId']}…{cands[-1]['candidateId']}); "
                         "each pairs two neighbouring cells")
        history = view.get("history") or []
        if history:
            last = history[-1]
            lines.append(f"last: {last['actionId']} {json.dumps(last['selection'])} "
                         f"response={'yes' if last['causalGameResponse'] else 'no'} "
                         f"events={len(last['gameEvents'])}")
        for err in view.get("protocolErrors") or []:
            lines.append(f"error: {err['code']}: {err['message']}")
        return "\n".join(lines)

    def select(self, view: dict[str, Any], frame_png: bytes) -> dict[str, Any]:
        from lingxi.actor.contracts import ContractViolation, validate_selection

        self._say(self.describe(view))
        while True:
            self._out.write("selection> ")
            self._out.flush()
            line = self._in.readline()
            if not line:
                raise ActorError("actor.human_quit", "input ended before a selection was given")
            if line.strip().lower() in ("quit", "exit"):
                raise ActorError("actor.human_quit", "the player quit")
            if line.strip().lower() in ("help", "?"):
                self._say(HELP)
                continue
            try:
                selection = parse_short(line, view)
                validate_selection(selection)
            except ParseError as exc:
                self._say(f"not understood: {exc}")
                continue
            except ContractViolation as exc:
                self._say(f"not a valid selection: {exc.message}")
                continue
            problem = legality_problem(view, selection)
            if problem:
                self._say(f"not playable now: {problem}")
                continue
            return selection
