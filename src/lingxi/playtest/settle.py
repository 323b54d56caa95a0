"""Settling: after an action, run virtual time until the frame is still (bounded).

Games animate a swap, a cascade or a menu transition for up to seconds and
often drop input meanwhile; a frame taken mid-animation also gives a wrong
lattice. So after each action the harness lets virtual time run in 100 ms
chunks, capturing a frame after each, until two chunks in a row changed
nothing outside the idle mask, or until ``MAX_SETTLE_MS``. The time it took is
the action's ``virtualTimeBudgetMs``. A settle that hits the bound teaches the
idle mask what kept moving in its last chunks, so the next one can finish.

Still pixels are not enough: a game may think for 300-500 ms between cascade
stages with nothing changing on screen, dropping input meanwhile. So a chunk
is *quiet* only when, besides its frame, the page is quiet on the virtual
clock (``driver.activity()``, see page_scripts): no short timer of the page
pending, no DOM mutation and no bridge event in the chunk — each signal used
only when the idle probe did not see it without input (a polling timer or a
ticking clock would otherwise keep every settle going to the bound).

One still chunk is enough when the page has nothing scheduled on the virtual clock
at its end (no timer or interval of any delay, no animation frame, CSS animation or
decode pending: the page's fourth activity count, see page_scripts): nothing can
change in a second one, so it would cost a frame and 100 ms of the game's time to
learn nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from lingxi.playtest.frames import decode
from lingxi.playtest.motion import SCHEDULED, Motion

CHUNK_MS = 100
STILL_CHUNKS = 2
MAX_SETTLE_MS = 6000
IDLE_PROBE_MS = 1000


class Clock(Protocol):
    virtual_time_ms: int

    def capture(self) -> bytes: ...
    def advance(self, ms: int) -> None: ...


@dataclass
class Settled:
    png: bytes
    spent_ms: int
    bounded: bool
    frames: list[np.ndarray] = field(default_factory=list)  # every frame seen, the last included

    @property
    def pixels(self) -> np.ndarray:
        return self.frames[-1]


def _activity(driver: Clock) -> tuple[int, ...] | None:
    read = getattr(driver, "activity", None)
    return read() if read is not None else None


def nothing_scheduled(activity: tuple[int, ...] | None) -> bool:
    """True when the page reported nothing scheduled on its virtual clock (a page that
    gives no such count never is)."""
    return activity is not None and len(activity) > SCHEDULED and activity[SCHEDULED] == 0


def settle(driver: Clock, motion: Motion, *, max_ms: int = MAX_SETTLE_MS,
           first: bytes | None = None) -> Settled:
    """Run virtual time until the frame is still and the page quiet; ``first`` is a frame
    already taken now."""
    png = first if first is not None else driver.capture()
    frames = [decode(png)]
    spent = still = 0
    activity = before = _activity(driver)
    while spent < max_ms:
        driver.advance(CHUNK_MS)
        spent += CHUNK_MS
        previous, png = png, driver.capture()
        before, activity = activity, _activity(driver)
        quiet = motion.quiet(before, activity)
        if png == previous:  # byte-identical: no need to decode or compare pixels
            frames.append(frames[-1])
            still = still + 1 if quiet else 0
        else:
            frames.append(decode(png))
            still = still + 1 if quiet and not motion.moving(frames[-2], frames[-1]) else 0
        if still >= STILL_CHUNKS or (still and nothing_scheduled(activity)):
            return Settled(png, spent, False, frames)
    motion.learn(frames[-STILL_CHUNKS - 1:])
    motion.learn_activity(before, activity)  # what kept the page busy to the bound is idle
    return Settled(png, spent, True, frames)


def idle_probe(driver: Clock, motion: Motion, events: Any = None,
               ms: int = IDLE_PROBE_MS) -> dict[str, Any]:
    """Watch the page without input for ``ms`` and learn what moves on its own."""
    png = driver.capture()
    frames = [decode(png)]
    activity = _activity(driver)
    for _ in range(max(1, ms // CHUNK_MS)):
        driver.advance(CHUNK_MS)
        previous, png = png, driver.capture()
        frames.append(frames[-1] if png == previous else decode(png))
        before, activity = activity, _activity(driver)
        motion.learn_activity(before, activity)
    types = sorted(set(events or ()))
    motion.learn(frames, types)
    return {"kind": "idle_probe", "virtualTimeMs": ms, "idleFraction": motion.idle_fraction(),
            "idleEventTypes": types}
