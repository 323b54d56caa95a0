"""Settling, the idle mask, significant change and input-model memory (no browser)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw

from lingxi.playtest.geometry import Grid
from lingxi.playtest.inputs import DROP_AFTER, InputModels, via
from lingxi.playtest.motion import Motion, changed_cells, changed_pixels, significant
from lingxi.playtest.settle import CHUNK_MS, MAX_SETTLE_MS, idle_probe, settle


def png_of(draw) -> bytes:
    image = Image.new("RGB", (390, 844), (240, 240, 240))
    draw(ImageDraw.Draw(image))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


class Animated:
    """A page whose square slides for ``moving_ms`` and which may blink a banner forever."""

    def __init__(self, moving_ms: int, banner: bool = False, twinkle: bool = False) -> None:
        self.virtual_time_ms = 0
        self.moving_ms = moving_ms
        self.banner = banner
        self.twinkle = twinkle
        self.captures = 0

    def advance(self, ms: int) -> None:
        self.virtual_time_ms += ms

    def capture(self) -> bytes:
        self.captures += 1
        t = min(self.virtual_time_ms, self.moving_ms)
        step = self.virtual_time_ms // 100

        def draw(d):
            x = 20 + t // 10
            d.rectangle([x, 300, x + 40, 340], fill=(200, 30, 30))
            if self.banner:
                d.rectangle([0, 0, 389, 40], fill=(0, 0, 255) if step % 2 else (255, 255, 0))
            if self.twinkle:
                sx = 50 + (step * 37) % 300
                d.rectangle([sx, 600, sx + 5, 605], fill=(255, 255, 255) if step % 2 else (0, 0, 0))
        return png_of(draw)


def test_settle_waits_for_the_animation_to_end():
    page = Animated(moving_ms=1500)
    done = settle(page, Motion())
    assert not done.bounded
    # moving until 1500 ms, then two still chunks
    assert 1500 <= done.spent_ms <= 1500 + 3 * CHUNK_MS
    assert page.virtual_time_ms == done.spent_ms


def test_a_still_page_settles_in_two_chunks():
    page = Animated(moving_ms=0)
    done = settle(page, Motion())
    assert done.spent_ms == 2 * CHUNK_MS and not done.bounded


class Scheduled(Animated):
    """A still page that reports what it has scheduled on its clock (a browser page's fourth
    activity count): something until ``until_ms``, nothing after."""

    def __init__(self, until_ms: int, moving_ms: int = 0) -> None:
        super().__init__(moving_ms=moving_ms)
        self.until_ms = until_ms

    def activity(self):
        return (0, 0, 0, 1 if self.virtual_time_ms < self.until_ms else 0)


def test_a_page_with_nothing_scheduled_settles_after_one_still_chunk():
    page = Scheduled(until_ms=0)
    done = settle(page, Motion())
    assert done.spent_ms == CHUNK_MS and not done.bounded and page.captures == 2


def test_something_scheduled_keeps_the_second_still_chunk():
    page = Scheduled(until_ms=10_000)  # a long timer pending: the page looks still, is not idle
    assert settle(page, Motion()).spent_ms == 2 * CHUNK_MS


def test_a_moving_page_with_nothing_scheduled_still_needs_a_still_chunk():
    page = Scheduled(until_ms=0, moving_ms=450)  # moved by something off the clock
    done = settle(page, Motion())
    assert done.spent_ms == 6 * CHUNK_MS and not done.bounded  # the frame at 500 still moved


def test_settle_is_bounded_and_learns_what_never_stops():
    page = Animated(moving_ms=0, banner=True)
    motion = Motion()
    first = settle(page, motion)
    assert first.bounded and first.spent_ms == MAX_SETTLE_MS
    assert motion.idle_blocks > 0
    second = settle(page, motion)  # the banner is idle motion now
    assert not second.bounded and second.spent_ms == 2 * CHUNK_MS


def test_idle_probe_masks_the_banner_but_not_twinkles():
    page = Animated(moving_ms=0, banner=True, twinkle=True)
    motion = Motion()
    step = idle_probe(page, motion)
    assert step["kind"] == "idle_probe" and step["idleFraction"] > 0
    mask = motion.mask_pixels((844, 390))
    assert mask[:40].all() and not mask[590:620].any()
    # a twinkle alone does not count as the game moving
    a, b = (np.asarray(Image.open(io.BytesIO(page.capture())).convert("RGB")) for _ in range(2))
    assert not motion.moving(a, b)


def test_significant_change_ignores_small_specks():
    diff = np.zeros((844, 390), dtype=bool)
    diff[10:16, 10:16] = True
    diff[100:106, 200:206] = True
    assert not significant(diff)
    diff[400:420, 100:120] = True
    assert significant(diff)


def test_changed_cells_reads_cell_centres():
    grid = Grid(10, 100, 40, 40, 8, 8)
    before = np.zeros((844, 390, 3), dtype=np.uint8)
    after = before.copy()
    after[100 + 40 * 2 + 5:100 + 40 * 3 - 5, 10 + 40 * 4 + 5:10 + 40 * 5 - 5] = 255  # row 3, col 5
    after[100:102, :] = 255  # a hairline on the top edge touches no centre
    assert changed_cells(changed_pixels(before, after), grid) == {(3, 5)}


def test_input_models_are_remembered_and_forgotten():
    models = InputModels()
    assert models.order() == ["mouse", "taps", "touch", "touch-taps"]
    models.received("touch-taps")
    assert models.order() == ["touch-taps"] and models.pointer() == "touch"
    models.missed()
    assert models.order() == ["touch-taps"]
    models.missed()
    assert models.order()[0] == "touch-taps" and len(models.order()) == 4
    assert InputModels("taps").order() == ["taps"] and InputModels("drag").order() == ["mouse"]
    assert via("touch-taps") == "taps" and via("touch") == "drag"


def test_a_model_never_received_is_dropped_for_the_run():
    models = InputModels()
    for _ in range(DROP_AFTER):  # three actions: a mouse drag first, then two taps received
        assert models.order()[0] in ("mouse", "taps")
        models.tried("mouse")
        models.tried("taps")
        models.received("taps")
        models.missed()
        models.missed()  # two unreceived swaps: probing again
    assert models.dropped("mouse") and not models.dropped("taps")
    assert models.order() == ["taps", "touch", "touch-taps"]  # mouse is no longer tried


def test_when_every_model_is_dropped_probing_starts_over():
    models = InputModels()
    for _ in range(DROP_AFTER):
        for model in models.order():
            models.tried(model)
    assert all(models.dropped(m) for m in ("mouse", "taps", "touch", "touch-taps"))
    assert models.order() == ["mouse", "taps", "touch", "touch-taps"]
    assert not models.dropped("mouse")


class Thinking(Animated):
    """A still page that is busy (a short timer pending) until ``busy_ms``, and may have a
    polling timer pending forever."""

    def __init__(self, busy_ms: int, polling: bool = False) -> None:
        super().__init__(moving_ms=0)
        self.busy_ms, self.polling = busy_ms, polling

    def activity(self):
        busy = self.virtual_time_ms < self.busy_ms or self.polling
        return (1 if busy else 0, 0, self.virtual_time_ms // 400)  # an event every 400 ms


def test_settle_waits_for_a_still_but_busy_page():
    page = Thinking(busy_ms=1200)
    done = settle(page, Motion())
    assert not done.bounded
    assert 1200 <= done.spent_ms <= 1200 + 3 * CHUNK_MS  # not 200 ms: the pixels never moved


def test_a_signal_seen_while_idle_does_not_hold_settling():
    page, motion = Thinking(busy_ms=0, polling=True), Motion()
    idle_probe(page, motion)  # a timer always pending: it says nothing about being busy
    page.virtual_time_ms = page.busy_ms = 0
    done = settle(page, motion)
    assert not done.bounded and done.spent_ms <= 3 * CHUNK_MS
    assert settle(Thinking(busy_ms=0, polling=True), Motion()).bounded  # not learned: the bound


class Counting(Animated):
    """A page that slides its square for ``moving_ms`` (Animated), with a short timer of the
    page pending until ``busy_ms`` and DOM mutations every chunk until then; nothing is
    scheduled after ``busy_ms``. Counts the frames the harness captures."""

    def __init__(self, busy_ms: int, moving_ms: int | None = None) -> None:
        super().__init__(moving_ms=busy_ms if moving_ms is None else moving_ms)
        self.busy_ms = busy_ms

    def activity(self):
        busy = self.virtual_time_ms < self.busy_ms
        mutations = min(self.virtual_time_ms, self.busy_ms) // CHUNK_MS
        return (1 if busy else 0, mutations, 0, 1 if busy else 0)


def _moved(frame) -> bool:
    return bool(frame[320, 10:390, 0].max() > 150)  # the square left its first place


def test_a_decided_settle_skips_the_frames_of_busy_chunks():
    """Once the caller's test passed (on the first frame here), a chunk the counters call busy
    with a short timer pending at its end is not captured, nor the last busy one (nothing
    scheduled after it: the next, quiet, is still against it); the settle ends where it ends
    with every frame taken, on the same last frame."""
    every = Counting(busy_ms=800)
    full = settle(every, Motion())
    lean_page = Counting(busy_ms=800)
    lean = settle(lean_page, Motion(), decided=lambda frame: True)
    assert lean.spent_ms == full.spent_ms == 900 and not lean.bounded
    assert lean.png == full.png and lean.decided
    # the first frame and the still one
    assert lean_page.captures == 2 and every.captures == 10


class Unscheduled(Counting):
    """Busy (mutations, a short timer, the square sliding) until ``busy_ms``, nothing
    scheduled after it, and one more DOM mutation in the chunk right after (a last class
    change): a busy chunk with nothing scheduled at its end, twice."""

    def activity(self):
        t = self.virtual_time_ms
        busy = t < self.busy_ms
        return (1 if busy else 0, min(t, self.busy_ms + CHUNK_MS) // CHUNK_MS, 0,
                1 if busy else 0)


def test_a_busy_chunk_with_nothing_scheduled_after_it_is_not_captured():
    """The chunk after one whose frame was skipped because nothing was scheduled at its end
    is still when the counters are quiet in it; when they are not (a mutation in it: here the
    chunk right after the busy ones), it counts as moving and the frames are compared again."""
    page = Unscheduled(busy_ms=400, moving_ms=400)
    done = settle(page, Motion(), decided=lambda frame: True)
    # 400: busy, nothing scheduled after: skipped; 500: a mutation (not quiet), nothing
    # scheduled: skipped; 600 quiet and nothing scheduled: still against 500's frame
    assert done.spent_ms == 600 and not done.bounded and page.captures == 2
    every = Unscheduled(busy_ms=400, moving_ms=400)
    assert settle(every, Motion()).spent_ms == 600  # every frame: still from 500 to 600


def test_a_wait_is_the_first_chunk_of_its_settle():
    """A lead (the frame and activity from before a wait's time ran) makes the wait the first
    chunk: a page that did nothing in it settles on the one frame taken after it, with no
    settling time of its own; a page that moved in it settles as after any moving chunk."""
    page = Scheduled(until_ms=0)
    before = page.capture(), page.activity()
    page.advance(CHUNK_MS)  # the wait
    done = settle(page, Motion(), lead=before)
    assert done.spent_ms == 0 and not done.bounded and page.captures == 2
    assert page.virtual_time_ms == CHUNK_MS
    busy = Scheduled(until_ms=10_000)  # something scheduled: a second still chunk is needed
    before = busy.capture(), busy.activity()
    busy.advance(CHUNK_MS)
    assert settle(busy, Motion(), lead=before).spent_ms == CHUNK_MS
    moving = Scheduled(until_ms=0, moving_ms=450)
    before = moving.capture(), moving.activity()
    moving.advance(CHUNK_MS)
    done = settle(moving, Motion(), lead=before)
    assert done.spent_ms == 5 * CHUNK_MS and moving.virtual_time_ms == 6 * CHUNK_MS


def test_frames_are_taken_until_the_callers_test_passes():
    """A swap's receipt or an input's response is looked for in every frame until some frame
    shows it, so skipping cannot hide it: the frames before are all there."""
    page = Counting(busy_ms=800, moving_ms=800)
    seen = []

    def test(frame):
        seen.append(frame)
        return page.virtual_time_ms >= 300  # the frame at 300 ms shows what it looks for

    done = settle(page, Motion(), decided=test)
    assert done.decided and done.spent_ms == 900
    assert len(seen) == 4  # frames at 0, 100, 200, 300: no more tests once it passed
    assert page.captures == 5  # those four and the still one's (not the last busy one's)


def test_a_test_that_never_passes_takes_every_frame():
    page = Counting(busy_ms=500)
    done = settle(page, Motion(), decided=lambda frame: False)
    assert not done.decided and page.captures == 1 + done.spent_ms // CHUNK_MS


class Lingering(Counting):
    """A short timer of the page pending until ``busy_ms``, mutations only until
    ``mutating_ms``: the chunks between are quiet only by the frame, busy by the timer.
    Then a timer that does nothing leaves a quiet chunk right after a busy one."""

    def __init__(self, busy_ms: int, quiet_timer_ms: int) -> None:
        super().__init__(busy_ms=busy_ms, moving_ms=0)
        self.quiet_timer_ms = quiet_timer_ms

    def activity(self):
        t = self.virtual_time_ms
        mutations = min(t, self.busy_ms) // CHUNK_MS
        pending = t < self.busy_ms or t < self.quiet_timer_ms
        return (1 if pending else 0, mutations, 0, 1 if pending else 0)


def test_a_quiet_chunk_after_a_skipped_frame_is_not_taken_as_still():
    """A chunk whose starting frame was not taken cannot be judged still: it counts as moving,
    so at worst the settle takes one chunk more than with every frame."""
    every = Lingering(busy_ms=400, quiet_timer_ms=0)
    lean = Lingering(busy_ms=400, quiet_timer_ms=0)
    full = settle(every, Motion())
    skipped = settle(lean, Motion(), decided=lambda frame: True)
    assert full.spent_ms == skipped.spent_ms == 500  # the busy end was captured (nothing after)
    every, lean = (Lingering(busy_ms=400, quiet_timer_ms=500) for _ in range(2))
    full = settle(every, Motion())
    skipped = settle(lean, Motion(), decided=lambda frame: True)
    # the timer pending to 500 ms did nothing: chunk 500 is quiet, but its start (400) was
    # busy with that timer pending, so not taken; chunk 600 is still against 500
    assert full.spent_ms == 500 and skipped.spent_ms == 600
    assert skipped.png == full.png


def test_the_chunks_before_the_bound_are_all_taken():
    """A settle that hits the bound learns idle motion from its last consecutive frames, so
    those are captured even when the counters call them busy."""
    page = Counting(busy_ms=10 * MAX_SETTLE_MS, moving_ms=0)
    page.banner = True  # blinks every chunk, for ever
    motion = Motion()
    done = settle(page, motion, decided=lambda frame: True)
    assert done.bounded and done.spent_ms == MAX_SETTLE_MS
    assert page.captures == 1 + 3  # the first frame, and the three chunks before the bound
    assert motion.idle_blocks > 0  # the banner's blinking between them was learnt
