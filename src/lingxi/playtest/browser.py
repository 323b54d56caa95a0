"""Debian's Chromium driven by Playwright under DevTools virtual time.

Virtual time is paused between actions; each action dispatches its input and
then lets virtual time run for the action's budget (600 ms, or the ``wait``
length), so timers, animations and ``Date.now()`` see the same clock on every
run. Mouse input goes straight through CDP ``Input.dispatchMouseEvent``
(Playwright's own drag waits forever while time is paused); frames are taken
with CDP ``Page.captureScreenshot`` at device pixel ratio 1.
"""

from __future__ import annotations

import base64
import os
import time
from typing import Any

from lingxi.playtest.errors import PlayError
from lingxi.playtest.geometry import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from lingxi.playtest.page_scripts import DRAIN_JS, SNAPSHOT_JS, bridge_script

CHROMIUM = os.environ.get("LINGXI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# Rendering in one deterministic pass: without these, a few anti-aliased edge pixels
# differ between runs and the same seed would not give the same frame hashes.
DETERMINISTIC_RENDER_ARGS = ["--run-all-compositor-stages-before-draw", "--disable-partial-raster",
                             "--num-raster-threads=1", "--disable-threaded-animation",
                             "--disable-checker-imaging"]
ACTION_BUDGET_MS = 600
TAP_GAP_MS = 150  # between the two taps of a swap made by taps
INITIAL_VIRTUAL_TIME_S = 1_767_225_600  # 2026-01-01T00:00:00Z: Date.now() starts here
LOAD_STEP_MS = 100
LOAD_STEPS = 100
SETTLE_MS = 600
REAL_TIMEOUT_S = 30.0


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

    def open(self, url: str, *, seed: int) -> GamePage:
        """Load ``url`` under paused virtual time, settle it and return the page."""
        context = self._browser.new_context(
            viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT},
            device_scale_factor=1, locale="en-US", timezone_id="UTC")
        page = GamePage(context, url, seed)
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


