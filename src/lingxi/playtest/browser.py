"""Debian's Chromium driven by Playwright under DevTools virtual time.

Virtual time is paused except while the harness lets it run: one animation
frame per input step (a press, each move of a drag, a release), then whatever
the runner's settling asks for, so timers, animations and ``Date.now()`` see
the same clock on every run. Input goes straight through CDP
(``Input.dispatchMouseEvent`` / ``dispatchTouchEvent``; a native HTML5 drag is
intercepted and finished with ``Input.dispatchDragEvent``); frames are taken
with CDP ``Page.captureScreenshot`` at device pixel ratio 1, scaled to 390×844
when the camera is zoomed out (:meth:`GamePage.fit_camera`).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import os
import time
from typing import Any
from urllib.parse import urlsplit

from lingxi.playtest.errors import PlayError
from lingxi.playtest.geometry import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from lingxi.playtest.page_scripts import (
    ACTIVITY_JS,
    ARRIVED_END_JS,
    DRAIN_JS,
    EPOCH_MS,
    GESTURE_JS,
    PAGE_SIZE_JS,
    RISKS_JS,
    SEEN_JS,
    SHOWN_SCORE_JS,
    SNAPSHOT_JS,
    START_CLOCK_JS,
    bridge_script,
)

CHROMIUM = os.environ.get("LINGXI_CHROMIUM", "/usr/bin/chromium")
# Chromium features off for replays. DeferRendererTasksAfterInput: after a discrete input
# event (a press, a release, a key) that asks for a frame, Blink disables its deferrable task
# queues (timers among them) until the next main frame. Under virtual time a disabled queue
# has no wake-up, so the clock ran past the deferred timers to the end of the input frame and
# they ran late, at an instant set by when Chromium drew in real time: phaser3 and hover-fps
# saw a press one frame late in some runs (issue 13; test_timers_are_not_deferred_after_a_press).
HARNESS_DISABLED_FEATURES = ("DeferRendererTasksAfterInput",)
# Playwright passes its own --disable-features before ours and Chromium keeps only the last
# one, so the harness repeats Playwright's list (as of Playwright 1.65) next to its own.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AimEnabled", "AvoidCorsURLLoaderRestartOnRedirect", "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose", "HttpsFirstBalancedModeAutoEnable", "HttpsUpgrades",
    "LensOverlay", "MediaRouter", "NetworkTimeServiceQuerying", "OptimizationHints",
    "PaintHolding", "PreconnectToSearch", "TcpPortRandomizationWin",
    "ThirdPartyStoragePartitioning")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-features=" + ",".join(HARNESS_DISABLED_FEATURES
                                                  + PLAYWRIGHT_DISABLED_FEATURES)]
# Rendering in one deterministic pass: without these, a few anti-aliased edge pixels
# differ between runs and the same seed would not give the same frame hashes.
# --disable-smooth-scrolling: a scroll (an arrow key's default action, a page's smooth
# scrollTo) happens at once instead of being animated on Chromium's real-time clock, where
# a settle saw it move for 200 ms in one run and 300 ms in the next (zoo wide-start).
DETERMINISTIC_RENDER_ARGS = ["--run-all-compositor-stages-before-draw", "--disable-partial-raster",
                             "--num-raster-threads=1", "--disable-threaded-animation",
                             "--disable-checker-imaging", "--disable-smooth-scrolling",
                             "--disable-lcd-text", "--disable-low-res-tiling",
                             "--disable-font-subpixel-positioning"]
TAP_GAP_MS = 150  # between the two taps of a swap made by taps
FRAME_MS = 17  # one animation frame at 60 Hz, rounded up: each input step gets one
MOUSE_EVENTS = {"mouseMoved": "pointermove", "mousePressed": "pointerdown",
                "mouseReleased": "pointerup"}
# What the page sees of each CDP touch event: Blink dispatches the pointer event and the
# touch event of one touch in the same task, and a pointer event even when it drops the
# touch event (a first move inside the touch slop), so any of them means "arrived".
TOUCH_ARRIVALS = {"touchStart": ("pointerdown", "touchstart"),
                  "touchMove": ("pointermove", "touchmove", "pointercancel", "touchcancel"),
                  "touchEnd": ("pointerup", "touchend", "pointercancel", "touchcancel")}
ARRIVAL_TIMEOUT_S = 1.0
TOUCH_ARRIVAL_TIMEOUT_S = 5.0  # real time for the page to see a touch event (not waited out)
TOUCH_REPLY_TIMEOUT_S = 2.0  # real time for Chromium's reply once the page has seen the event
TOUCH_DESYNC_RISK = ("touch-ack: Chromium did not answer a touch event in time, so what a tap "
                     "derives (a click) may land at a real-time moment")
LATE_INPUT_RISK = ("input-late: the page had not seen an input event when virtual time ran "
                   "on, so it may land at a real-time moment")
SENT_LOOK_S = 0.01  # real time given to queued input's replies before a frame is forced
FORCE_FRAME_TIMEOUT_S = 2.0  # real time to wait for the page to see a gesture's last event
FORCE_FRAME_PARAMS = {"format": "jpeg", "quality": 1, "fromSurface": True}  # a frame, not kept
CLOCK_PATH = "/__lingxi-clock/"  # the page's holds on the virtual clock (page_scripts)
MAX_HOLDS = 256  # open holds kept; beyond, a hold is answered at once (a page gone wild)
MIN_CAMERA_SCALE = 0.4  # never zoom out further: cells would get too small to read
# A page that overflows the window by the same ratio (±3 %) after a camera move as before it
# grew with the window: it lays itself out to cover the window, zooming cannot fit it.
FOLLOWS_WINDOW_TOLERANCE = 0.03
INITIAL_VIRTUAL_TIME_S = EPOCH_MS // 1000  # Chromium's clock; the page's Date is gated
LOAD_STEP_MS = 100
LOAD_STEPS = 100
SETTLE_MS = 600
REAL_TIMEOUT_S = 30.0
MAX_BLOCKED_KEPT = 50  # blocked requests listed in the evidence (all are counted)
MAX_BLOCKED_URL = 200  # characters of a blocked URL kept (page text is data)
LOCAL_SCHEMES = ("data", "blob", "about")


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (lower case), the unit the harness confines a game to."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}"


def _retrieve(task: Any) -> None:
    if not task.cancelled():
        task.exception()


def _exact_frame(png: bytes) -> bytes:
    """``png`` cut or padded to exactly 390×844 (a scaled capture may be a pixel off)."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        if image.size == (VIEWPORT_WIDTH, VIEWPORT_HEIGHT):
            return png
        frame = Image.new("RGB", (VIEWPORT_WIDTH, VIEWPORT_HEIGHT), (0, 0, 0))
        frame.paste(image.convert("RGB"), (0, 0))
    out = io.BytesIO()
    frame.save(out, format="PNG")
    return out.getvalue()


