"""The brief and objective progress.

A brief is the text the actor is given, optionally with obligations: named
goals made of step titles, each step seen when a game event of its ``event``
type (and matching ``where`` data, if given) arrives. Progress is only ever a
candidate observation (``candidateOnly: true``): the harness reports what the
events showed and never claims a verdict.

Formats (see docs/playtest.md):

* plain text — the brief, no obligations;
* JSON — ``{"brief": str, "obligations": [{"id", "title", "steps": [{"title",
  "event", "where": {key: value}}]}]}``;
* text with obligation lines::

      Score as many points as you can.
      obligation match: Make a match
        step Swap two tiles @ swap valid=true
        step Clear tiles @ match
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.playtest.errors import PlayInputError

DEFAULT_BRIEF = "Play the game and make as much progress as you can."
_OBLIGATION = re.compile(r"^obligation\s+([^\s:]+)\s*:\s*(.*)$")
_STEP = re.compile(r"^step\s+(.+?)\s*@\s*(\S+)((?:\s+[^\s=]+=\S+)*)\s*$")


@dataclass(frozen=True)
class Step:
    title: str
    event: str
    where: tuple[tuple[str, str], ...] = ()

    def matches(self, event: dict[str, Any]) -> bool:
        if event["type"] != self.event:
            return False
        data = event.get("data", {})
        return all(key in data and _as_text(data[key]) == value for key, value in self.where)


@dataclass(frozen=True)
class Obligation:
    id: str
    title: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Brief:
    text: str
    obligations: tuple[Obligation, ...] = ()


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _bad(message: str) -> PlayInputError:
    return PlayInputError("play.bad_brief", message)


def _from_json(doc: Any) -> Brief:
    if not isinstance(doc, dict) or not isinstance(doc.get("brief", ""), str):
        raise _bad("a JSON brief is an object with a string 'brief' and a list 'obligations'")
    obligations = []
    for i, item in enumerate(doc.get("obligations", []) or []):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise _bad(f"obligations[{i}] needs a non-empty string 'id'")
        steps = []
        for j, step in enumerate(item.get("steps", []) or []):
            if not (isinstance(step, dict) and isinstance(step.get("title"), str)
                    and isinstance(step.get("event"), str) and step["event"]):
                raise _bad(f"obligations[{i}].steps[{j}] needs string 'title' and 'event'")
            where = step.get("where", {}) or {}
            if not isinstance(where, dict):
                raise _bad(f"obligations[{i}].steps[{j}].where must be an object")
            steps.append(Step(step["title"], step["event"],
                              tuple(sorted((str(k), _as_text(v)) for k, v in where.items()))))
        if not steps:
            raise _bad(f"obligations[{i}] has no steps")
        obligations.append(Obligation(item["id"], str(item.get("title", item["id"])), tuple(steps)))
    text = doc.get("brief", "").strip() or DEFAULT_BRIEF
    return Brief(text, tuple(obligations))


def _from_text(text: str) -> Brief:
    lines: list[str] = []
    obligations: list[tuple[str, str, list[Step]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if match := _OBLIGATION.match(line):
            obligations.append((match.group(1), match.group(2).strip(), []))
        elif line.startswith("step ") or line == "step":
            match = _STEP.match(line)
            if match is None or not obligations:
                raise _bad(f"line {number}: expected 'step <title> @ <event> [key=value…]' "
                           "after an 'obligation <id>: <title>' line")
            where = tuple(sorted(tuple(pair.split("=", 1)) for pair in match.group(3).split()))
            obligations[-1][2].append(Step(match.group(1), match.group(2), where))
        else:
            lines.append(raw.rstrip())
    for ident, _, steps in obligations:
        if not steps:
            raise _bad(f"obligation {ident} has no steps")
    body = "\n".join(lines).strip() or DEFAULT_BRIEF
    return Brief(body, tuple(Obligation(i, t, tuple(s)) for i, t, s in obligations))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_brief(value: str | None) -> Brief:
    """A brief from ``--brief``: inline text, or a .json / text file when it names one."""
    if value is None or not value.strip():
        return Brief(DEFAULT_BRIEF)
    path = Path(value)
    is_file = False
    try:
        is_file = len(value) < 4096 and "\n" not in value and path.is_file()
    except OSError:
        is_file = False
    if is_file:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise _bad(f"{path}: not UTF-8 text (byte {error.start})") from None
        except OSError as error:
            raise _bad(f"cannot read {path}: {error.strerror or error}") from None
        if path.suffix.lower() == ".json":
            try:
                return _from_json(json.loads(text, parse_constant=_no_constant))
            except json.JSONDecodeError as error:
                raise _bad(f"{path}: not JSON: {error.msg} at line {error.lineno}") from None
            except (ValueError, RecursionError) as error:
                raise _bad(f"{path}: not usable JSON: {str(error)[:80]}") from None
        return _from_text(text)
    return _from_text(value)


@dataclass
class Progress:
    """Which steps of each obligation game events have shown so far."""

    brief: Brief
    seen: dict[str, set[str]] = field(default_factory=dict)
    snapshot_seq: int = 1

    def observe(self, events: list[dict[str, Any]]) -> bool:
        """Mark steps seen by ``events``; True when anything changed."""
        changed = False
        for obligation in self.brief.obligations:
            seen = self.seen.setdefault(obligation.id, set())
            for step in obligation.steps:
                if step.title not in seen and any(step.matches(e) for e in events):
                    seen.add(step.title)
                    changed = True
        if changed:
            self.snapshot_seq += 1
        return changed

    def view(self) -> dict[str, Any] | None:
        """The ``objectiveProgress`` object of a view (None without obligations)."""
        if not self.brief.obligations:
            return None
        obligations = []
        for obligation in self.brief.obligations:
            seen = self.seen.get(obligation.id, set())
            titles = [s.title for s in obligation.steps]
            seen_titles = [t for t in titles if t in seen]
            missing = [t for t in titles if t not in seen]
            status = ("observed" if not missing else "partial" if seen_titles else "unobserved")
            obligations.append({"id": obligation.id, "title": obligation.title,
                                "seenStepTitles": seen_titles, "missingStepTitles": missing,
                                "status": status})
        return {"candidateOnly": True, "snapshotSeq": self.snapshot_seq,
                "hash": sha256_hex(canonical_bytes(obligations)), "obligations": obligations}
