"""A browser-free driver and a scripted in-test actor for the play loop."""

from __future__ import annotations

import io
import random
from typing import Any

from PIL import Image, ImageDraw

COLOURS = [(220, 40, 40), (40, 170, 60), (40, 90, 220), (240, 200, 30), (160, 60, 200),
           (250, 130, 20)]
X0, Y0, PITCH, TILE = 15, 200, 45, 41


def board_rects(rows: int = 8, columns: int = 8) -> list[list[float]]:
    return [[X0 + c * PITCH, Y0 + r * PITCH, TILE, TILE] for r in range(rows) for c in range(columns)]


def render(board: list[list[int]] | None) -> bytes:
    image = Image.new("RGB", (390, 844), (250, 250, 245))
    draw = ImageDraw.Draw(image)
    draw.rectangle([20, 20, 120, 60], fill=(30, 30, 30))  # a button
    if board:
        for r, row in enumerate(board):
            for c, kind in enumerate(row):
                x, y = X0 + c * PITCH, Y0 + r * PITCH
                draw.rectangle([x, y, x + TILE - 1, y + TILE - 1], fill=COLOURS[kind])
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


class FakeDriver:
    """A 'game': an 8×8 board (DOM tiles) and one button; a tap on the button emits 'press'."""

    def __init__(self, *, board: bool = True, seed: int = 1) -> None:
        rng = random.Random(seed)
        self.board = [[rng.randrange(6) for _ in range(8)] for _ in range(8)] if board else None
        self.virtual_time_ms = 0
        self.performed: list[dict[str, Any]] = []
        self.models: list[str] = []
        self.queue: list[Any] = [[0, '{"type":"start"}']]

    def capture(self) -> bytes:
        return render(self.board)

    def snapshot(self) -> dict[str, Any]:
        return {"interactive": [[20, 20, 101, 41]],
                "boxes": board_rects() if self.board else [], "canvases": []}

    def advance(self, ms: int) -> None:
        self.virtual_time_ms += ms

    def perform(self, action: dict[str, Any], model: str = "mouse") -> int:
        self.performed.append(action)
        self.models.append(model)
        if action["kind"] == "none":
            return 0
        spent = action["ms"] if action["kind"] == "wait" else 0
        if action["kind"] == "tap" and 20 <= action["x"] <= 121 and 20 <= action["y"] <= 61:
            self.queue.append([self.virtual_time_ms + 5, '{"type":"press","n":1}'])
        if action["kind"] == "swap" and self.board:
            (r1, c1), (r2, c2) = (((p["y"] - Y0) // PITCH, (p["x"] - X0) // PITCH)
                                  for p in (action["from"], action["to"]))
            self.board[r1][c1], self.board[r2][c2] = self.board[r2][c2], self.board[r1][c1]
            self.queue.append([self.virtual_time_ms + 10, '{"type":"score","score":30}'])
        self.virtual_time_ms += spent
        return spent

    def drain_events(self) -> tuple[list[Any], int]:
        out, self.queue = self.queue, []
        return out, 0


class ListActor:
    """Answers from a list; an Exception instance in the list is raised instead."""

    def __init__(self, answers: list[Any], then: Any = None) -> None:
        self.answers = list(answers)
        self.then = then if then is not None else {"type": "wait", "ms": 100}
        self.views: list[dict[str, Any]] = []

    def select(self, view: dict[str, Any], frame_png: bytes) -> Any:
        self.views.append(view)
        answer = self.answers.pop(0) if self.answers else self.then
        if isinstance(answer, BaseException):
            raise answer
        return answer
