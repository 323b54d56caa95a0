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

A chunk is captured only when some decision needs its frame. The caller's own test of a
frame (``decided``: a swap's cells changed, an input drew a response) needs every frame
until one passes it; after that, settling needs a chunk's frame only as the reference
for the next chunk's stillness. A chunk the page's counters already call busy and that
ends with a short timer of the page pending cannot be still, and the next one can be
still only if that timer fires in it and does nothing a counter sees — so such a chunk
is not captured (a capture is a whole frame rendered, the dearest part of a step). A
chunk that follows one not captured cannot be judged still, so it counts as moving: at
worst one chunk more. The chunks before the bound are always captured (what a bounded
settle learns as idle motion comes from consecutive frames).

A busy chunk that ends with nothing scheduled on the page's clock is not captured either:
it cannot be still (the counters saw something), and by the same reasoning that lets one
still chunk end a settle with nothing scheduled, the chunk after it changes nothing unless
the counters see something in it. So when the next chunk is quiet and ends with nothing
scheduled, it is taken as still against the frame not captured (one frame fewer where an
animation ends; the settle ends at the same chunk); when it is not, it counts as moving, as
after any chunk not captured.

A wait is the settle's first chunk (``lead``): the frame and the activity reading from
before the wait's time ran are the reference its frame is judged against, so a page that
did nothing in the wait settles with the one frame taken after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from lingxi.playtest.frames import decode
from lingxi.playtest.motion import SCHEDULED, TIMERS, Motion

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
    frames: list[np.ndarray] = field(default_factory=list)  # every frame taken, the last included
    decided: bool = False  # some frame passed the caller's test (settle's ``decided``)

    @property
    def pixels(self) -> np.ndarray:
        return self.frames[-1]


FrameTest = Callable[[np.ndarray], bool]


def no_test(_frame: np.ndarray) -> bool:
    """The ``decided`` of a settle whose frames only settling itself reads."""
    return True


def read_activity(driver: Clock) -> tuple[int, ...] | None:
    """The page's activity counts (see page_scripts), or None for a driver without them."""
    read = getattr(driver, "activity", None)
    return read() if read is not None else None


def nothing_scheduled(activity: tuple[int, ...] | None) -> bool:
    """True when the page reported nothing scheduled on its virtual clock (a page that
    gives no such count never is)."""
    return activity is not None and len(activity) > SCHEDULED and activity[SCHEDULED] == 0


def _busy_on(motion: Motion, activity: tuple[int, ...] | None) -> bool:
    """True when a short timer of the page is pending (and the page has none pending when
    idle): the next chunk is busy unless that timer fires in it and does nothing seen."""
    return (activity is not None and activity[TIMERS] > 0
            and TIMERS not in motion.idle_signals)


@dataclass
class _Chunks:
    """The frames of one settle and the decision the caller wants from them."""

    motion: Motion
    test: FrameTest | None
    frames: list[np.ndarray] = field(default_factory=list)
    decided: bool = False

    def add(self, frame: np.ndarray) -> None:
        repeated = bool(self.frames) and frame is self.frames[-1]  # tested already
        self.frames.append(frame)
        if self.test is not None and not self.decided and not repeated:
            self.decided = self.test(frame)

    def skip(self, quiet: bool, activity: tuple[int, ...] | None, left_ms: int) -> bool:
        """True when the chunk just run needs no frame (module docstring): the caller has
        what it wanted, the chunk is busy, and either the next will be too or nothing is
        scheduled after it; and the bound is not near."""
        return (not quiet and self.test is not None and self.decided
                and (_busy_on(self.motion, activity) or nothing_scheduled(activity))
                and left_ms > STILL_CHUNKS * CHUNK_MS)

    def still(self, quiet: bool, previous: bytes | None, png: bytes, *,
              unchanged: bool = False) -> bool:
        """Take the chunk's frame ``png``; True when the chunk was still: quiet, and its frame
        shows no motion since ``previous``, the frame it started from (None: not taken;
        ``unchanged``: not taken, but nothing was scheduled when the chunk began, so a quiet
        chunk changed nothing)."""
        if png == previous:  # byte-identical: no need to decode or compare pixels
            self.add(self.frames[-1])
            return quiet
        self.add(decode(png))
        if previous is None:
            return quiet and unchanged
        return quiet and not self.motion.moving(self.frames[-2], self.frames[-1])


Lead = tuple[bytes, tuple[int, ...] | None]  # a frame and an activity reading, both of then


def settle(driver: Clock, motion: Motion, *, max_ms: int = MAX_SETTLE_MS,
           first: bytes | None = None, decided: FrameTest | None = None,
           lead: Lead | None = None) -> Settled:
    """Run virtual time until the frame is still and the page quiet; ``first`` is a frame
    already taken now. ``decided``: the caller's test of a frame; every frame is taken
    until one passes it (None: every frame is taken), later only those settling needs.
    ``lead``: the frame and the activity reading from before some time that has run since
    with no input (a wait): that time is the first chunk, not counted in ``spent_ms``."""
    taken = lead[0] if lead is not None else first if first is not None else driver.capture()
    chunks = _Chunks(motion, decided)
    chunks.add(decode(taken))
    png: bytes | None = taken
    spent = still = 0
    activity = before = lead[1] if lead is not None else read_activity(driver)
    ran = lead is not None  # a chunk's time has run already
    while spent < max_ms:
        if not ran:
            driver.advance(CHUNK_MS)
            spent += CHUNK_MS
        ran = False
        before, activity = activity, read_activity(driver)
        quiet = motion.quiet(before, activity)
        if chunks.skip(quiet, activity, max_ms - spent):
            png, still = None, 0
            continue
        previous, png = png, driver.capture()
        still = (still + 1 if chunks.still(quiet, previous, png,
                                           unchanged=nothing_scheduled(before)) else 0)
        if still >= STILL_CHUNKS or (still and nothing_scheduled(activity)):
            return Settled(png, spent, False, chunks.frames, chunks.decided)
    motion.learn(chunks.frames[-STILL_CHUNKS - 1:])
    motion.learn_activity(before, activity)  # what kept the page busy to the bound is idle
    assert png is not None  # the chunks before the bound are captured (_Chunks.skip)
    return Settled(png, spent, True, chunks.frames, chunks.decided)


def idle_probe(driver: Clock, motion: Motion, events: Any = None,
               ms: int = IDLE_PROBE_MS) -> dict[str, Any]:
    """Watch the page without input for ``ms`` and learn what moves on its own."""
    png = driver.capture()
    frames = [decode(png)]
    activity = read_activity(driver)
    for _ in range(max(1, ms // CHUNK_MS)):
        driver.advance(CHUNK_MS)
        previous, png = png, driver.capture()
        frames.append(frames[-1] if png == previous else decode(png))
        before, activity = activity, read_activity(driver)
        motion.learn_activity(before, activity)
    types = sorted(set(events or ()))
    motion.learn(frames, types)
    return {"kind": "idle_probe", "virtualTimeMs": ms, "idleFraction": motion.idle_fraction(),
            "idleEventTypes": types}
