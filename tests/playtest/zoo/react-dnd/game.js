// Zoo game "react-dnd": a Match-3 in React 18 (UMD builds, React.createElement, no build
// step) whose only input is HTML5 drag-and-drop: drag a tile (draggable, dragstart) and
// drop it on a neighbour (dragover, drop). No mouse, pointer, click or touch listeners.
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
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
const ROWS = 8, COLS = 8, KINDS = 6, MIN_RUN = 3;
const REVERT_MS = 250, CLEAR_MS = 250, FALL_MS = 150;
const h = React.createElement;

const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;
const wait = (ms) => new Promise((done) => setTimeout(done, ms));

function runs(b) {
  const hit = new Set();
  for (let r = 0; r < ROWS; r++) {
    for (let c = 0, start = 0; c <= COLS; c++) {
      if (c === COLS || b[r][c] !== b[r][start]) {
        if (c - start >= MIN_RUN) for (let i = start; i < c; i++) hit.add(r * COLS + i);
        start = c;
      }
    }
  }
  for (let c = 0; c < COLS; c++) {
    for (let r = 0, start = 0; r <= ROWS; r++) {
      if (r === ROWS || b[r][c] !== b[start][c]) {
        if (r - start >= MIN_RUN) for (let i = start; i < r; i++) hit.add(i * COLS + c);
        start = r;
      }
    }
  }
  return hit;
}
function swapIn(b, a, z) { const t = b[a.r][a.c]; b[a.r][a.c] = b[z.r][z.c]; b[z.r][z.c] = t; }
function hasMove(b) {
  for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) {
    for (const z of [{ r, c: c + 1 }, { r: r + 1, c }]) {
      if (z.r >= ROWS || z.c >= COLS) continue;
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
    for (let r = 0; r < ROWS; r++) {
      b.push([]);
      for (let c = 0; c < COLS; c++) {
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
  for (let c = 0; c < COLS; c++) {
    const keep = [];
    for (let r = ROWS - 1; r >= 0; r--) if (!hit.has(r * COLS + c)) keep.push(b[r][c]);
    for (let r = ROWS - 1, i = 0; r >= 0; r--, i++) b[r][c] = i < keep.length ? keep[i] : randKind();
  }
}

// The game state lives outside React; every change re-renders the tree from it.
const game = { board: freshBoard(), score: 0, busy: false, clearing: new Set(), over: null, from: null };

function Tile({ r, c, kind, clearing, over }) {
  return h("div", {
    className: "tile k" + kind + (clearing ? " clearing" : "") + (over ? " over" : ""),
    draggable: true, "data-r": r, "data-c": c,
    onDragStart: (e) => {
      if (game.busy) { e.preventDefault(); return; }
      game.from = { r, c };
      e.dataTransfer.effectAllowed = "move";
      e.dataTransfer.setData("text/plain", r + "," + c);
    },
    onDragEnter: () => { game.over = { r, c }; update(); },
    onDragOver: (e) => { if (game.from && adjacent(game.from, { r, c })) e.preventDefault(); },
    onDrop: (e) => {
      e.preventDefault();
      const from = game.from;
      game.from = null; game.over = null;
      if (from && adjacent(from, { r, c })) trySwap(from, { r, c }); else update();
    },
    onDragEnd: () => { game.from = null; game.over = null; update(); },
  });
}

function App({ board, score, clearing, over }) {
  const cells = [];
  for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) {
    cells.push(h(Tile, { key: r * COLS + c, r, c, kind: board[r][c], clearing: clearing.has(r * COLS + c),
                         over: !!over && over.r === r && over.c === c }));
  }
  return h(React.Fragment, null,
    h("header", null, h("h1", null, "REACT MATCH-3"), h("div", { className: "score" }, "Score ", h("b", { id: "score" }, score))),
    h("div", { className: "board", id: "board" }, cells),
    h("footer", null, "Drag a tile onto a neighbour."));
}

const root = ReactDOM.createRoot(document.getElementById("root"));
function update() {
  root.render(h(App, { board: game.board.map((row) => row.slice()), score: game.score,
                       clearing: new Set(game.clearing), over: game.over }));
}

async function trySwap(a, z) {
  if (game.busy) return;
  game.busy = true;
  const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
  swapIn(game.board, a, z); update();
  if (runs(game.board).size === 0) {
    emit({ type: "swap", valid: false, via: "dnd", from, to });
    await wait(REVERT_MS);
    swapIn(game.board, a, z); game.busy = false; update();
    return;
  }
  emit({ type: "swap", valid: true, via: "dnd", from, to });
  for (let chain = 1; ; chain++) {
    const hit = runs(game.board);
    if (hit.size === 0) break;
    game.score += hit.size * 10 * chain;
    emit({ type: "match", count: hit.size, chain });
    emit({ type: "score", score: game.score });
    game.clearing = hit; update();
    await wait(CLEAR_MS);
    game.clearing = new Set(); collapse(game.board, hit); update();
    await wait(FALL_MS);
  }
  if (!hasMove(game.board)) { game.board = freshBoard(); emit({ type: "shuffle" }); }
  game.busy = false; update();
  emit({ type: "idle", score: game.score });
}

update();
emit({ type: "start", seed: SEED, rows: ROWS, columns: COLS });

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: MIN_RUN,
  board: () => game.board.map((row) => row.slice()),
  busy: () => game.busy,
  score: () => game.score,
  cellCenter: (r, c) => {
    const box = document.querySelector(`[data-r="${r}"][data-c="${c}"]`).getBoundingClientRect();
    return [box.left + box.width / 2, box.top + box.height / 2];
  },
};
