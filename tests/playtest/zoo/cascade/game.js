// Zoo game "cascade": a canvas Match-3 with long, slow cascades. Every animation is
// driven by requestAnimationFrame and timed with performance.now(); refills favour the
// kind below them, so one swap often sets off several chains (0.7–4 s of animation), and
// all input is dropped until the board is still again.
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x3c6ef372;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 8, KINDS = 6, MIN_RUN = 3, PITCH = 46, DRAG_PX = 16;
const SWAP_MS = 400, BACK_MS = 300, CLEAR_MS = 300, FALL_MS = 400, ANIMATED_CHAINS = 5;
const REFILL_LIKE_BELOW = 0.45;
const COLORS = ["#ff006e", "#fb5607", "#ffbe0b", "#3a86ff", "#8ac926", "#e0e0e0"];

const canvas = document.getElementById("board"), g = canvas.getContext("2d");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;

let board = [], score = 0, selected = null;
// the animation: phase, its start (performance.now) and length; fall offsets in rows
let phase = "idle", t0 = 0, length = 0, swapA = null, swapB = null, via = "", hit = new Set(), chain = 0;
let drop = [...Array(N)].map(() => Array(N).fill(0));

function runs(b) {
  const found = new Set();
  for (let r = 0; r < N; r++) {
    for (let c = 0, start = 0; c <= N; c++) {
      if (c === N || b[r][c] !== b[r][start]) {
        if (c - start >= MIN_RUN) for (let i = start; i < c; i++) found.add(r * N + i);
        start = c;
      }
    }
  }
  for (let c = 0; c < N; c++) {
    for (let r = 0, start = 0; r <= N; r++) {
      if (r === N || b[r][c] !== b[start][c]) {
        if (r - start >= MIN_RUN) for (let i = start; i < r; i++) found.add(i * N + c);
        start = r;
      }
    }
  }
  return found;
}
function swapIn(b, a, z) { const t = b[a.r][a.c]; b[a.r][a.c] = b[z.r][z.c]; b[z.r][z.c] = t; }
function hasMove(b) {
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    for (const z of [{ r, c: c + 1 }, { r: r + 1, c }]) {
      if (z.r >= N || z.c >= N) continue;
      swapIn(b, { r, c }, z);
      const ok = runs(b).size > 0;
      swapIn(b, { r, c }, z);
      if (ok) return true;
    }
  }
  return false;
}
function freshBoard() {
  let b;
  do {
    b = [];
    for (let r = 0; r < N; r++) {
      b.push([]);
      for (let c = 0; c < N; c++) {
        let k = randKind();
        while ((c >= 2 && b[r][c - 1] === k && b[r][c - 2] === k) ||
               (r >= 2 && b[r - 1][c] === k && b[r - 2][c] === k)) k = (k + 1) % KINDS;
        b[r].push(k);
      }
    }
  } while (!hasMove(b));
  return b;
}
// Collapse the cleared cells; new tiles often copy the kind below them (long cascades).
function collapse(found) {
  for (let c = 0; c < N; c++) {
    const keep = [];
    for (let r = N - 1; r >= 0; r--) if (!found.has(r * N + c)) keep.push([board[r][c], r]);
    let r = N - 1;
    for (const [k, from] of keep) { board[r][c] = k; drop[r][c] = r - from; r--; }
    const missing = r + 1;
    for (; r >= 0; r--) {
      const below = r + 1 < N ? board[r + 1][c] : -1;
      board[r][c] = below >= 0 && Math.random() < REFILL_LIKE_BELOW ? below : randKind();
      drop[r][c] = missing;
    }
  }
}

function begin(next, ms) { phase = next; t0 = performance.now(); length = ms; }
function clearDrops() { for (const row of drop) row.fill(0); }