class GamePage:
    """A game in one browser tab with its virtual clock (the harness's driver)."""

    def __init__(self, context: Any, url: str, seed: int) -> None:
        self._context = context
        self.url = url
        self.virtual_time_ms = 0
        context.add_init_script(bridge_script(seed))
        self._page = context.new_page()
        self._page.set_default_timeout(REAL_TIMEOUT_S * 1000)
        self._cdp = context.new_cdp_session(self._page)
        self._expired = 0
        self._pending: list[Any] = []
        self._cdp.on("Emulation.virtualTimeBudgetExpired", self._on_expired)

    def _on_expired(self, _params: Any) -> None:
        self._expired += 1

    def load(self) -> None:
        self._send("Emulation.setVirtualTimePolicy",
                       {"policy": "pause", "initialVirtualTime": INITIAL_VIRTUAL_TIME_S})
        try:
            response = self._page.goto(self.url, wait_until="commit")
        except Exception as error:
            raise PlayError("play.unreachable", f"cannot load {self.url}: {error}") from error
        if response is not None and response.status >= 400:
            raise PlayError("play.unreachable", f"{self.url} answered HTTP {response.status}")
        for _ in range(LOAD_STEPS):
            self.advance(LOAD_STEP_MS)
            if self._page.evaluate("document.readyState") == "complete":
                break
        else:
            raise PlayError("play.load_timeout",
                            f"{self.url} did not finish loading in {LOAD_STEPS * LOAD_STEP_MS} ms "
                            "of virtual time")
        self.advance(SETTLE_MS)

    def advance(self, ms: int) -> None:
        """Let ``ms`` of virtual time run (pausing while network fetches are pending)."""
        if ms <= 0:
            return
        before = self._expired
        self._send("Emulation.setVirtualTimePolicy",
                       {"policy": "pauseIfNetworkFetchesPending", "budget": ms})
        deadline = time.monotonic() + REAL_TIMEOUT_S
        while self._expired == before:
            self._page.wait_for_timeout(1)
            if time.monotonic() > deadline:
                raise PlayError("play.stalled",
                                f"the page did not advance {ms} ms of virtual time in "
                                f"{REAL_TIMEOUT_S:.0f} s (a pending request, or a busy loop)")
        self.virtual_time_ms += ms

    def capture(self) -> bytes:
        """A PNG of the 390×844 viewport."""
        result = self._send("Page.captureScreenshot",
                                {"format": "png", "fromSurface": True,
                                 "captureBeyondViewport": False})
        return base64.b64decode(result["data"])

    def snapshot(self) -> dict[str, Any]:
        """Element rectangles for the catalog (see page_scripts.SNAPSHOT_JS)."""
        try:
            snap = self._page.evaluate(SNAPSHOT_JS)
        except Exception as error:
            raise PlayError("play.page_failed", f"cannot read the page layout: {error}") from error
        return snap if isinstance(snap, dict) else {}

    def drain_events(self) -> tuple[list[Any], int]:
        """Bridge events queued since the last drain, and how many were dropped."""
        try:
            out = self._page.evaluate(DRAIN_JS)
        except Exception:
            return [], 0
        if not (isinstance(out, list) and len(out) == 2 and isinstance(out[0], list)):
            return [], 1
        dropped = out[1] if isinstance(out[1], int) and out[1] >= 0 else 0
        return out[0], dropped

    def _mouse(self, kind: str, x: int, y: int, buttons: int, click_count: int = 0) -> None:
        params: dict[str, Any] = {"type": kind, "x": x, "y": y, "buttons": buttons,
                                  "pointerType": "mouse"}
        if kind != "mouseMoved" or buttons:
            params["button"] = "left"
        if click_count:
            params["clickCount"] = click_count
        self._send("Input.dispatchMouseEvent", params)

    def _tap(self, x: int, y: int) -> None:
        # No hover move first: a mouse move dispatched after virtual time ran waits for a
        # compositor frame that paused virtual time never produces (see _drag).
        self._mouse("mousePressed", x, y, 1, 1)
        self._mouse("mouseReleased", x, y, 0, 1)

    def _send_nowait(self, method: str, params: dict[str, Any]) -> None:
        """Queue a CDP command without waiting for its reply.

        Chromium aligns mouse moves with animation frames, and while virtual time
        is paused no frame comes, so a move's reply can wait forever. Moves are
        therefore queued (in order, on Playwright's loop) and acknowledged later,
        once a frame is captured (:meth:`_settle_sent`).
        """
        impl = self._cdp._impl_obj  # the sync API has no fire-and-forget send
        try:
            coro = impl.send(method, params, REAL_TIMEOUT_S * 1000)
        except TypeError:  # Playwright before CDP send timeouts
            coro = impl.send(method, params)
        self._pending.append(self._cdp._loop.create_task(coro))

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

    def _settle_sent(self) -> None:
        """Wait until every queued command is acknowledged, forcing frames meanwhile.

        Called before virtual time runs, so the whole gesture reaches the page at
        one virtual instant and runs replay identically.
        """
        deadline = time.monotonic() + REAL_TIMEOUT_S
        while any(not task.done() for task in self._pending):
            self._page.wait_for_timeout(1)
            if any(not task.done() for task in self._pending):
                self.capture()  # a frame delivers the frame-aligned mouse moves
            if time.monotonic() > deadline:
                raise PlayError("play.stalled", "the browser did not take the queued input")
        failed = [task.exception() for task in self._pending if task.exception() is not None]
        self._pending.clear()
        if failed:
            raise PlayError("play.input_failed", f"input was refused: {failed[0]}")

    def _drag(self, path: list[dict[str, int]]) -> None:
        """Press at the first point, move along ``path``, release at the last."""
        first = path[0]
        self._mouse("mousePressed", first["x"], first["y"], 1, 1)
        for point in path[1:]:
            self._send_nowait("Input.dispatchMouseEvent",
                              {"type": "mouseMoved", "x": point["x"], "y": point["y"],
                               "buttons": 1, "button": "left", "pointerType": "mouse"})
        last = path[-1]
        self._send_nowait("Input.dispatchMouseEvent",
                          {"type": "mouseReleased", "x": last["x"], "y": last["y"], "buttons": 0,
                           "button": "left", "clickCount": 1, "pointerType": "mouse"})
        self._settle_sent()

    def perform(self, action: dict[str, Any]) -> int:
        """Execute a normalized action; returns the virtual time it was given (ms)."""
        start = self.virtual_time_ms
        kind = action["kind"]
        if kind == "none":
            return 0
        if kind == "wait":
            self.advance(action["ms"])
            return action["ms"]
        mouse = kind in ("tap", "drag", "swap")
        if mouse:
            self._gesture(True)
        if kind == "tap":
            self._tap(action["x"], action["y"])
        elif kind == "key":
            self._page.keyboard.press(action["key"])
        elif kind == "drag":
            self._drag(action["path"])
        elif kind == "swap":
            a, b = action["from"], action["to"]
            if action["via"] == "taps":
                self._tap(a["x"], a["y"])
                self.advance(TAP_GAP_MS)
                self._tap(b["x"], b["y"])
            else:
                from lingxi.playtest.selection import drag_path

                self._drag(drag_path((a["x"], a["y"]), (b["x"], b["y"])))
        else:
            raise PlayError("play.bad_action", f"unknown action kind {kind!r}")
        self.advance(ACTION_BUDGET_MS - (self.virtual_time_ms - start))
        if mouse:
            self._gesture(False)
        return ACTION_BUDGET_MS

    def _gesture(self, on: bool) -> None:
        try:
            self._page.evaluate("(on) => window.__lingxiGesture && window.__lingxiGesture(on)", on)
        except Exception:
            pass  # a page that navigated away mid-action: nothing to guard

    def close(self) -> None:
        try:
            self._context.close()
        except Exception:
            pass
