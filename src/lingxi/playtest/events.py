"""Game events: from the page bridge and observed in frames, numbered for the run.

Bridge events come from untrusted page code, so each one is bounded: the type
is cut to 64 characters, the data must be a JSON object of at most 4 KiB, and
at most 256 are kept per action (the rest are counted in a ``bridge_overflow``
event).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_TYPE = 64
MAX_DATA_BYTES = 4096
MAX_PER_ACTION = 256


@dataclass
class EventLog:
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def _add(self, source: str, type_: str, virtual_ms: int, data: dict[str, Any]) -> dict:
        event = {"seq": self.last_seq + 1, "source": source, "type": type_,
                 "virtualTimeMs": max(0, int(virtual_ms)), "data": data}
        self.events.append(event)
        return event

    def add_observed(self, type_: str, virtual_ms: int, data: dict[str, Any]) -> dict[str, Any]:
        return self._add("observed", type_, virtual_ms, data)

    def add_bridge_batch(self, raw: list[Any], dropped: int, window: tuple[int, int]) -> list[dict]:
        """Record raw bridge entries ``[performance_now_ms, json_text]`` seen during ``window``."""
        start, end = window
        added: list[dict] = []
        overflow = dropped
        for entry in raw:
            if len(added) >= MAX_PER_ACTION:
                overflow += 1
                continue
            event = _parse_bridge(entry)
            if event is None:
                overflow += 1
                continue
            when, type_, data = event
            moment = min(max(int(round(when)), start), end) if when is not None else end
            added.append(self._add("bridge", type_, moment, data))
        if overflow:
            added.append(self._add("observed", "bridge_overflow", end, {"dropped": overflow}))
        return added


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_bridge(entry: Any) -> tuple[float | None, str, dict[str, Any]] | None:
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)):
        return None
    when = entry[0] if isinstance(entry[0], int | float) and not isinstance(entry[0], bool) else None
    if len(entry[1].encode("utf-8")) > MAX_DATA_BYTES:
        return None
    try:
        payload = json.loads(entry[1], parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):
        return None
    type_ = payload.pop("type", None)
    if not isinstance(type_, str) or not type_.strip():
        type_ = "event"
    return when, type_.strip()[:MAX_TYPE], payload