function advance() {           // the current phase has run its length
  if (phase === "swap") {
    swapIn(board, swapA, swapB);
    const from = [swapA.r + 1, swapA.c + 1], to = [swapB.r + 1, swapB.c + 1];
    if (runs(board).size === 0) { emit({ type: "swap", valid: false, via, from, to }); begin("back", BACK_MS); return; }
    emit({ type: "swap", valid: true, via, from, to });
    chain = 0; startChain();
  } else if (phase === "back") {
    swapIn(board, swapA, swapB); swapA = swapB = null; phase = "idle";
  } else if (phase === "clear") {
    collapse(hit); begin("fall", FALL_MS);
  } else if (phase === "fall") {
    clearDrops(); startChain();
  }
}
function startChain() {
  swapA = swapB = null;
  for (;;) {
    hit = runs(board);
    if (hit.size === 0) {
      if (!hasMove(board)) { board = freshBoard(); emit({ type: "shuffle" }); }
      phase = "idle"; emit({ type: "idle", score, chains: chain });
      return;
    }
    chain += 1;
    score += hit.size * 10 * chain;
    emit({ type: "match", count: hit.size, chain });
    emit({ type: "score", score });
    document.getElementById("score").textContent = String(score);
    if (chain <= ANIMATED_CHAINS) { begin("clear", CLEAR_MS); return; }
    collapse(hit); clearDrops();          // past five chains: resolve at once (≤ 4 s in all)
  }
}

function draw(p) {
  g.fillStyle = "#3c096c"; g.fillRect(0, 0, 368, 368);
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    let x = c * PITCH + PITCH / 2, y = r * PITCH + PITCH / 2, size = 1;
    if ((phase === "swap" || phase === "back") && swapA) {
      const t = phase === "swap" ? p : 1 - p;
      if (r === swapA.r && c === swapA.c) { x += (swapB.c - c) * PITCH * t; y += (swapB.r - r) * PITCH * t; }
      if (r === swapB.r && c === swapB.c) { x += (swapA.c - c) * PITCH * t; y += (swapA.r - r) * PITCH * t; }
    }
    if (phase === "clear" && hit.has(r * N + c)) size = 1 - p;
    if (phase === "fall") y -= drop[r][c] * PITCH * (1 - p) * (1 - p);
    if (y < -PITCH / 2) continue;
    g.fillStyle = COLORS[board[r][c]];
    g.beginPath(); g.arc(x, y, 18 * size, 0, Math.PI * 2); g.fill();
    if (selected && selected.r === r && selected.c === c) {
      g.strokeStyle = "#ffffff"; g.lineWidth = 3; g.strokeRect(x - 21, y - 21, 42, 42);
    }
  }
}
function frame() {
  let p = 0;
  if (phase !== "idle") {
    p = Math.min(1, (performance.now() - t0) / length);
    if (p >= 1) { advance(); p = 0; }
  }
  draw(p);
  requestAnimationFrame(frame);
}

function trySwap(a, z, how) {
  if (phase !== "idle") return;
  selected = null; swapA = a; swapB = z; via = how;
  begin("swap", SWAP_MS);
}
function cellAt(e) {
  const box = canvas.getBoundingClientRect();
  const c = Math.floor((e.clientX - box.left) / PITCH), r = Math.floor((e.clientY - box.top) / PITCH);
  return r >= 0 && r < N && c >= 0 && c < N ? { r, c } : null;
}
// All input is dropped while anything moves: no queueing, no selection change.
let press = null;
canvas.addEventListener("pointerdown", (e) => {
  if (phase !== "idle") { press = null; return; }
  const cell = cellAt(e);
  if (cell) press = { cell, x: e.clientX, y: e.clientY, done: false };
});
canvas.addEventListener("pointermove", (e) => {
  if (!press || press.done || phase !== "idle") return;
  const dx = e.clientX - press.x, dy = e.clientY - press.y;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < DRAG_PX) return;
  press.done = true;
  const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
  const z = { r: press.cell.r + d.r, c: press.cell.c + d.c };
  if (z.r >= 0 && z.r < N && z.c >= 0 && z.c < N) trySwap(press.cell, z, "drag");
});
canvas.addEventListener("pointerup", (e) => {
  const p = press; press = null;
  if (!p || p.done || phase !== "idle") return;
  const cell = cellAt(e) || p.cell;
  if (selected && adjacent(selected, cell)) { trySwap(selected, cell, "taps"); return; }
  selected = selected && selected.r === cell.r && selected.c === cell.c ? null : cell;
});

board = freshBoard();
requestAnimationFrame(frame);
emit({ type: "start", seed: SEED, rows: N, columns: N });

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: MIN_RUN,
  board: () => board.map((row) => row.slice()),
  busy: () => phase !== "idle",
  score: () => score,
  cellCenter: (r, c) => {
    const box = canvas.getBoundingClientRect();
    return [box.left + c * PITCH + PITCH / 2, box.top + r * PITCH + PITCH / 2];
  },
};
