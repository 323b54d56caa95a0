// Zoo game "pixi": a Match-3 on PixiJS 8. Click-select-click: the board answers only
// pointerup (a tap selects the tile under the release; a tap on a neighbour of the
// selection swaps), so a drag counts as one tap where it is released, and a selection
// left over stays until the next tap.
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x68e31da4;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const ROWS = 8, COLS = 8, KINDS = 6, MIN_RUN = 3;
const CELL = 45, TILE = 41, OX = 15, OY = 130;            // board: 360×360 at (15, 130)
const SWAP_MS = 200, CLEAR_MS = 250, FALL_MS = 300;
const COLORS = [0xff595e, 0xffca3a, 0x8ac926, 0x1982c4, 0x6a4c93, 0xf8f9fa];

const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const cellX = (c) => OX + c * CELL + CELL / 2;
const cellY = (r) => OY + r * CELL + CELL / 2;
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;

let board = [], score = 0, busy = false, selected = null, tiles = [];

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

// Animations on Pixi's ticker: each is (duration, step(progress 0..1)).
const running = [];
function animate(ms, step) {
  return new Promise((done) => running.push({ start: performance.now(), ms, step, done }));
}
function tick() {
  const now = performance.now();
  for (const a of running.slice()) {
    const p = Math.min(1, (now - a.start) / a.ms);
    a.step(p);
    if (p >= 1) { running.splice(running.indexOf(a), 1); a.done(); }
  }
}

function makeTile(k) {
  const g = new PIXI.Graphics().roundRect(-TILE / 2, -TILE / 2, TILE, TILE, 9).fill(0xffffff);
  g.tint = COLORS[k];
  return g;
}

