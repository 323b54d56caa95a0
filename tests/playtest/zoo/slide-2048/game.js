// Zoo game "slide-2048": a 2048 clone laid out like the popular original (a score and a
// best box, a "New Game" button that restarts the game, a 4×4 grid of background cells
// with the tiles absolutely positioned over it). Played with the arrow keys (and WASD);
// nothing on the board responds to a tap. Tiles slide in 100 ms.
"use strict";

(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x1b873593;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const N = 4, PITCH = 87.5, SLIDE_MS = 100;
const DIRS = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
               KeyW: [-1, 0], KeyS: [1, 0], KeyA: [0, -1], KeyD: [0, 1] };
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const tilesEl = document.getElementById("tiles"), gameEl = document.getElementById("game");

let grid, score, best = 0, over, busy = false, games = 0;

function empty() { const out = []; for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) if (!grid[r][c]) out.push([r, c]); return out; }
function addTile() {
  const free = empty();
  if (!free.length) return;
  const [r, c] = free[Math.floor(Math.random() * free.length)];
  grid[r][c] = Math.random() < 0.9 ? 2 : 4;
}
function canMove() {
  if (empty().length) return true;
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    if (c + 1 < N && grid[r][c] === grid[r][c + 1]) return true;
    if (r + 1 < N && grid[r][c] === grid[r + 1][c]) return true;
  }
  return false;
}
function render() {
  tilesEl.textContent = "";
  for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) {
    const v = grid[r][c];
    if (!v) continue;
    const el = document.createElement("div");
    el.className = "tile " + (v <= 2048 ? "v" + v : "vbig");
    el.style.left = c * PITCH + "px"; el.style.top = r * PITCH + "px";
    el.textContent = String(v);
    tilesEl.appendChild(el);
  }
  document.getElementById("score").textContent = String(score);
  document.getElementById("best").textContent = String(best);
  gameEl.classList.toggle("over", over);
}
function newGame() {
  grid = Array.from({ length: N }, () => Array(N).fill(0));
  score = 0; over = false; games += 1;
  addTile(); addTile(); render();
  emit({ type: "start", seed: SEED, game: games });
  emit({ type: "score", score });
}
// Slide every line towards (dr, dc), merging equal neighbours once per move.
function slide(dr, dc) {
  let moved = false, gained = 0;
  for (let i = 0; i < N; i++) {
    const line = [];
    for (let k = 0; k < N; k++) {
      const r = dr ? (dr > 0 ? N - 1 - k : k) : i, c = dc ? (dc > 0 ? N - 1 - k : k) : i;
      line.push([r, c]);
    }
    const values = line.map(([r, c]) => grid[r][c]).filter((v) => v);
    const merged = [];
    for (let k = 0; k < values.length; k++) {
      if (k + 1 < values.length && values[k] === values[k + 1]) { merged.push(values[k] * 2); gained += values[k] * 2; k++; }
      else merged.push(values[k]);
    }
    line.forEach(([r, c], k) => { const v = merged[k] || 0; if (grid[r][c] !== v) moved = true; grid[r][c] = v; });
  }
  return [moved, gained];
}
document.addEventListener("keydown", (e) => {
  const dir = DIRS[e.code];
  if (!dir || busy || over) return;
  e.preventDefault();
  const [moved, gained] = slide(dir[0], dir[1]);
  emit({ type: "move", key: e.code, moved });
  if (!moved) return;
  busy = true;
  setTimeout(() => {
    score += gained; best = Math.max(best, score);
    addTile();
    over = !canMove();
    render();
    if (gained) emit({ type: "score", score });
    if (over) emit({ type: "over", score });
    busy = false;
  }, SLIDE_MS);
  render();
});
document.getElementById("new").addEventListener("click", newGame);

newGame();

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  board: () => grid.map((row) => row.slice()),
  busy: () => busy,
  score: () => score,
  games: () => games,
};
