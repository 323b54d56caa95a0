// Zoo game "outline-select": a canvas Match-3 in the style of hobby games found on GitHub,
// which no one writes for a test harness. It sends nothing to Lingxi's bridge; its score is
// only the text of <span id="score"> (beside a "Best" score that is not the player's). A
// click selects a gem, drawn as a white outline on the cell's border (its centre does not
// change); a click on a neighbour swaps them at once and keeps the swap only if it makes a
// run of three. A drag is no move here: pressing and releasing on the one canvas makes a
// click where it was released, so a drag leaves that gem selected.
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

const N = 8, KINDS = 6, SIZE = 45, CASCADE_MS = 250;
const COLORS = ["#e63946", "#f4a261", "#e9c46a", "#2a9d8f", "#457b9d", "#f1faee"];
const canvas = document.getElementById("board"), g = canvas.getContext("2d");
let grid = [], score = 0, moves = 30, selected = null, busy = false;

function randKind() { return Math.floor(Math.random() * KINDS); }
function matches() {
  const hit = new Set();
  for (let r = 0; r < N; r++) for (let c = 0; c + 2 < N; c++)
    if (grid[r][c] === grid[r][c + 1] && grid[r][c] === grid[r][c + 2])
      [0, 1, 2].forEach((i) => hit.add(r * N + c + i));
  for (let c = 0; c < N; c++) for (let r = 0; r + 2 < N; r++)
    if (grid[r][c] === grid[r + 1][c] && grid[r][c] === grid[r + 2][c])
      [0, 1, 2].forEach((i) => hit.add((r + i) * N + c));
  return hit;
}
function deal() {
  do {
    grid = [...Array(N)].map(() => [...Array(N)].map(randKind));
  } while (matches().size > 0);
}
function clearOnce() {
  const hit = matches();
  if (hit.size === 0) return false;
  score += hit.size * 10;
  document.getElementById("score").textContent = String(score);
  for (let c = 0; c < N; c++) {
    const keep = [];
    for (let r = N - 1; r >= 0; r--) if (!hit.has(r * N + c)) keep.push(grid[r][c]);
    for (let r = N - 1, i = 0; r >= 0; r--, i++) grid[r][c] = i < keep.length ? keep[i] : randKind();
  }
  return true;
}
function swap(a, b) { const t = grid[a.r][a.c]; grid[a.r][a.c] = grid[b.r][b.c]; grid[b.r][b.c] = t; }

canvas.addEventListener("click", (e) => {
  if (busy) return;
  const box = canvas.getBoundingClientRect();
  const cell = { c: Math.floor((e.clientX - box.left) / SIZE), r: Math.floor((e.clientY - box.top) / SIZE) };
  if (cell.r < 0 || cell.r >= N || cell.c < 0 || cell.c >= N) return;
  if (!selected) { selected = cell; return; }
  const near = Math.abs(selected.r - cell.r) + Math.abs(selected.c - cell.c) === 1;
  if (near) {
    swap(selected, cell);
    if (!clearOnce()) swap(selected, cell);
    else {
      moves -= 1;
      document.getElementById("moves").textContent = String(moves);
      busy = true;
      setTimeout(() => { while (clearOnce()) { /* the cascade */ } busy = false; }, CASCADE_MS);
    }
  }
  selected = null;
});

function draw() {
  g.clearRect(0, 0, canvas.width, canvas.height);
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    g.fillStyle = "#22223b";
    g.fillRect(c * SIZE, r * SIZE, SIZE - 2, SIZE - 2);
    g.fillStyle = COLORS[grid[r][c]];
    g.beginPath();
    g.arc(c * SIZE + SIZE / 2 - 1, r * SIZE + SIZE / 2 - 1, 15, 0, 2 * Math.PI);
    g.fill();
    if (selected && selected.r === r && selected.c === c) {
      g.strokeStyle = "#ffffff"; g.lineWidth = 3;
      g.strokeRect(c * SIZE + 1.5, r * SIZE + 1.5, SIZE - 5, SIZE - 5);
    }
  }
  requestAnimationFrame(draw);
}

// For tests/playtest/test_zoo_smoke.py only; the harness never reads it.
window.__zoo = {
  board: () => grid.map((row) => row.slice()),
  score: () => score,
  busy: () => busy,
  minRun: 3,
  selected: () => selected && [selected.r, selected.c],
  cellCenter: (r, c) => {
    const box = canvas.getBoundingClientRect();
    return [box.left + c * SIZE + SIZE / 2 - 1, box.top + r * SIZE + SIZE / 2 - 1];
  },
};

deal();
draw();
