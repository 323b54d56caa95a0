// Match-3 engine shared by the DOM game (index.html) and the canvas game
// (../match3-canvas, through a symlink): seeded board, swaps, matches, cascades,
// score and bridge events. Each page defines render() and its own input.
"use strict";
const ROWS = 8, COLS = 8, KINDS = 6;
const SWAP_MS = 80, CLEAR_MS = 70, FALL_MS = 60, REVERT_MS = 120, ANIMATED_CHAINS = 3;

function mulberry32(a) {
  return function () {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const seedParam = new URLSearchParams(location.search).get("seed");
const SEED = (parseInt(seedParam || "1", 10) >>> 0);
const rng = mulberry32(SEED);
const randKind = () => Math.floor(rng() * KINDS);

function emit(event) {
  try { if (window.lingxi && typeof window.lingxi.emit === "function") window.lingxi.emit(event); }
  catch (e) { /* the bridge is optional */ }
}

let board = [], score = 0, moves = 0, busy = false, selected = null;
const cleared = new Set();

function makesLine(b, r, c, k) {
  return (c >= 2 && b[r][c - 1] === k && b[r][c - 2] === k) ||
         (r >= 2 && b[r - 1][c] === k && b[r - 2][c] === k);
}
function findMatches(b) {
  const hit = new Set();
  for (let r = 0; r < ROWS; r++) {
    let start = 0;
    for (let c = 1; c <= COLS; c++) {
      if (c === COLS || b[r][c] !== b[r][start] || b[r][c] < 0) {
        if (c - start >= 3 && b[r][start] >= 0) for (let i = start; i < c; i++) hit.add(r * COLS + i);
        start = c;
      }
    }
  }
  for (let c = 0; c < COLS; c++) {
    let start = 0;
    for (let r = 1; r <= ROWS; r++) {
      if (r === ROWS || b[r][c] !== b[start][c] || b[r][c] < 0) {
        if (r - start >= 3 && b[start][c] >= 0) for (let i = start; i < r; i++) hit.add(i * COLS + c);
        start = r;
      }
    }
  }
  return hit;
}
function swapIn(b, a, z) { const t = b[a.r][a.c]; b[a.r][a.c] = b[z.r][z.c]; b[z.r][z.c] = t; }
function hasMove(b) {
  for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) {
    for (const [dr, dc] of [[0, 1], [1, 0]]) {
      const z = { r: r + dr, c: c + dc };
      if (z.r >= ROWS || z.c >= COLS) continue;
      swapIn(b, { r, c }, z);
      const ok = findMatches(b).size > 0;
      swapIn(b, { r, c }, z);
      if (ok) return true;
    }
  }
  return false;
}
function fillBoard() {
  do {
    board = [];
    for (let r = 0; r < ROWS; r++) {
      board.push([]);
      for (let c = 0; c < COLS; c++) {
        let k = randKind();
        while (makesLine(board, r, c, k)) k = (k + 1) % KINDS;
        board[r].push(k);
      }
    }
  } while (!hasMove(board));
}
function collapse(hit) {
  for (const i of hit) board[Math.floor(i / COLS)][i % COLS] = -1;
  for (let c = 0; c < COLS; c++) {
    let write = ROWS - 1;
    for (let r = ROWS - 1; r >= 0; r--) {
      if (board[r][c] >= 0) { board[write][c] = board[r][c]; write--; }
    }
    for (let r = write; r >= 0; r--) board[r][c] = randKind();
  }
}
function adjacent(a, z) { return Math.abs(a.r - z.r) + Math.abs(a.c - z.c) === 1; }

function trySwap(a, z, via) {
  if (busy || !adjacent(a, z)) return;
  busy = true; selected = null;
  swapIn(board, a, z);
  render();
  if (findMatches(board).size === 0) {
    emit({ type: "swap", valid: false, via, from: [a.r + 1, a.c + 1], to: [z.r + 1, z.c + 1] });
    setTimeout(() => { swapIn(board, a, z); busy = false; render(); emit({ type: "revert" }); }, REVERT_MS);
    return;
  }
  moves++;
  emit({ type: "swap", valid: true, via, from: [a.r + 1, a.c + 1], to: [z.r + 1, z.c + 1] });
  emit({ type: "moves", moves });
  setTimeout(() => resolveChain(1), SWAP_MS);
}
function resolveChain(chain) {
  const hit = findMatches(board);
  if (hit.size === 0) {
    if (!hasMove(board)) { fillBoard(); emit({ type: "shuffle" }); }
    busy = false; render(); emit({ type: "idle", score, moves });
    return;
  }
  score += hit.size * 10 * chain;
  emit({ type: "match", count: hit.size, chain });
  emit({ type: "score", score });
  if (chain >= ANIMATED_CHAINS) {           // keep every move inside 600 ms of virtual time
    collapse(hit);
    resolveChain(chain + 1);
    return;
  }
  for (const i of hit) cleared.add(i);
  render();
  setTimeout(() => {
    cleared.clear(); collapse(hit); render();
    setTimeout(() => resolveChain(chain + 1), FALL_MS);
  }, CLEAR_MS);
}

// ---- input shared by both views: drag a tile onto a neighbour, or tap two ----
// `el` receives pointer events, `cellAt(x, y)` maps client coordinates to a cell
// ({r, c} or null), `threshold` is how far (px) a drag must go to count.
function attachInput(el, cellAt, threshold) {
  let drag = null;
  el.addEventListener("pointerdown", (e) => {
    const cell = cellAt(e.clientX, e.clientY);
    if (!cell || busy) return;
    drag = { cell, x: e.clientX, y: e.clientY, done: false };
    try { el.setPointerCapture(e.pointerId); } catch (err) { /* synthetic pointers */ }
    e.preventDefault();
  });
  el.addEventListener("pointermove", (e) => {
    if (!drag || drag.done) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.max(Math.abs(dx), Math.abs(dy)) < threshold) return;
    drag.done = true;
    const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
    const z = { r: drag.cell.r + d.r, c: drag.cell.c + d.c };
    if (z.r >= 0 && z.r < ROWS && z.c >= 0 && z.c < COLS) trySwap(drag.cell, z, "drag");
  });
  el.addEventListener("pointerup", (e) => {
    if (!drag) return;
    const d = drag; drag = null;
    if (d.done || busy) return;
    const cell = cellAt(e.clientX, e.clientY) || d.cell;
    if (selected && adjacent(selected, cell)) { trySwap(selected, cell, "taps"); return; }
    if (selected && selected.r === cell.r && selected.c === cell.c) { selected = null; render(); emit({ type: "deselect" }); return; }
    selected = cell; render();
    emit({ type: "select", cell: [cell.r + 1, cell.c + 1] });
  });
  el.addEventListener("pointercancel", () => { drag = null; });
}

function startGame() {
  fillBoard();
  render();
  emit({ type: "start", seed: SEED, rows: ROWS, columns: COLS });
}