async function main() {
  const app = new PIXI.Application();
  // Pixi's canvas renderer by default: WebGL in headless Chromium is SwiftShader, about
  // 8 frames a second on a small CI machine. ?renderer=webgl asks for WebGL.
  const preference = new URLSearchParams(location.search).get("renderer") === "webgl" ? "webgl" : "canvas";
  await app.init({ width: 390, height: 700, background: "#161629", antialias: true, preference });
  document.body.appendChild(app.canvas);
  board = freshBoard();

  const panel = new PIXI.Graphics().roundRect(OX - 6, OY - 6, COLS * CELL + 12, ROWS * CELL + 12, 12).fill(0x2b2d42);
  const layer = new PIXI.Container();
  for (let r = 0; r < ROWS; r++) {
    tiles.push([]);
    for (let c = 0; c < COLS; c++) {
      const g = makeTile(board[r][c]);
      g.position.set(cellX(c), cellY(r));
      layer.addChild(g); tiles[r].push(g);
    }
  }
  const ring = new PIXI.Graphics().roundRect(-TILE / 2 - 3, -TILE / 2 - 3, TILE + 6, TILE + 6, 11)
    .stroke({ width: 3, color: 0xffffff });
  ring.visible = false;
  const header = new PIXI.Graphics().rect(0, 0, 390, OY - 7).fill(0x161629);
  const title = new PIXI.Text({ text: "PIXI MATCH-3", style: { fontFamily: "sans-serif", fontSize: 24, fill: 0xf8f9fa } });
  title.anchor.set(0.5); title.position.set(195, 40);
  const scoreText = new PIXI.Text({ text: "Score 0", style: { fontFamily: "sans-serif", fontSize: 20, fill: 0xffca3a } });
  scoreText.anchor.set(0.5); scoreText.position.set(195, 86);
  app.stage.addChild(panel, layer, ring, header, title, scoreText);
  app.ticker.add(tick);

  const showSelection = () => {
    ring.visible = !!selected;
    if (selected) ring.position.set(cellX(selected.c), cellY(selected.r));
  };
  const moveSwap = async (a, z) => {
    const ta = tiles[a.r][a.c], tz = tiles[z.r][z.c];
    await animate(SWAP_MS, (p) => {
      ta.position.set(cellX(a.c) + (cellX(z.c) - cellX(a.c)) * p, cellY(a.r) + (cellY(z.r) - cellY(a.r)) * p);
      tz.position.set(cellX(z.c) + (cellX(a.c) - cellX(z.c)) * p, cellY(z.r) + (cellY(a.r) - cellY(z.r)) * p);
    });
    tiles[a.r][a.c] = tz; tiles[z.r][z.c] = ta;
    swapIn(board, a, z);
  };
  const collapse = async (hit) => {
    const falls = [];
    for (let c = 0; c < COLS; c++) {
      const keep = [], dead = [];
      for (let r = ROWS - 1; r >= 0; r--) (hit.has(r * COLS + c) ? dead : keep).push({ k: board[r][c], g: tiles[r][c] });
      let r = ROWS - 1;
      for (const t of keep) { board[r][c] = t.k; tiles[r][c] = t.g; falls.push([t.g, t.g.y, cellY(r)]); r--; }
      const missing = r + 1;
      for (let n = 0; r >= 0; r--, n++) {
        const k = randKind(), g = dead[n].g;
        board[r][c] = k; tiles[r][c] = g;
        g.tint = COLORS[k]; g.scale.set(1); g.alpha = 1; g.position.set(cellX(c), cellY(r - missing));
        falls.push([g, g.y, cellY(r)]);
      }
    }
    await animate(FALL_MS, (p) => { for (const [g, y0, y1] of falls) g.y = y0 + (y1 - y0) * p * p; });
  };
  const trySwap = async (a, z) => {
    busy = true; selected = null; showSelection();
    const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
    await moveSwap(a, z);
    if (runs(board).size === 0) {
      emit({ type: "swap", valid: false, via: "taps", from, to });
      await moveSwap(a, z);
      busy = false;
      return;
    }
    emit({ type: "swap", valid: true, via: "taps", from, to });
    for (let chain = 1; ; chain++) {
      const hit = runs(board);
      if (hit.size === 0) break;
      score += hit.size * 10 * chain;
      emit({ type: "match", count: hit.size, chain });
      emit({ type: "score", score });
      scoreText.text = "Score " + score;
      const dying = [...hit].map((i) => tiles[Math.floor(i / COLS)][i % COLS]);
      await animate(CLEAR_MS, (p) => { for (const g of dying) { g.scale.set(1 - p); g.alpha = 1 - p; } });
      await collapse(hit);
    }
    if (!hasMove(board)) {
      board = freshBoard();
      for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) tiles[r][c].tint = COLORS[board[r][c]];
      emit({ type: "shuffle" });
    }
    busy = false;
    emit({ type: "idle", score });
  };

  // Only the release counts: the tile under pointerup is the tapped one.
  layer.eventMode = "static";
  layer.hitArea = new PIXI.Rectangle(OX, OY, COLS * CELL, ROWS * CELL);
  layer.cursor = "pointer";
  layer.on("pointerup", (e) => {
    if (busy) return;
    const c = Math.floor((e.global.x - OX) / CELL), r = Math.floor((e.global.y - OY) / CELL);
    if (r < 0 || r >= ROWS || c < 0 || c >= COLS) return;
    const cell = { r, c };
    if (selected && adjacent(selected, cell)) { trySwap(selected, cell); return; }
    selected = selected && selected.r === r && selected.c === c ? null : cell;
    showSelection();
    emit(selected ? { type: "select", cell: [r + 1, c + 1] } : { type: "deselect" });
  });
  emit({ type: "start", seed: SEED, rows: ROWS, columns: COLS });

  // Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
  window.__zoo = {
    minRun: MIN_RUN,
    board: () => board.map((row) => row.slice()),
    busy: () => busy,
    score: () => score,
    selected: () => (selected ? [selected.r, selected.c] : null),
    cellCenter: (r, c) => {
      const box = app.canvas.getBoundingClientRect();
      return [box.left + cellX(c), box.top + cellY(r)];
    },
  };
}
main();
