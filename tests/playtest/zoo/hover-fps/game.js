// Zoo game "hover-fps": a canvas Match-3 whose picture changes on its own and under a
// resting pointer: the cell under the pointer is highlighted, an FPS counter redraws
// every frame, and sparkles twinkle over the board while idle. A changed frame is
// therefore no proof that the game took an action; only the score and the board are.
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x1f83d9ab;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 8, KINDS = 6, MIN_RUN = 3, PITCH = 46, OX = 11, OY = 150, DRAG_PX = 16;
const SWAP_MS = 200, CLEAR_MS = 250, FALL_MS = 250, SPARKLES = 4;
const COLORS = ["#f94144", "#f8961e", "#f9c74f", "#43aa8b", "#577590", "#e5e5e5"];

const canvas = document.getElementById("game"), g = canvas.getContext("2d");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;

let board = [], score = 0, selected = null, hover = null, frames = 0, lastFrame = 0, fps = 0;
let phase = "idle", t0 = 0, length = 0, swapA = null, swapB = null, via = "", hit = new Set(), chain = 0;
const drop = [...Array(N)].map(() => Array(N).fill(0));

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
function collapse(found) {
  for (let c = 0; c < N; c++) {
    const keep = [];
    for (let r = N - 1; r >= 0; r--) if (!found.has(r * N + c)) keep.push([board[r][c], r]);
    let r = N - 1;
    for (const [k, from] of keep) { board[r][c] = k; drop[r][c] = r - from; r--; }
    const missing = r + 1;
    for (; r >= 0; r--) { board[r][c] = randKind(); drop[r][c] = missing; }
  }
}
// Sparkle positions come from a hash of the frame number, not from Math.random, so the
// idle animation never changes which tiles the game deals next.
function hash(n) {
  let x = Math.imul(n ^ 0x27d4eb2d, 0x165667b1);
  x ^= x >>> 15; x = Math.imul(x, 0x85ebca6b); x ^= x >>> 13;
  return (x >>> 0) / 4294967296;
}

function begin(next, ms) { phase = next; t0 = performance.now(); length = ms; }
function advance() {
  if (phase === "swap") {
    swapIn(board, swapA, swapB);
    const from = [swapA.r + 1, swapA.c + 1], to = [swapB.r + 1, swapB.c + 1];
    if (runs(board).size === 0) { emit({ type: "swap", valid: false, via, from, to }); begin("back", SWAP_MS); return; }
    emit({ type: "swap", valid: true, via, from, to });
    chain = 0; nextChain();
  } else if (phase === "back") {
    swapIn(board, swapA, swapB); swapA = swapB = null; phase = "idle";
  } else if (phase === "clear") {
    collapse(hit); begin("fall", FALL_MS);
  } else if (phase === "fall") {
    for (const row of drop) row.fill(0);
    nextChain();
  }
}
function nextChain() {
  swapA = swapB = null;
  hit = runs(board);
  if (hit.size === 0) {
    if (!hasMove(board)) { board = freshBoard(); emit({ type: "shuffle" }); }
    phase = "idle"; emit({ type: "idle", score });
    return;
  }
  chain += 1;
  score += hit.size * 10 * chain;
  emit({ type: "match", count: hit.size, chain });
  emit({ type: "score", score });
  begin("clear", CLEAR_MS);
}

