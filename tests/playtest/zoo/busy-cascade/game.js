// Zoo game "busy-cascade": a DOM Match-3 that thinks between cascade stages. After a
// swap it waits 300-500 ms with nothing changing on screen before each stage (clear,
// fall, the next chain), as published games do while they compute or wait on sounds,
// and it ignores every input until the whole move is done. A harness that takes "no
// pixel changed for 200 ms" for "the game is ready" sends its next input into a busy
// game (dropped) and misses the rest of the cascade. Input: drag a tile onto a
// neighbour, or tap two (pointer events).
"use strict";

(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x27d4eb2f;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 8, KINDS = 6, PITCH = 45, PAD = 10, DRAG_PX = 18;
const THINK_MS = [300, 420, 500, 360];  // pauses before stages, in turn (no visual change)
const REVERT_MS = 150;

const boardEl = document.getElementById("board");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;
const wait = (ms) => new Promise((done) => setTimeout(done, ms));

let board = [], score = 0, moves = 0, busy = false, selected = null, gone = new Set(), pause = 0;
const think = () => wait(THINK_MS[pause++ % THINK_MS.length]);

function runs(b) {
  const hit = new Set();
  for (let r = 0; r < N; r++) for (let c = 0; c + 2 < N; c++) {
    if (b[r][c] === b[r][c + 1] && b[r][c] === b[r][c + 2]) [0, 1, 2].forEach((i) => hit.add(r * N + c + i));
  }
  for (let c = 0; c < N; c++) for (let r = 0; r + 2 < N; r++) {
    if (b[r][c] === b[r + 1][c] && b[r][c] === b[r + 2][c]) [0, 1, 2].forEach((i) => hit.add((r + i) * N + c));
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

const cells = [];
for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
  const el = document.createElement("div");
  el.appendChild(document.createElement("i"));
  boardEl.appendChild(el); cells.push(el);
}
function render() {
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    const i = r * N + c;
    let cls = "cell k" + board[r][c];
    if (gone.has(i)) cls += " gone";
    if (selected && selected.r === r && selected.c === c) cls += " sel";
    if (cells[i].className !== cls) cells[i].className = cls;
  }
  document.getElementById("score").textContent = String(score);
  document.getElementById("moves").textContent = String(moves);
}

async function trySwap(a, z, via) {
  if (busy) return;
  busy = true; selected = null;
  const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
  swapIn(board, a, z); render();
  if (runs(board).size === 0) {
    emit({ type: "swap", valid: false, via, from, to });
    await wait(REVERT_MS);
    swapIn(board, a, z); busy = false; render();
    emit({ type: "idle", score });
    return;
  }
  moves += 1;
  emit({ type: "swap", valid: true, via, from, to });
  emit({ type: "moves", moves });
  render();
  for (let chain = 1; ; chain++) {
    await think();  // nothing moves on screen meanwhile; input is still ignored
    const hit = runs(board);
    if (hit.size === 0) break;
    score += hit.size * 10 * chain;
    emit({ type: "match", count: hit.size, chain });
    emit({ type: "score", score });
    gone = hit; render();
    await think();
    gone = new Set(); collapse(board, hit); render();
  }
  if (!hasMove(board)) { board = freshBoard(); emit({ type: "shuffle" }); }
  busy = false; render();
  emit({ type: "idle", score });
}

function cellAt(x, y) {
  const box = boardEl.getBoundingClientRect();
  const c = Math.floor((x - box.left - PAD + 2.5) / PITCH), r = Math.floor((y - box.top - PAD + 2.5) / PITCH);
  return r >= 0 && r < N && c >= 0 && c < N ? { r, c } : null;
}
let press = null;
boardEl.addEventListener("pointerdown", (e) => {
  const cell = cellAt(e.clientX, e.clientY);
  if (!cell || busy) return;  // busy: the press is dropped
  press = { cell, x: e.clientX, y: e.clientY, done: false };
  e.preventDefault();
});
boardEl.addEventListener("pointermove", (e) => {
  if (!press || press.done || busy) return;
  const dx = e.clientX - press.x, dy = e.clientY - press.y;
  if (Math.max(Math.abs(dx), Math.abs(dy)) < DRAG_PX) return;
  press.done = true;
  const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
  const z = { r: press.cell.r + d.r, c: press.cell.c + d.c };
  if (z.r >= 0 && z.r < N && z.c >= 0 && z.c < N) trySwap(press.cell, z, "drag");
});
boardEl.addEventListener("pointerup", (e) => {
  const p = press; press = null;
  if (!p || p.done || busy) return;
  const cell = cellAt(e.clientX, e.clientY) || p.cell;
  if (selected && adjacent(selected, cell)) { trySwap(selected, cell, "taps"); return; }
  selected = selected && selected.r === cell.r && selected.c === cell.c ? null : cell;
  render();
});

board = freshBoard();
render();
emit({ type: "start", seed: SEED, rows: N, columns: N });

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: 3,
  board: () => board.map((row) => row.slice()),
  busy: () => busy,
  score: () => score,
  cellCenter: (r, c) => {
    const box = cells[r * N + c].getBoundingClientRect();
    return [box.left + box.width / 2, box.top + box.height / 2];
  },
};
