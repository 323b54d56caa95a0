// Zoo game "touch-only": an SVG Match-3 that listens to touchstart / touchmove / touchend
// only — no mouse, pointer or click listeners — like many games written for phones.
// Swipe a tile towards a neighbour, or tap one tile and then a neighbour.
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x510e527f;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 8, KINDS = 6, MIN_RUN = 3, PITCH = 45, TILE = 39, SWIPE_PX = 16;
const SWAP_MS = 120, CLEAR_MS = 180, FALL_MS = 180;
const COLORS = ["#d62828", "#f77f00", "#fcbf49", "#2a9d8f", "#264653", "#9d4edd"];
const SVG = "http://www.w3.org/2000/svg";

const svg = document.getElementById("board");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;
const wait = (ms) => new Promise((done) => setTimeout(done, ms));

let board = [], score = 0, busy = false, selected = null, cleared = new Set();

function runs(b) {
  const hit = new Set();
  for (let r = 0; r < N; r++) {
    for (let c = 0, start = 0; c <= N; c++) {
      if (c === N || b[r][c] !== b[r][start]) {
        if (c - start >= MIN_RUN) for (let i = start; i < c; i++) hit.add(r * N + i);
        start = c;
      }
    }
  }
  for (let c = 0; c < N; c++) {
    for (let r = 0, start = 0; r <= N; r++) {
      if (r === N || b[r][c] !== b[start][c]) {
        if (r - start >= MIN_RUN) for (let i = start; i < r; i++) hit.add(i * N + c);
        start = r;
      }
    }
  }
  return hit;
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
function collapse(b, hit) {
  for (let c = 0; c < N; c++) {
    const keep = [];
    for (let r = N - 1; r >= 0; r--) if (!hit.has(r * N + c)) keep.push(b[r][c]);
    for (let r = N - 1, i = 0; r >= 0; r--, i++) b[r][c] = i < keep.length ? keep[i] : randKind();
  }
}

const rects = [];
for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
  const rect = document.createElementNS(SVG, "rect");
  rect.setAttribute("x", String(c * PITCH + (PITCH - TILE) / 2));
  rect.setAttribute("y", String(r * PITCH + (PITCH - TILE) / 2));
  rect.setAttribute("width", String(TILE)); rect.setAttribute("height", String(TILE));
  rect.setAttribute("rx", "7");
  svg.appendChild(rect); rects.push(rect);
}
function render() {
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    const rect = rects[r * N + c], i = r * N + c;
    rect.setAttribute("fill", cleared.has(i) ? "#e9f5db" : COLORS[board[r][c]]);
    const sel = selected && selected.r === r && selected.c === c;
    rect.setAttribute("stroke", sel ? "#111111" : "none");
    rect.setAttribute("stroke-width", sel ? "3" : "0");
  }
  document.getElementById("score").textContent = String(score);
}

async function trySwap(a, z, via) {
  if (busy) return;
  busy = true; selected = null;
  const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
  swapIn(board, a, z); render();
  await wait(SWAP_MS);
  if (runs(board).size === 0) {
    emit({ type: "swap", valid: false, via, from, to });
    swapIn(board, a, z); render(); busy = false;
    return;
  }
  emit({ type: "swap", valid: true, via, from, to });
  for (let chain = 1; ; chain++) {
    const hit = runs(board);
    if (hit.size === 0) break;
    score += hit.size * 10 * chain;
    emit({ type: "match", count: hit.size, chain });
    emit({ type: "score", score });
    cleared = hit; render();
    await wait(CLEAR_MS);
    cleared = new Set(); collapse(board, hit); render();
    await wait(FALL_MS);
  }
  if (!hasMove(board)) { board = freshBoard(); emit({ type: "shuffle" }); }
  busy = false; render();
  emit({ type: "idle", score });
}

function cellAt(x, y) {
  const box = svg.getBoundingClientRect();
  const c = Math.floor((x - box.left) / PITCH), r = Math.floor((y - box.top) / PITCH);
  return r >= 0 && r < N && c >= 0 && c < N ? { r, c } : null;
}
let touch = null;
svg.addEventListener("touchstart", (e) => {
  e.preventDefault();
  if (busy || touch || e.changedTouches.length === 0) return;
  const t = e.changedTouches[0], cell = cellAt(t.clientX, t.clientY);
  if (cell) touch = { id: t.identifier, cell, x: t.clientX, y: t.clientY, swiped: false };
}, { passive: false });
svg.addEventListener("touchmove", (e) => {
  e.preventDefault();
  if (!touch || touch.swiped) return;
  const t = [...e.changedTouches].find((one) => one.identifier === touch.id);
  if (!t) return;
  const dx = t.clientX - touch.x, dy = t.clientY - touch.y;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < SWIPE_PX) return;
  touch.swiped = true;
  const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
  const z = { r: touch.cell.r + d.r, c: touch.cell.c + d.c };
  if (z.r >= 0 && z.r < N && z.c >= 0 && z.c < N) trySwap(touch.cell, z, "swipe");
}, { passive: false });
svg.addEventListener("touchend", (e) => {
  e.preventDefault();
  if (!touch || ![...e.changedTouches].some((one) => one.identifier === touch.id)) return;
  const done = touch; touch = null;
  if (done.swiped || busy) return;
  const cell = done.cell;
  if (selected && adjacent(selected, cell)) { trySwap(selected, cell, "taps"); return; }
  selected = selected && selected.r === cell.r && selected.c === cell.c ? null : cell;
  render();
}, { passive: false });
svg.addEventListener("touchcancel", () => { touch = null; });

board = freshBoard();
render();
emit({ type: "start", seed: SEED, rows: N, columns: N });

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: MIN_RUN,
  board: () => board.map((row) => row.slice()),
  busy: () => busy,
  score: () => score,
  cellCenter: (r, c) => {
    const box = svg.getBoundingClientRect();
    return [box.left + c * PITCH + PITCH / 2, box.top + r * PITCH + PITCH / 2];
  },
};