function draw(p, now) {
  g.fillStyle = "#03045e"; g.fillRect(0, 0, 390, 620);
  g.fillStyle = "#caf0f8"; g.font = "24px sans-serif"; g.textAlign = "center";
  g.fillText("SPARKLE MATCH-3", 195, 50);
  g.fillStyle = "#ffd60a"; g.font = "20px sans-serif";
  g.fillText("Score " + score, 195, 92);
  g.fillStyle = "#90e0ef"; g.font = "13px monospace"; g.textAlign = "right";
  g.fillText("FPS " + fps.toFixed(1) + "  #" + frames, 380, 126);
  g.fillStyle = "#023e8a"; g.fillRect(OX - 4, OY - 4, N * PITCH + 8, N * PITCH + 8);
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    let x = OX + c * PITCH + PITCH / 2, y = OY + r * PITCH + PITCH / 2, size = 1;
    if ((phase === "swap" || phase === "back") && swapA) {
      const t = phase === "swap" ? p : 1 - p;
      if (r === swapA.r && c === swapA.c) { x += (swapB.c - c) * PITCH * t; y += (swapB.r - r) * PITCH * t; }
      if (r === swapB.r && c === swapB.c) { x += (swapA.c - c) * PITCH * t; y += (swapA.r - r) * PITCH * t; }
    }
    if (phase === "clear" && hit.has(r * N + c)) size = 1 - p;
    if (phase === "fall") y -= drop[r][c] * PITCH * (1 - p);
    if (y < OY) continue;
    const half = 19 * size;
    g.fillStyle = COLORS[board[r][c]];
    g.fillRect(x - half, y - half, 2 * half, 2 * half);
    if (hover && hover.r === r && hover.c === c) {
      g.fillStyle = "rgba(255, 255, 255, 0.35)"; g.fillRect(x - 21, y - 21, 42, 42);
    }
    if (selected && selected.r === r && selected.c === c) {
      g.strokeStyle = "#ffffff"; g.lineWidth = 3; g.strokeRect(x - 21, y - 21, 42, 42);
    }
  }
  if (phase === "idle") {                 // twinkling sparkles, a new set every 8 frames
    const set = Math.floor(frames / 8), glow = 0.4 + 0.6 * Math.abs(Math.sin(now / 180));
    g.fillStyle = "rgba(255, 255, 255, " + glow.toFixed(3) + ")";
    for (let i = 0; i < SPARKLES; i++) {
      const sx = OX + hash(set * 16 + i * 2) * N * PITCH, sy = OY + hash(set * 16 + i * 2 + 1) * N * PITCH;
      g.beginPath();
      g.moveTo(sx, sy - 6); g.lineTo(sx + 2, sy - 2); g.lineTo(sx + 6, sy); g.lineTo(sx + 2, sy + 2);
      g.lineTo(sx, sy + 6); g.lineTo(sx - 2, sy + 2); g.lineTo(sx - 6, sy); g.lineTo(sx - 2, sy - 2);
      g.closePath(); g.fill();
    }
  }
}
function frame(now) {
  frames += 1;
  if (lastFrame) fps = 0.9 * fps + 0.1 * (1000 / Math.max(1, now - lastFrame));
  lastFrame = now;
  let p = 0;
  if (phase !== "idle") {
    p = Math.min(1, (performance.now() - t0) / length);
    if (p >= 1) { advance(); p = 0; }
  }
  draw(p, now);
  requestAnimationFrame(frame);
}

function trySwap(a, z, how) {
  if (phase !== "idle") return;
  selected = null; swapA = a; swapB = z; via = how;
  begin("swap", SWAP_MS);
}
function cellAt(e) {
  const box = canvas.getBoundingClientRect();
  const c = Math.floor((e.clientX - box.left - OX) / PITCH), r = Math.floor((e.clientY - box.top - OY) / PITCH);
  return r >= 0 && r < N && c >= 0 && c < N ? { r, c } : null;
}
let press = null;
canvas.addEventListener("pointermove", (e) => {
  hover = cellAt(e);                       // the hover highlight follows the pointer always
  if (!press || press.done || phase !== "idle") return;
  const dx = e.clientX - press.x, dy = e.clientY - press.y;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < DRAG_PX) return;
  press.done = true;
  const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
  const z = { r: press.cell.r + d.r, c: press.cell.c + d.c };
  if (z.r >= 0 && z.r < N && z.c >= 0 && z.c < N) trySwap(press.cell, z, "drag");
});
canvas.addEventListener("pointerleave", () => { hover = null; });
canvas.addEventListener("pointerdown", (e) => {
  const cell = cellAt(e);
  hover = cell;
  if (cell && phase === "idle") press = { cell, x: e.clientX, y: e.clientY, done: false };
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
  frames: () => frames,
  hover: () => (hover ? [hover.r, hover.c] : null),
  cellCenter: (r, c) => {
    const box = canvas.getBoundingClientRect();
    return [box.left + OX + c * PITCH + PITCH / 2, box.top + OY + r * PITCH + PITCH / 2];
  },
};