def _snapshot_value(text: Any) -> Any:
    """The layout snapshot from SNAPSHOT_JS's JSON text (``"-0"`` read back as -0.0), or
    None when the evaluation gave something else."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text, object_hook=_negative_zeros)
    except (ValueError, RecursionError):
        return None


# Page scripts that change nothing the harness reads (the drain empties the bridge's own
# queue): calling them keeps the reads taken ahead (GamePage._ahead).
PURE_READS = frozenset((SEEN_JS, ACTIVITY_JS, PAGE_SIZE_JS, SHOWN_SCORE_JS, SNAPSHOT_JS,
                        RISKS_JS, DRAIN_JS))
_TOGETHER = "() => [(() => { try { return [("  # how _read_together's expressions begin


def _read_together(parts: tuple[str, ...]) -> str:
    """One page expression calling each page script of ``parts`` in turn: a list with
    ``[value]`` for each, or null for one that threw (that one is then read on its own)."""
    calls = ", ".join(f"(() => {{ try {{ return [({script})()]; }} catch (e) {{ return null; }} }})()"
                      for script in parts)
    return f"() => [{calls}]"


def _negative_zeros(obj: dict[str, Any]) -> dict[str, Any]:
    return {key: [[-0.0 if v == "-0" else v for v in rect] if isinstance(rect, list) else rect
                  for rect in value] if isinstance(value, list) else value
            for key, value in obj.items()}


class Browser:
    """One Chromium process; open any number of game pages on it."""

    def __init__(self, executable: str = CHROMIUM) -> None:
        if not os.path.exists(executable):
            raise PlayError("play.no_browser",
                            f"Chromium not found at {executable} (install Debian's chromium "
                            "package, or set LINGXI_CHROMIUM)")
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as error:
            raise PlayError("play.no_playwright",
                            "playwright is not installed (pip install 'lingxi[play]')") from error
        self._manager = sync_playwright()
        self._playwright = self._manager.start()
        try:
            self._browser = self._playwright.chromium.launch(
                executable_path=executable, headless=True,
                args=CHROMIUM_ARGS + DETERMINISTIC_RENDER_ARGS)
        except Exception as error:
            self._manager.__exit__(None, None, None)
            raise PlayError("play.browser_failed", f"cannot start Chromium: {error}") from error

    def open(self, url: str, *, seed: int, init_scripts: tuple[str, ...] = ()) -> GamePage:
        """Load ``url`` under paused virtual time, settle it and return the page.

        ``init_scripts`` run after the harness's bridge, before the page's scripts."""
        context = self._browser.new_context(
            viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT},
            device_scale_factor=1, locale="en-US", timezone_id="UTC")
        page = GamePage(context, url, seed, init_scripts)
        try:
            page.load()
        except Exception:
            page.close()
            raise
        return page

    def close(self) -> None:
        try:
            self._browser.close()
        finally:
            self._manager.__exit__(None, None, None)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _fulfil(route: Any) -> None:
    """Answer a clock request with an empty 204 (the page may be gone already)."""
    try:
        route.fulfill(status=204, body="")
    except Exception:
        pass


class GamePage:
    """A game in one browser tab with its virtual clock (the harness's driver)."""

    def __init__(self, context: Any, url: str, seed: int, init_scripts: tuple[str, ...] = ()) -> None:
        self._context = context
        self.url = url
        self.virtual_time_ms = 0
        context.add_init_script(bridge_script(seed))
        for script in init_scripts:
            context.add_init_script(script)
        self.origin = origin_of(url)
        self.blocked: list[dict[str, str]] = []  # the first MAX_BLOCKED_KEPT
        self.blocked_count = 0
        self.missing: list[dict[str, Any]] = []  # the game's own files that failed (≥ 400)
        self.missing_count = 0
        self._holds: dict[str, Any] = {}  # the page's open holds on the clock, by id
        self._released: set[str] = set()  # releases that came before their hold
        self._loaded = False  # after the first navigation, any other one leaves the game
        self._path = urlsplit(url).path  # the game's page: a reload stays, any other leaves
        context.route("**/*", self._route)
        context.route_web_socket("**/*", self._route_socket)
        self._page = context.new_page()
        self._page.on("popup", self._on_popup)
        self._page.on("response", self._on_response)
        self._page.set_default_timeout(REAL_TIMEOUT_S * 1000)
        self._cdp = context.new_cdp_session(self._page)
        self._expired = 0
        self._expiry_waiters: list[Any] = []  # futures _on_expired resolves
        self._pending: list[Any] = []
        self._touch_at: dict[str, float] | None = None  # where the touch is (CSS pixels)
        self._touch_out_of_step = False  # Chromium's touch replies no longer match events
        self._late_input = False  # an input event's arrival was not seen within its bound
        self._in_gesture = False  # between perform's gesture start and end
        self._seen_known: dict[str, int] | None = None  # the page's seen counts, when known
        self._ended: dict[str, int] | None = None  # seen counts of a gesture its release ended
        self._dragged: list[Any] = []  # drag data of a native drag Chromium intercepted
        self._parking: dict[str, int] | None = None  # a park move not yet delivered (seen before)
        self.native_drags = 0
        # Reads taken ahead with another at this paused instant (:meth:`drain_events`), by
        # name; dropped whenever the page may change (time runs, input, a frame, the camera).
        self._ahead: dict[str, Any] = {}
        self._score_asked = False  # shown_score was read since the last read ahead
        self.scale = 1.0  # camera: frame pixels per CSS pixel
        self.css_size = (VIEWPORT_WIDTH, VIEWPORT_HEIGHT)
        self._overflow: float | None = None  # page / window at the last camera move
        self._camera_fixed = False  # the layout follows the window: the camera stays at 1
        self._cdp.on("Emulation.virtualTimeBudgetExpired", self._on_expired)
        self._cdp.on("Input.dragIntercepted", lambda params: self._dragged.append(params["data"]))

    # -- confinement ------------------------------------------------------------------
    def _block(self, kind: str, url: str, resource: str) -> None:
        self.blocked_count += 1
        if len(self.blocked) < MAX_BLOCKED_KEPT:
            self.blocked.append({"kind": kind, "url": url[:MAX_BLOCKED_URL],
                                 "resourceType": resource[:32]})

    def _route(self, route: Any, request: Any) -> None:
        """Let a request through only to the game's own origin, and no navigation away.

        The browser stays on the machine: a tap on an external link, an analytics beacon
        or a CDN script would otherwise reach the network (or leave the game). After the
        game has loaded, a top-level navigation may only reload the game's own page.
        Blocked requests are aborted and listed in the evidence (``summary.blocked``).
        """
        url = request.url
        parts = urlsplit(url)
        if parts.path.startswith(CLOCK_PATH):
            self._clock_request(route, parts.path[len(CLOCK_PATH):])
            return
        try:
            navigation = request.is_navigation_request() and request.frame.parent_frame is None
        except Exception:
            navigation = False
        local = parts.scheme.lower() in LOCAL_SCHEMES
        away = not local and origin_of(url) != self.origin
        if navigation and self._loaded and not local and (away or parts.path != self._path):
            # 204 No Content: the browser stays on the game (an abort would show an error page)
            self._block("navigation", url, request.resource_type)
            route.fulfill(status=204, body="")
        elif away:
            self._block("navigation" if navigation else "request", url, request.resource_type)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def _clock_request(self, route: Any, rest: str) -> None:
        """The page's hold on the virtual clock (page_scripts, ``holdClock``): ``hold/ID`` is
        kept open while a promise that settles in real time (an image decode) is pending,
        so virtual time stands still (pauseIfNetworkFetchesPending); ``release/ID`` answers
        both. Never a network request; ids the page did not open are answered at once."""
        kind, _, key = rest.partition("/")
        key = key[:64]
        if kind == "hold":
            if key in self._released:  # its release came first: nothing to wait for
                self._released.discard(key)
            elif len(self._holds) < MAX_HOLDS:
                self._holds[key] = route
                return
        elif kind == "release":
            held = self._holds.pop(key, None)
            if held is not None:
                _fulfil(held)
            elif len(self._released) < MAX_HOLDS:
                self._released.add(key)
        _fulfil(route)

    def _route_socket(self, socket: Any) -> None:
        """A WebSocket reaches the network only at the game's own origin (ws ↔ http)."""
        url = socket.url
        scheme = {"ws": "http", "wss": "https"}.get(urlsplit(url).scheme.lower(), "")
        if scheme and origin_of(scheme + url[url.index(":"):]) == self.origin:
            socket.connect_to_server()
        else:
            self._block("websocket", url, "websocket")
            socket.close()

    def _on_response(self, response: Any) -> None:
        """A file of the game's own origin that failed (404 and the like) is listed: a build
        made for a base path served at another one asks for files that are not there, and
        the run should say so rather than show a blank canvas (issue 24.4)."""
        try:
            status, url = int(response.status), str(response.url)
        except Exception:
            return
        if status < 400 or origin_of(url) != self.origin:
            return
        self.missing_count += 1
        path = urlsplit(url).path[:MAX_BLOCKED_URL]
        if len(self.missing) < MAX_BLOCKED_KEPT and all(m["path"] != path for m in self.missing):
            self.missing.append({"path": path, "status": status})

    def _on_popup(self, page: Any) -> None:
        """A window the game opens (``window.open``, ``target=_blank``) is closed at once."""
        url = page.url  # its blocked navigation is listed on its own; an error page says nothing
        self._block("popup", "" if url.startswith("chrome-error:") else url, "window")
        try:
            page.close()
        except Exception:
            pass

    def _on_expired(self, _params: Any) -> None:
        self._expired += 1
        for woken in self._expiry_waiters:
            if not woken.done():
                woken.set_result(None)

    def load(self) -> None:
        self._send("Input.setInterceptDrags", {"enabled": True})
        self._send("Emulation.setVirtualTimePolicy",
                       {"policy": "pause", "initialVirtualTime": INITIAL_VIRTUAL_TIME_S})
        try:
            response = self._page.goto(self.url, wait_until="commit")
        except Exception as error:
            raise PlayError("play.unreachable", f"cannot load {self.url}: {error}") from error
        if response is not None and response.status >= 400:
            raise PlayError("play.unreachable", f"{self.url} answered HTTP {response.status}")
        self._loaded = True
        # Held timers never hold the load up: a document is complete once it is parsed and
        # its subresources have loaded (a module's top-level await on a timer included).
        for _ in range(LOAD_STEPS):
            self.advance(LOAD_STEP_MS)
            if self._page.evaluate("document.readyState") == "complete":
                break
        else:
            raise PlayError("play.load_timeout",
                            f"{self.url} did not finish loading in {LOAD_STEPS * LOAD_STEP_MS} ms "
                            "of virtual time")
        self._start_clock()
        self.advance(SETTLE_MS)

    def _start_clock(self) -> None:
        """Start the run's clock, in the harness and in the page alike (the load gate).

        How much virtual time the load took depends on real time, so nothing before this
        may show: the page's clock stood at 0 and its timers were held (page_scripts)."""
        self._ahead.clear()
        try:
            self._page.evaluate(START_CLOCK_JS)
        except Exception as error:
            raise PlayError("play.page_failed", f"cannot start the page's clock: {error}") from error
        for frame in self._page.frames[1:]:  # same-origin frames (others are refused)
            try:
                frame.evaluate(START_CLOCK_JS)
            except Exception:
                pass  # a frame that went away meanwhile
        self.virtual_time_ms = 0

    def advance(self, ms: int) -> None:
        """Let ``ms`` of virtual time run (pausing while network fetches are pending)."""
        if ms <= 0:
            return
        self._deliver_parked()
        self._ahead.clear()
        before = self._expired
        self._send("Emulation.setVirtualTimePolicy",
                       {"policy": "pauseIfNetworkFetchesPending", "budget": ms})
        if self._expired == before and not self._wait_expired(before, REAL_TIMEOUT_S):
            raise PlayError("play.stalled",
                            f"the page did not advance {ms} ms of virtual time in "
                            f"{REAL_TIMEOUT_S:.0f} s (a pending request, or a busy loop)")
        self.virtual_time_ms += ms

    def _wait_expired(self, before: int, timeout_s: float) -> bool:
        """Run Playwright's loop until the budget after ``before`` expired (True) or
        ``timeout_s`` of real time passed: woken by the event itself, not by polling (each
        poll was a round trip to Playwright's driver, and noticed the expiry up to a
        round trip late)."""
        loop = self._cdp._loop
        woken = loop.create_future()
        self._expiry_waiters.append(woken)
        try:
            if self._expired != before:
                return True
            self._page._sync(asyncio.wait([woken], timeout=timeout_s))
        finally:
            self._expiry_waiters.remove(woken)
            if not woken.done():
                woken.cancel()
        return self._expired != before

    def _wait_tasks(self, tasks: list[Any], timeout_s: float) -> None:
        """Run Playwright's loop until every task is done or ``timeout_s`` passed."""
        pending = [task for task in tasks if not task.done()]
        if pending:
            self._page._sync(asyncio.wait(pending, timeout=timeout_s))

    def _evaluate(self, function: str, *args: Any) -> Any:
        """Call the page script ``function`` (a JavaScript function's source) with ``args``
        in the page's main world and return its result by value.

        Straight over the tab's CDP session (``Runtime.evaluate``) rather than Playwright's
        ``page.evaluate``, whose serialization and driver round trip made a page read twice
        as dear (3.7 against 1.8 ms); a step reads the page some twenty times. A script that
        throws raises ``play.page_failed``."""
        self._deliver_parked()
        if function not in PURE_READS and not function.startswith(_TOGETHER):
            self._ahead.clear()  # a script that may change the page: reads ahead are stale
        call = f"({function})({', '.join(json.dumps(arg) for arg in args)})"
        reply = self._send("Runtime.evaluate", {"expression": call, "returnByValue": True})
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise PlayError("play.page_failed", f"a page script failed: {str(text)[:200]}")
        return reply.get("result", {}).get("value")

    def _seen(self) -> dict[str, int]:
        """The input events the page has seen so far, by type (trusted events only)."""
        try:
            out = self._evaluate(SEEN_JS)
        except Exception:
            return {}
        return out if isinstance(out, dict) else {}

    def _seen_reading_ahead(self) -> dict[str, int]:
        """:meth:`_seen`, with the activity counts read ahead in the same page read (after a
        gesture's frame the settle reads them next, at the same paused instant)."""
        try:
            out = self._evaluate(_read_together((SEEN_JS, ACTIVITY_JS)))
        except Exception:
            return {}
        if not isinstance(out, list) or len(out) != 2:
            return {}
        if isinstance(out[1], list) and len(out[1]) == 1:
            self._ahead = {"activity": out[1][0]}
        seen = out[0][0] if isinstance(out[0], list) and len(out[0]) == 1 else None
        return seen if isinstance(seen, dict) else {}

    def _seen_before(self) -> dict[str, int]:
        """What the page had seen before the input about to be sent: within a gesture, the
        count its last event's arrival was confirmed with (only the harness's input makes
        trusted events, so nothing has changed it since), otherwise read now."""
        return self._seen_known if self._seen_known is not None else self._seen()

    def _confirm_seen(self, now: dict[str, int] | None) -> None:
        """Keep ``now`` as what the page has seen (None: an event may still be on its way, so
        the next input's arrival must be judged from a fresh read)."""
        self._seen_known = now if self._in_gesture else None

    @staticmethod
    def _seen_more(now: dict[str, int], before: dict[str, int], kind: str) -> bool:
        """True when the page saw another ``kind`` event since ``before``; a count that went
        down means a new document (a reload), whose counts start again from none."""
        if any(now.get(k, 0) < v for k, v in before.items()):
            before = {}
        return now.get(kind, 0) > before.get(kind, 0)

    def _arrived(self, kind: str, before: dict[str, int], also: str | None = None, *,
                 end: bool = False) -> None:
        """Wait (real time, bounded) until the page has seen the gesture's last event.

        A command's acknowledgement can come before the renderer handles the event
        (drag-and-drop and touch input travel through the browser process), and virtual
        time must not run meanwhile, or the game would see the event at a moment that
        depends on real time and runs would not replay. ``also``: an event type sent just
        before it (a move with its press), which must have arrived too.
        """
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
        read = (lambda: self._seen_ending(kind, also, before)) if end else self._seen
        while not (self._seen_more(now := read(), before, kind)
                   and (also is None or self._seen_more(now, before, also))):
            if time.monotonic() > deadline:
                # it may never come (a frame the bridge cannot reach) or come late: whether
                # it had when time ran on is real time's doing, so the run is at risk
                self._late_input = True
                self._confirm_seen(None)
                return
            self._page.wait_for_timeout(2)
        if end:
            self._ended = now  # the page ended the gesture in that read (ARRIVED_END_JS)
        self._confirm_seen(now)

    def _seen_ending(self, kind: str, also: str | None, before: dict[str, int]) -> dict[str, int]:
        """:meth:`_seen`, ending the gesture in the same read once the release has arrived."""
        try:
            out = self._evaluate(ARRIVED_END_JS, kind, also, before)
        except Exception:
            return {}
        return out if isinstance(out, dict) else {}

    # -- camera -----------------------------------------------------------------------
    def fit_camera(self) -> dict[str, Any] | None:
        """Zoom out so the whole page fits the 390×844 frame; the move made, or None.

        The camera is a wider window at device pixel ratio 1 (the game lays out as on a
        larger screen) whose screenshot is scaled to 390×844, so every cell of a board
        wider than 390 px is seen and can be acted on. It only zooms out (never back in),
        so a layout that grows with the window cannot make it oscillate.

        A layout that overflows the window *by the window's own measure* (an engine's
        cover/ENVELOP scale mode, a canvas sized 120vw) grows as the window widens, so
        zooming out can never fit it: each move revealed as much again to fit (four moves
        down to 0.4 over the first actions in issue 24.4's probe, the board's cells at 40 %
        and shifting every step). When the page overflowed by the same ratio after a move
        as before it, the camera goes back to the phone's own 390×844 (scale 1, what the
        game shows a player, cropped as it means to be) and stays there for the run
        (``followsWindow`` in the step).
        """
        if self._camera_fixed:
            return None
        try:
            size = self._read("size", PAGE_SIZE_JS)
        except Exception:
            return None
        width, height = (float(v) for v in size)
        css_w, css_h = self.css_size
        if width <= css_w + 1 and height <= css_h + 1:
            return None
        ratio = max(width / css_w, height / css_h)
        if self._overflow is not None and abs(ratio - self._overflow) <= FOLLOWS_WINDOW_TOLERANCE:
            self._camera_fixed = True
            self._ahead.clear()
            self.scale = 1.0
            self.css_size = (VIEWPORT_WIDTH, VIEWPORT_HEIGHT)
            self._send("Emulation.setDeviceMetricsOverride",
                       {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT,
                        "deviceScaleFactor": 1, "mobile": False})
            return {"kind": "camera", "scale": 1, "followsWindow": True,
                    "window": {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT},
                    "pageSize": {"width": round(width), "height": round(height)}}
        scale = max(MIN_CAMERA_SCALE,
                    min(VIEWPORT_WIDTH / width, VIEWPORT_HEIGHT / height, self.scale))
        if scale >= self.scale - 1e-6:
            return None
        self._overflow = ratio
        self._ahead.clear()
        self.scale = scale
        self.css_size = (math.ceil(VIEWPORT_WIDTH / scale), math.ceil(VIEWPORT_HEIGHT / scale))
        self._send("Emulation.setDeviceMetricsOverride",
                   {"width": self.css_size[0], "height": self.css_size[1],
                    "deviceScaleFactor": 1, "mobile": False})
        return {"kind": "camera", "scale": round(scale, 4),
                "window": {"width": self.css_size[0], "height": self.css_size[1]},
                "pageSize": {"width": round(width), "height": round(height)}}

    def capture(self) -> bytes:
        """A PNG of the 390×844 frame (the whole zoomed-out window when the camera is out);
        a parked move waiting for a frame is delivered with it."""
        shot: list[bytes] = []
        if self._deliver_parked(lambda: shot.append(self._capture())) and shot:
            return shot[0]  # the park move's own frame shows it
        return self._capture()

    def _capture(self) -> bytes:
        self._ahead.clear()  # a frame may run the page's observers
        params: dict[str, Any] = {"format": "png", "fromSurface": True,
                                  "captureBeyondViewport": False, "optimizeForSpeed": True}
        if self.scale < 1:
            params["clip"] = {"x": 0, "y": 0, "width": VIEWPORT_WIDTH / self.scale,
                              "height": VIEWPORT_HEIGHT / self.scale, "scale": self.scale}
        png = base64.b64decode(self._send("Page.captureScreenshot", params)["data"])
        return png if self.scale == 1 else _exact_frame(png)

    def snapshot(self) -> dict[str, Any]:
        """Element rectangles for the catalog (see page_scripts.SNAPSHOT_JS), in frame pixels."""
        try:
            text = self._read("snapshot", SNAPSHOT_JS)
        except Exception as error:
            raise PlayError("play.page_failed", f"cannot read the page layout: {error}") from error
        snap = _snapshot_value(text)
        if not isinstance(snap, dict):
            return {}
        if self.scale != 1:
            s = self.scale
            snap = {key: [[v * s for v in rect] for rect in rects]
                    for key, rects in snap.items() if isinstance(rects, list)}
        return snap

    def shown_score(self) -> tuple[float, str] | None:
        """The score the page shows in its markup and the element it is in, or None
        (see page_scripts.SHOWN_SCORE_JS); for games that send no score on the bridge."""
        self._score_asked = True
        try:
            found = self._read("score", SHOWN_SCORE_JS)
        except Exception:
            return None
        if (not isinstance(found, list) or len(found) != 2 or isinstance(found[0], bool)
                or not isinstance(found[0], int | float) or not isinstance(found[1], str)):
            return None
        return float(found[0]), found[1]

    def _read(self, name: str, script: str) -> Any:
        """The page script ``script``'s value now: read ahead at this instant, or read now."""
        if name in self._ahead:
            return self._ahead[name]
        return self._evaluate(script)

    def _drain_and_read_ahead(self) -> Any:
        """Drain the bridge, and in the same page read take what a step reads next at the
        same paused instant (the activity counts, the layout snapshot, the page's size while
        the camera may move, the shown score while it is asked for): a round trip each
        otherwise. They stay valid until something may change the page (``_ahead``)."""
        names = ["activity", "snapshot"]
        if not self._camera_fixed:
            names.append("size")
        if self._score_asked:
            names.append("score")
        self._score_asked = False
        scripts = {"activity": ACTIVITY_JS, "snapshot": SNAPSHOT_JS, "size": PAGE_SIZE_JS,
                   "score": SHOWN_SCORE_JS}
        out = self._evaluate(_read_together((DRAIN_JS, *(scripts[n] for n in names))))
        if not isinstance(out, list) or len(out) != len(names) + 1:
            return self._evaluate(DRAIN_JS)
        self._ahead = {name: value[0] for name, value in zip(names, out[1:], strict=True)
                       if isinstance(value, list) and len(value) == 1}
        drained = out[0]
        if not (isinstance(drained, list) and len(drained) == 1):
            return self._evaluate(DRAIN_JS)  # the drain itself threw: read alone, as ever
        return drained[0]

    def drain_events(self) -> tuple[list[Any], int]:
        """Bridge events queued since the last drain, and how many were dropped."""
        try:
            out = self._drain_and_read_ahead()
        except Exception:
            return [], 0
        if not (isinstance(out, list) and len(out) == 2 and isinstance(out[0], list)):
            return [], 1
        dropped = out[1] if isinstance(out[1], int) and out[1] >= 0 else 0
        return out[0], dropped

    def activity(self) -> tuple[int, int, int, int] | None:
        """(short timers pending, DOM mutations so far, bridge events so far, things scheduled
        on the virtual clock), or None."""
        try:
            out = self._read("activity", ACTIVITY_JS)
        except Exception:
            return None
        if (isinstance(out, list) and len(out) == 4
                and all(isinstance(v, int) and not isinstance(v, bool) for v in out)):
            return out[0], out[1], out[2], out[3]
        return None

    def risks(self) -> list[str]:
        """Sources of non-determinism the page used that the harness cannot pin down."""
        try:
            out = self._evaluate(RISKS_JS)
        except Exception:
            out = []
        risks = {str(r)[:64] for r in out} if isinstance(out, list) else set()
        if self._touch_out_of_step:
            risks.add(TOUCH_DESYNC_RISK)
        if self._late_input:
            risks.add(LATE_INPUT_RISK)
        return sorted(risks)

    # -- input ------------------------------------------------------------------------
    def _css(self, x: float, y: float) -> tuple[float, float]:
        return (x / self.scale, y / self.scale) if self.scale != 1 else (x, y)

    def _mouse_params(self, kind: str, x: float, y: float, buttons: int,
                      click_count: int = 0) -> dict[str, Any]:
        cx, cy = self._css(x, y)
        params: dict[str, Any] = {"type": kind, "x": cx, "y": cy, "buttons": buttons,
                                  "pointerType": "mouse"}
        if kind != "mouseMoved" or buttons:
            params["button"] = "left"
        if click_count:
            params["clickCount"] = click_count
        return params

    def _mouse(self, kind: str, x: float, y: float, buttons: int, click_count: int = 0,
               *, wait: bool = False, arrive: bool = True, end: bool = False) -> None:
        before = self._seen_before() if wait and arrive else None
        if before is None:
            self._confirm_seen(None)  # its arrival is not waited for
        self._send_nowait("Input.dispatchMouseEvent",
                          self._mouse_params(kind, x, y, buttons, click_count))
        if wait:
            # a move is delivered with the next animation frame, so its frame is forced at
            # once (a press or a release usually needs none)
            self._settle_sent(frame_first=kind == "mouseMoved")
            if before is not None:
                self._arrived(MOUSE_EVENTS[kind], before, end=end)

    def _press(self, x: float, y: float) -> None:
        """Move onto (x, y) and press there, both sent at once: a press is a discrete event,
        and the page's input queue dispatches the moves queued before it first, so the move
        and the press reach the page one after the other at the same virtual instant, with
        no compositor frame forced for the move (a whole frame rendered, the dearest part
        of a gesture). Both arrivals are waited for."""
        before = self._seen_before()
        self._send_nowait("Input.dispatchMouseEvent", self._mouse_params("mouseMoved", x, y, 0))
        self._send_nowait("Input.dispatchMouseEvent",
                          self._mouse_params("mousePressed", x, y, 1, 1))
        self._settle_sent()
        self._arrived("pointerdown", before, also="pointermove")

    def _touch(self, kind: str, x: float | None = None, y: float | None = None) -> None:
        """One touch event, delivered before virtual time runs again.

        The page never takes a harness touch as a page scroll (``touch-action: none`` at
        its root, see page_scripts): a touch Chromium turned into a scroll left the paused
        page without frames, so neither the touch's later events nor the next screenshot
        came (the touch-only ``play.stalled``). Arrival is judged from the page (its pointer
        or touch event), not from Chromium's reply: an injected touch goes through the
        browser's TouchEmulator, which answers a touch only once its gesture recogniser is
        done with it (the touchend of a tap waits for the GestureTap's acknowledgement),
        so a reply can lag or not come at all. The reply is still waited for, briefly,
        because it also covers what a tap derives (a click); one that does not come marks
        the page as out of step (a replay risk) and replies are not waited for again.
        """
        before = self._seen_before()
        points = [] if x is None or y is None else [dict(zip(("x", "y"), self._css(x, y),
                                                             strict=True))]
        if kind == "touchMove" and points and points[0] == self._touch_at:
            return  # Chromium sends nothing for a move to where the touch already is
        self._touch_at = points[0] if points else None
        reply = self._dispatch("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
        kinds = TOUCH_ARRIVALS[kind]
        if not self._force_frames_until(lambda: self._seen_any(kinds, before),
                                        TOUCH_ARRIVAL_TIMEOUT_S):
            self._late_input = True
            self._confirm_seen(None)
        if not self._touch_out_of_step:
            self._force_frames_until(reply.done, TOUCH_REPLY_TIMEOUT_S)
            if not reply.done():
                self._touch_out_of_step = True
        if reply.done() and reply.exception() is not None:
            raise PlayError("play.input_failed", f"touch input was refused: {reply.exception()}")

    def _seen_any(self, kinds: tuple[str, ...], before: dict[str, int]) -> bool:
        now = self._seen()
        if any(self._seen_more(now, before, kind) for kind in kinds):
            self._confirm_seen(now)
            return True
        return False

    def _force_frames_until(self, done: Any, timeout_s: float) -> bool:
        """Force compositor frames (virtual time stays paused) until ``done()`` or timeout."""
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                return False
            self._force_frame()
            self._page.wait_for_timeout(1)
        return True

    def _frame(self) -> int:
        """Let one animation frame of virtual time run (input is seen frame by frame)."""
        self.advance(FRAME_MS)
        return FRAME_MS

    def _tap(self, x: int, y: int, *, touch: bool = False, end: bool = True) -> int:
        """A press and its release one animation frame later; ``end``: the gesture's last
        event (its arrival read ends the gesture)."""
        if touch:
            self._touch("touchStart", x, y)
            spent = self._frame()
            self._touch("touchEnd")
            return spent
        self._press(x, y)
        spent = self._frame()
        self._mouse("mouseReleased", x, y, 0, 1, wait=True, end=end)
        return spent

    def _drag(self, path: list[dict[str, int]], *, touch: bool = False) -> int:
        """Press at the first point, move along ``path`` one animation frame per point,
        release at the last. A native HTML5 drag the page starts is carried through
        Chromium's own drag machinery (intercepted, then dragenter/dragover/drop)."""
        first, last = path[0], path[-1]
        before = self._seen_before()
        if touch:
            self._touch("touchStart", first["x"], first["y"])
            spent = self._frame()
            for point in path[1:]:
                self._touch("touchMove", point["x"], point["y"])
                spent += self._frame()
            self._touch("touchEnd")
            return spent
        self._dragged.clear()
        self._press(first["x"], first["y"])
        spent = self._frame()
        entered = False
        for point in path[1:]:
            if self._dragged:
                self._drag_event("dragOver" if entered else "dragEnter", point)
                entered = True
            else:
                self._mouse("mouseMoved", point["x"], point["y"], 1, wait=True)
            spent += self._frame()
        if self._dragged:
            if not entered:
                self._drag_event("dragEnter", last)
            self._drag_event("dragOver", last)
            spent += self._frame()
            self._drag_event("drop", last)
            self._arrived("drop", before)
            self.native_drags += 1  # a native drag ends pointer events: no pointerup comes
            self._mouse("mouseReleased", last["x"], last["y"], 0, 1, wait=True, arrive=False)
        else:
            self._mouse("mouseReleased", last["x"], last["y"], 0, 1, wait=True, end=True)
        self._dragged.clear()
        return spent

    def _drag_event(self, kind: str, point: dict[str, int]) -> None:
        x, y = self._css(point["x"], point["y"])
        self._confirm_seen(None)  # the drop's arrival is judged from the gesture's start
        self._send_nowait("Input.dispatchDragEvent",
                          {"type": kind, "x": x, "y": y, "data": self._dragged[-1]})
        self._settle_sent()

    def hover(self, x: int, y: int) -> None:
        """Move the mouse to (x, y) without a button (the hover probe)."""
        self._mouse("mouseMoved", x, y, 0, wait=True)

    def park(self) -> None:
        """Move the mouse off everything (a lifted finger), so hover effects do not linger."""
        self._mouse("mouseMoved", VIEWPORT_WIDTH - 1, VIEWPORT_HEIGHT - 1, 0, wait=True)

    def _park_later(self, seen: dict[str, int]) -> None:
        """Park the mouse after a gesture with the next frame taken instead of a frame forced
        for it: the move waits in the page's input queue (virtual time is paused) until the
        next capture, advance or page read delivers it (:meth:`_deliver_parked`). ``seen``:
        what the page had seen before it."""
        self._send_nowait("Input.dispatchMouseEvent",
                          self._mouse_params("mouseMoved", VIEWPORT_WIDTH - 1,
                                             VIEWPORT_HEIGHT - 1, 0))
        self._parking = seen

    def _deliver_parked(self, frame: Any = None) -> bool:
        """Deliver the park move :meth:`_park_later` queued, before anything else reads the
        page or lets time run. ``frame``: a capture to take as the move's frame; True when the
        page had seen the move once that frame was drawn (a move reaches the page at the start
        of a frame, before its paint, so that frame shows it). Otherwise frames are forced
        until the move has arrived, as for any move (False: take the frame again)."""
        before, self._parking = self._parking, None
        if before is None:
            return True
        if frame is not None:
            frame()
            self._wait_tasks(self._pending, SENT_LOOK_S)
            if (all(task.done() for task in self._pending)
                    and self._seen_more(self._seen_reading_ahead(), before, "pointermove")):
                self._settle_sent()
                return True
        self._settle_sent(frame_first=True)
        self._arrived("pointermove", before)
        return False

    def _send_nowait(self, method: str, params: dict[str, Any]) -> None:
        """Queue a CDP command without waiting for its reply.

        Chromium aligns mouse moves with animation frames, and while virtual time
        is paused no frame comes, so a move's reply can wait forever. Commands are
        therefore queued (in order, on Playwright's loop) and acknowledged by
        :meth:`_settle_sent`, which forces frames.
        """
        self._pending.append(self._dispatch(method, params))

    def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        """Send a CDP command on Playwright's loop; the task that will hold its reply."""
        self._ahead.clear()  # input on its way
        impl = self._cdp._impl_obj  # the sync API has no fire-and-forget send
        try:
            coro = impl.send(method, params, REAL_TIMEOUT_S * 1000)
        except TypeError:  # Playwright before CDP send timeouts
            coro = impl.send(method, params)
        task = self._cdp._loop.create_task(coro)
        task.add_done_callback(_retrieve)  # a late reply's error is read, never logged
        return task

    def _force_frame(self) -> None:
        """Ask for a compositor frame without waiting long for it: while a touch event waits
        for the page, a capture can wait too, and the loop in :meth:`_settle_sent` asks again
        until its own deadline. The frame is captured whole as a lowest-quality JPEG and
        thrown away: a clipped capture (the 1×1 PNG this was) makes Chromium re-emulate the
        view for the clip and back, which cost twice a whole frame (33 against 17 ms)."""
        self._ahead.clear()
        try:
            self._cdp.send("Page.captureScreenshot", FORCE_FRAME_PARAMS,
                           timeout=FORCE_FRAME_TIMEOUT_S * 1000)
        except TypeError:  # Playwright before CDP send timeouts
            self._send("Page.captureScreenshot", FORCE_FRAME_PARAMS)
        except Exception:
            pass  # timed out: try again on the next round

    def _send(self, method: str, params: dict[str, Any]) -> Any:
        """A CDP command and its reply; a stuck browser becomes ``play.stalled``."""
        try:
            return self._cdp.send(method, params, timeout=REAL_TIMEOUT_S * 1000)
        except TypeError:  # Playwright before CDP send timeouts
            return self._cdp.send(method, params)
        except Exception as error:
            if "Timeout" in type(error).__name__ or "timeout" in str(error).lower():
                raise PlayError("play.stalled", f"the browser did not answer {method}") from error
            raise PlayError("play.page_failed", f"{method} failed: {error}") from error

    def _settle_sent(self, *, frame_first: bool = False) -> None:
        """Wait until every queued command is acknowledged, forcing frames meanwhile.

        Virtual time stays paused meanwhile, so the input lands at a known virtual
        instant and runs replay identically. ``frame_first``: a command that cannot be
        acknowledged before a frame (a mouse move, aligned with animation frames) gets
        its frame forced at once rather than after a first look (that look was a round
        trip of real time per move spent on a reply that could not have come).
        """
        deadline = time.monotonic() + REAL_TIMEOUT_S
        if frame_first and any(not task.done() for task in self._pending):
            self._force_frame()
        while any(not task.done() for task in self._pending):
            self._wait_tasks(self._pending, SENT_LOOK_S)
            if any(not task.done() for task in self._pending):
                self._force_frame()
            if time.monotonic() > deadline:
                raise PlayError("play.stalled", "the browser did not take the queued input")
        failed = [task.exception() for task in self._pending if task.exception() is not None]
        self._pending.clear()
        if failed:
            raise PlayError("play.input_failed", f"input was refused: {failed[0]}")

    def perform(self, action: dict[str, Any], model: str = "mouse") -> int:
        """Deliver a normalized action's input; returns the virtual time the gesture took (ms).

        ``model`` is how pointer input reaches the game: ``mouse`` (drags, taps by
        click), ``taps`` (mouse, a swap as two clicks), ``touch`` or ``touch-taps``.
        Settling afterwards is the caller's job (runner.settle).
        """
        kind = action["kind"]
        self._deliver_parked()
        if kind == "none":
            return 0
        if kind == "wait":
            self.advance(action["ms"])
            return action["ms"]
        touch = model.startswith("touch")
        pointer = kind in ("tap", "drag", "swap")
        seen: dict[str, int] | None = None
        if pointer:
            self._gesture(True)
        try:
            if kind == "tap":
                spent = self._tap(action["x"], action["y"], touch=touch)
            elif kind == "key":
                self._ahead.clear()
                self._page.keyboard.press(action["key"])
                spent = 0
            elif kind == "drag":
                spent = self._drag(action["path"], touch=touch)
            elif kind == "swap":
                spent = self._swap(action, touch=touch)
            else:
                raise PlayError("play.bad_action", f"unknown action kind {kind!r}")
        finally:
            if pointer:
                seen = self._gesture(False)
        if pointer and not touch:
            self._park_later(seen if seen is not None else self._seen())
        return spent

    def _swap(self, action: dict[str, Any], *, touch: bool) -> int:
        """A swap's gesture: two taps, or a drag from one cell to the other."""
        a, b = action["from"], action["to"]
        if action["via"] == "taps":
            spent = self._tap(a["x"], a["y"], touch=touch, end=False)
            self.advance(TAP_GAP_MS)
            return spent + TAP_GAP_MS + self._tap(b["x"], b["y"], touch=touch)
        from lingxi.playtest.selection import SWAP_DRAG_POINTS, drag_path

        path = drag_path((a["x"], a["y"]), (b["x"], b["y"]), SWAP_DRAG_POINTS)
        return self._drag(path, touch=touch)

    def _gesture(self, on: bool) -> dict[str, int] | None:
        """Tell the page a gesture starts or ends, and read what it has seen (one page read
        instead of two: the gesture's first event, or the park after it, is judged from it)."""
        self._in_gesture = on
        self._ahead.clear()
        ended, self._ended = self._ended, None
        try:
            # a gesture whose release's arrival read ended it (ARRIVED_END_JS) is not read again
            seen = ended if ended is not None and not on else self._evaluate(GESTURE_JS, on)
        except Exception:
            seen = None  # a page that navigated away mid-action: nothing to guard
        seen = seen if isinstance(seen, dict) else None
        self._seen_known = seen if on else None
        return seen

    def close(self) -> None:
        try:
            self._context.close()
        except Exception:
            pass
