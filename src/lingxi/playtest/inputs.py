"""Which input model a game answers, found from its responses and remembered.

Games take pointer input in different ways: a mouse drag (pointer or mouse
events, or a native HTML5 drag that the browser carries), two clicks
(click-select-click), a touch drag, or two touch taps. Nothing game-specific
decides it: a swap starts with the model the game last answered (a mouse drag
at first); when the game does not *receive* it (no two-cell or larger change of
the board in any frame while it settles, see runner), the same swap is tried
with the next model within the same action, each try a recorded harness step,
and the first model the game receives is remembered. A remembered model is
dropped after two unreceived swaps in a row (the game may just have rejected
them), so a game that changes its input handling is followed.
"""

from __future__ import annotations

MODELS = ("mouse", "taps", "touch", "touch-taps")
FORGET_AFTER = 2


class InputModels:
    def __init__(self, swap_via: str = "auto") -> None:
        self.swap_via = swap_via  # auto | drag | taps (drag/taps: a fixed mouse model)
        self.confirmed: str | None = None
        self._misses = 0

    def order(self) -> list[str]:
        """Models to try for a swap, the remembered one first."""
        if self.swap_via == "drag":
            return ["mouse"]
        if self.swap_via == "taps":
            return ["taps"]
        if self.confirmed is not None and self._misses < FORGET_AFTER:
            return [self.confirmed]
        first = [self.confirmed] if self.confirmed else []
        return first + [m for m in MODELS if m not in first]

    def pointer(self) -> str:
        """The model for taps and plain drags: touch once the game answered touch."""
        return "touch" if (self.confirmed or "").startswith("touch") else "mouse"

    def received(self, model: str) -> None:
        self.confirmed = model
        self._misses = 0

    def missed(self) -> None:
        if self.confirmed is not None:
            self._misses += 1


def via(model: str) -> str:
    """The ``via`` of a swap action performed with ``model`` (evidence schema: drag | taps)."""
    return "taps" if model.endswith("taps") else "drag"
