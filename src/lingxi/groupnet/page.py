"""The browser page for one Hold'em seat (``lingxi group join --ui``).

A small Starlette app beside the member's TCP link, in the same event loop:
``GET /?t=TOKEN`` the page, ``GET /state?t=TOKEN`` the seat's view (its own
cards, the board, the pot, whose turn, its legal moves when it is due),
``POST /move?t=TOKEN`` ``{"move": "call"}``. The token (in the printed URL)
keeps other local users from reading the cards or moving. Everything shown
comes from the seat's own verified log; the page writes it with
``textContent`` only (text from a peer is data, never markup).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import socket
from collections.abc import Iterator
from typing import Any

from lingxi.group.agents import HoldemAgent

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Lingxi Hold'em seat</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem;max-width:40rem}
.cards{font-size:2rem;letter-spacing:.3rem}button{font-size:1.2rem;margin:.3rem}
table{border-collapse:collapse}td,th{padding:.2rem .6rem;border-bottom:1px solid #ddd}</style>
</head><body>
<h1>Hold'em: seat <span id="seat"></span></h1>
<p>Your cards: <span class="cards" id="mine"></span></p>
<p>Board: <span class="cards" id="board"></span></p>
<p>Pot <b id="pot"></b> · street <b id="stage"></b> · <span id="turn"></span></p>
<div id="moves"></div>
<table><thead><tr><th>seat</th><th>stack</th><th></th></tr></thead><tbody id="seats"></tbody></table>
<p id="result"></p>
<script>
const token = new URLSearchParams(location.search).get("t");
const q = (path) => path + "?t=" + encodeURIComponent(token);
function text(id, value) { document.getElementById(id).textContent = value; }
async function move(name) {
  await fetch(q("/move"), {method: "POST", headers: {"Content-Type": "application/json"},
                           body: JSON.stringify({move: name})});
  refresh();
}
async function refresh() {
  const r = await fetch(q("/state"));
  if (!r.ok) return;
  const s = await r.json();
  text("seat", s.seat); text("mine", (s.your_cards || []).join(" ") || "-");
  text("board", (s.board || []).join(" ") || "-"); text("pot", s.pot); text("stage", s.stage);
  text("turn", s.due === s.seat ? "your turn" : (s.due === null ? "" : "seat " + s.due + " to act"));
  const moves = document.getElementById("moves"); moves.replaceChildren();
  for (const m of s.legal) {
    const b = document.createElement("button"); b.textContent = m + (m === "call" ? " " + s.to_call : "");
    b.onclick = () => move(m); moves.appendChild(b);
  }
  const rows = document.getElementById("seats"); rows.replaceChildren();
  s.stacks.forEach((stack, i) => {
    const tr = document.createElement("tr");
    for (const v of [i, stack, s.folded.includes(i) ? "folded" : ""]) {
      const td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
    }
    rows.appendChild(tr);
  });
  text("result", s.result ? "hand over: " + s.result.kind + ", chips " + s.result.delta.join(" / ") : "");
}
setInterval(refresh, 700); refresh();
</script></body></html>"""


class SeatPage:
    """The seat's moves come from the page: ``decide`` waits for a POST /move."""

    def __init__(self, agent: HoldemAgent, seat: int) -> None:
        self.agent, self.seat = agent, seat
        self.token = secrets.token_urlsafe(24)
        self.waiting: list[str] = []
        self.moves: asyncio.Queue[str] = asyncio.Queue()
        agent.decide = self.decide

    async def decide(self, hand: Any, me: int, legal: list[str]) -> str:
        self.waiting = list(legal)
        try:
            return await self.moves.get()
        finally:
            self.waiting = []

    def state(self) -> dict[str, Any]:
        hand = self.agent.hand
        started = hand.deck is not None
        return {"seat": self.seat, "stage": hand.stage,
                "your_cards": [c for c in self.agent.player.cards(hand, self.seat) if c],
                "board": hand.board(), "pot": hand.pot() if started else 0,
                "to_call": hand.to_call(self.seat) if started and hand.street else 0,
                "stacks": list(hand.stacks), "folded": sorted(hand.folded),
                "due": hand.due(), "legal": list(self.waiting), "result": hand.result}

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, JSONResponse
        from starlette.routing import Route

        def allowed(request: Request) -> bool:
            given = request.query_params.get("t", "")
            return hmac.compare_digest(given.encode(), self.token.encode())

        def refused(status: int, code: str, message: str) -> JSONResponse:
            return JSONResponse({"ok": False, "error": {"code": code, "message": message}},
                                status_code=status)

        async def page(request: Request) -> Any:
            if not allowed(request):
                return refused(403, "ui.bad_token", "open the URL the command printed")
            return HTMLResponse(PAGE, headers={"Content-Security-Policy":
                                               "default-src 'self'; script-src 'unsafe-inline'; "
                                               "style-src 'unsafe-inline'"})

        async def state(request: Request) -> Any:
            if not allowed(request):
                return refused(403, "ui.bad_token", "open the URL the command printed")
            return JSONResponse(self.state())

        async def move(request: Request) -> Any:
            if not allowed(request):
                return refused(403, "ui.bad_token", "open the URL the command printed")
            body = await request.body()
            if len(body) > 1024:
                return refused(413, "ui.too_large", "a move is a few bytes")
            try:
                import json

                chosen = json.loads(body).get("move")
            except (ValueError, AttributeError):
                return refused(400, "ui.bad_json", "send {\"move\": NAME}")
            if chosen not in self.waiting:
                return refused(409, "holdem.illegal_move", f"legal now: {self.waiting}")
            self.waiting = []
            self.moves.put_nowait(chosen)
            return JSONResponse({"ok": True, "move": chosen})

        return Starlette(routes=[Route("/", page), Route("/state", state),
                                 Route("/move", move, methods=["POST"])])

    async def start(self, address: str, port: int) -> tuple[str, asyncio.Task[None]]:
        """Serve the page; the URL to open (with its token) and the server's task."""
        import uvicorn

        class Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((address, port))
        sock.setblocking(False)
        config = uvicorn.Config(self.app(), lifespan="off", log_config=None, log_level="error",
                                access_log=False, server_header=False, http="h11", ws="none")
        server = Quiet(config)
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        bound = sock.getsockname()
        return f"http://{bound[0]}:{bound[1]}/?t={self.token}", task
