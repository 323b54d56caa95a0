// Zoo game "wide-start": a plain-canvas 9×9 Match-3 whose board (720 px) is wider than a
// 390 px phone viewport, placed at x = 33, behind a start menu. The board is only shown
// after "Start" is pressed. Input: drag a tile onto a neighbour, or tap two (pointer events).
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x7feb352d;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 9, KINDS = 6, MIN_RUN = 3, PITCH = 80, TILE = 68, DRAG_PX = 20;
const SWAP_MS = 150, CLEAR_MS = 150, FALL_MS = 200;
const COLORS = ["#e63946", "#fb8500", "#8ecae6", "#219ebc", "#80b918", "#c77dff"];

const canvas = document.getElementById("board"), g = canvas.getContext("2d");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;
const wait = (ms) => new Promise((done) => setTimeout(done, ms));

let board = [], score = 0, busy = false, started = false, selected = null, cleared = new Set();

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

function draw() {
  g.fillStyle = "#1c2541"; g.fillRect(0, 0, 720, 720);
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    const x = c * PITCH + (PITCH - TILE) / 2, y = r * PITCH + (PITCH - TILE) / 2;
    g.fillStyle = "#3a506b"; g.fillRect(x - 2, y - 2, TILE + 4, TILE + 4);
    if (cleared.has(r * N + c)) continue;
    g.fillStyle = COLORS[board[r][c]];
    g.beginPath(); g.arc(x + TILE / 2, y + TILE / 2, TILE / 2 - 4, 0, Math.PI * 2); g.fill();
    if (selected && selected.r === r && selected.c === c) {
      g.strokeStyle = "#ffffff"; g.lineWidth = 4; g.strokeRect(x, y, TILE, TILE);
    }
  }
  document.getElementById("score").textContent = String(score);
}

async function trySwap(a, z, via) {
  if (busy) return;
  busy = true; selected = null;
  const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
  swapIn(board, a, z); draw();
  await wait(SWAP_MS);
  if (runs(board).size === 0) {
    emit({ type: "swap", valid: false, via, from, to });
    swapIn(board, a, z); draw();
    busy = false;
    return;
  }
  emit({ type: "swap", valid: true, via, from, to });
  for (let chain = 1; ; chain++) {
    const hit = runs(board);
    if (hit.size === 0) break;
    score += hit.size * 10 * chain;
    emit({ type: "match", count: hit.size, chain });
    emit({ type: "score", score });
    cleared = hit; draw();
    await wait(CLEAR_MS);
    cleared = new Set(); collapse(board, hit); draw();
    await wait(FALL_MS);
  }
  if (!hasMove(board)) { board = freshBoard(); emit({ type: "shuffle" }); }
  busy = false; draw();
  emit({ type: "idle", score });
}

function cellAt(e) {
  const box = canvas.getBoundingClientRect();
  const c = Math.floor((e.clientX - box.left) / PITCH), r = Math.floor((e.clientY - box.top) / PITCH);
  return r >= 0 && r < N && c >= 0 && c < N ? { r, c } : null;
}
let press = null;
canvas.addEventListener("pointerdown", (e) => {
  const cell = cellAt(e);
  if (!cell || busy) return;
  press = { cell, x: e.clientX, y: e.clientY, done: false };
  e.preventDefault();
});
canvas.addEventListener("pointermove", (e) => {
  if (!press || press.done) return;
  const dx = e.clientX - press.x, dy = e.clientY - press.y;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < DRAG_PX) return;
  press.done = true;
  const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
  const z = { r: press.cell.r + d.r, c: press.cell.c + d.c };
  if (z.r >= 0 && z.r < N && z.c >= 0 && z.c < N) trySwap(press.cell, z, "drag");
});
canvas.addEventListener("pointerup", (e) => {
  const p = press; press = null;
  if (!p || p.done || busy) return;
  const cell = cellAt(e) || p.cell;
  if (selected && adjacent(selected, cell)) { trySwap(selected, cell, "taps"); return; }
  selected = selected && selected.r === cell.r && selected.c === cell.c ? null : cell;
  draw();
});

document.getElementById("start").addEventListener("click", () => {
  if (started) return;
  started = true;
  document.getElementById("menu").style.display = "none";
  document.getElementById("hud").hidden = false;
  canvas.style.display = "block";
  draw();
  emit({ type: "start", seed: SEED, rows: N, columns: N });
});
board = freshBoard();
emit({ type: "menu" });

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: MIN_RUN,
  started: () => started,
  board: () => board.map((row) => row.slice()),
  busy: () => busy,
  score: () => score,
  cellCenter: (r, c) => {
    const box = canvas.getBoundingClientRect();
    return [box.left + c * PITCH + PITCH / 2, box.top + r * PITCH + PITCH / 2];
  },
};
