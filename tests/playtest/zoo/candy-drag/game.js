// Zoo game "candy-drag": a DOM Match-3 whose tiles are <img> elements swapped by the
// browser's own drag-and-drop, as a popular published Match-3 does. Images are draggable
// by default, so the game never sets draggable="true": it listens for dragstart on the
// board, accepts dragover on a neighbour of the dragged candy and swaps on drop. It has
// no pointer, mouse, click or touch listener at all.
"use strict";

(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x5bd1e995;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 8, KINDS = 6, REVERT_MS = 160, CLEAR_MS = 180, FALL_MS = 140;
// One candy picture per kind: distinct colours and shapes, drawn as SVG data URLs.
const SHAPES = [
  ["#e63946", "<circle cx='20' cy='20' r='15'/>"],
  ["#f4a261", "<rect x='6' y='6' width='28' height='28' rx='5'/>"],
  ["#2a9d8f", "<polygon points='20,4 36,34 4,34'/>"],
  ["#457b9d", "<polygon points='20,3 37,20 20,37 3,20'/>"],
  ["#9d4edd", "<polygon points='20,3 25,15 38,16 28,25 31,37 20,30 9,37 12,25 2,16 15,15'/>"],
  ["#fcbf49", "<ellipse cx='20' cy='20' rx='17' ry='11'/>"],
];
const PICTURES = SHAPES.map(([fill, shape]) => "data:image/svg+xml," + encodeURIComponent(
  `<svg xmlns='http://www.w3.org/2000/svg' width='40' height='40' viewBox='0 0 40 40'>` +
  `<rect width='40' height='40' rx='6' fill='#fff0f3'/><g fill='${fill}'>${shape}</g></svg>`));

const boardEl = document.getElementById("board");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;
const wait = (ms) => new Promise((done) => setTimeout(done, ms));

let board = [], score = 0, moves = 0, busy = false, gone = new Set(), dragged = null;

function runs(b) {
  const hit = new Set();
  for (let r = 0; r < N; r++) for (let c = 0; c + 2 < N; c++) {
    if (b[r][c] === b[r][c + 1] && b[r][c] === b[r][c + 2]) { hit.add(r * N + c); hit.add(r * N + c + 1); hit.add(r * N + c + 2); }
  }
  for (let c = 0; c < N; c++) for (let r = 0; r + 2 < N; r++) {
    if (b[r][c] === b[r + 1][c] && b[r][c] === b[r + 2][c]) { hit.add(r * N + c); hit.add((r + 1) * N + c); hit.add((r + 2) * N + c); }
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

const imgs = [];
for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
  const img = document.createElement("img");
  img.alt = "";
  img.dataset.r = String(r); img.dataset.c = String(c);
  boardEl.appendChild(img); imgs.push(img);
}
function render() {
  for (let i = 0; i < N * N; i++) {
    const src = PICTURES[board[Math.floor(i / N)][i % N]];
    if (imgs[i].getAttribute("src") !== src) imgs[i].setAttribute("src", src);
    imgs[i].className = gone.has(i) ? "gone" : "";
  }
  document.getElementById("score").textContent = String(score);
  document.getElementById("moves").textContent = String(moves);
}

async function trySwap(a, z) {
  busy = true;
  const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
  swapIn(board, a, z); render();
  if (runs(board).size === 0) {
    emit({ type: "swap", valid: false, via: "dnd", from, to });
    await wait(REVERT_MS);
    swapIn(board, a, z); busy = false; render();
    emit({ type: "idle", score });
    return;
  }
  moves += 1;
  emit({ type: "swap", valid: true, via: "dnd", from, to });
  emit({ type: "moves", moves });
  for (let chain = 1; ; chain++) {
    const hit = runs(board);
    if (hit.size === 0) break;
    score += hit.size * 10 * chain;
    emit({ type: "match", count: hit.size, chain });
    emit({ type: "score", score });
    gone = hit; render();
    await wait(CLEAR_MS);
    gone = new Set(); collapse(board, hit); render();
    await wait(FALL_MS);
  }
  if (!hasMove(board)) { board = freshBoard(); emit({ type: "shuffle" }); }
  busy = false; render();
  emit({ type: "idle", score });
}

const cellOf = (el) => (el && el.dataset && el.dataset.r !== undefined
  ? { r: Number(el.dataset.r), c: Number(el.dataset.c) } : null);
boardEl.addEventListener("dragstart", (e) => {
  const cell = cellOf(e.target);
  if (!cell || busy) { e.preventDefault(); return; }
  dragged = cell;
  e.dataTransfer.setData("text/plain", `${cell.r},${cell.c}`);
  e.dataTransfer.effectAllowed = "move";
});
boardEl.addEventListener("dragover", (e) => {
  const cell = cellOf(e.target);
  if (dragged && cell && adjacent(dragged, cell)) e.preventDefault();
});
boardEl.addEventListener("drop", (e) => {
  e.preventDefault();
  const cell = cellOf(e.target), from = dragged;
  dragged = null;
  if (from && cell && adjacent(from, cell) && !busy) trySwap(from, cell);
});
boardEl.addEventListener("dragend", () => { dragged = null; });

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
    const box = imgs[r * N + c].getBoundingClientRect();
    return [box.left + box.width / 2, box.top + box.height / 2];
  },
};
