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
them), so a game that changes its input handling is followed. A model tried in
``DROP_AFTER`` swaps and never received is dropped for the rest of the run (each
action would otherwise spend its virtual time on every model, issue 24.1); when every
model has been dropped, the order starts over with the first.
"""

from __future__ import annotations

MODELS = ("mouse", "taps", "touch", "touch-taps")
FORGET_AFTER = 2
DROP_AFTER = 3


class InputModels:
    def __init__(self, swap_via: str = "auto") -> None:
        self.swap_via = swap_via  # auto | drag | taps (drag/taps: a fixed mouse model)
        self.confirmed: str | None = None
        self._misses = 0
        self.tries: dict[str, int] = {}  # swaps tried with each model
        self.ever: set[str] = set()  # models the game received at least once

    def order(self) -> list[str]:
        """Models to try for a swap, the remembered one first."""
        if self.swap_via == "drag":
            return ["mouse"]
        if self.swap_via == "taps":
            return ["taps"]
        if self.confirmed is not None and self._misses < FORGET_AFTER:
            return [self.confirmed]
        first = [self.confirmed] if self.confirmed else []
        order = first + [m for m in MODELS if m not in first and not self.dropped(m)]
        if not order:  # nothing was ever received: probe every model again
            self.tries.clear()
            order = list(MODELS)
        return order

    def dropped(self, model: str) -> bool:
        """True when ``model`` was tried ``DROP_AFTER`` times and the game never received it."""
        return model not in self.ever and self.tries.get(model, 0) >= DROP_AFTER

    def tried(self, model: str) -> None:
        self.tries[model] = self.tries.get(model, 0) + 1

    def pointer(self) -> str:
        """The model for taps and plain drags: touch once the game answered touch."""
        return "touch" if (self.confirmed or "").startswith("touch") else "mouse"

    def received(self, model: str) -> None:
        self.confirmed = model
        self.ever.add(model)
        self._misses = 0

    def missed(self) -> None:
        if self.confirmed is not None:
            self._misses += 1


def via(model: str) -> str:
    """The ``via`` of a swap action performed with ``model`` (evidence schema: drag | taps)."""
    return "taps" if model.endswith("taps") else "drag"
