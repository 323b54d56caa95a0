// Zoo game "phaser3": a Match-3 on Phaser 3 (canvas renderer). Input is POLLED once per
// frame in update() from the active pointer, like many Phaser games: a press and release
// that happen between two frames are never seen. Swaps, clears and falls are tweens.
"use strict";

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0x2545f491;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const ROWS = 8, COLS = 8, KINDS = 6, MIN_RUN = 3;
const CELL = 46, TILE = 40, OX = 11, OY = 140;            // board: 368×368 at (11, 140)
const SWAP_MS = 300, CLEAR_MS = 400, FALL_MS = 500, DRAG_PX = 16;
const COLORS = [0xe63946, 0xf4a261, 0x2a9d8f, 0x4f8fd6, 0x9b5de5, 0xf1faee];

const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const cellX = (c) => OX + c * CELL + CELL / 2;
const cellY = (r) => OY + r * CELL + CELL / 2;
const adjacent = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.c - b.c) === 1;

let board = [], score = 0, busy = false, selected = null;

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

class Match3Scene extends Phaser.Scene {
  constructor() { super("match3"); }

  create() {
    board = freshBoard();
    this.add.rectangle(OX + COLS * CELL / 2, OY + ROWS * CELL / 2, COLS * CELL + 6, ROWS * CELL + 6, 0x1d3557);
    this.sprites = [];
    for (let r = 0; r < ROWS; r++) {
      this.sprites.push([]);
      for (let c = 0; c < COLS; c++) {
        this.sprites[r].push(this.add.rectangle(cellX(c), cellY(r), TILE, TILE, COLORS[board[r][c]]));
      }
    }
    // the header hides tiles that fall in from above the board
    this.add.rectangle(195, (OY - 3) / 2, 390, OY - 3, 0x0f1b2d).setDepth(10);
    this.add.text(195, 40, "PHASER MATCH-3", { fontFamily: "sans-serif", fontSize: "24px", color: "#f1faee" })
      .setOrigin(0.5).setDepth(11);
    this.scoreText = this.add.text(195, 90, "Score 0", { fontFamily: "sans-serif", fontSize: "20px", color: "#ffd166" })
      .setOrigin(0.5).setDepth(11);
    this.selBox = this.add.rectangle(0, 0, TILE + 4, TILE + 4).setStrokeStyle(3, 0xffffff).setVisible(false).setDepth(5);
    this.press = null;
    emit({ type: "start", seed: SEED, rows: ROWS, columns: COLS });
  }

  // Polling, once per frame: what the pointer is doing now, not what happened since.
  update() {
    const p = this.input.activePointer;
    if (busy) { this.press = null; return; }
    if (p.isDown) {
      if (!this.press) {
        const cell = this.cellAt(p.x, p.y);
        if (cell) this.press = { cell, x: p.x, y: p.y, dragged: false };
      } else if (!this.press.dragged) {
        const dx = p.x - this.press.x, dy = p.y - this.press.y;
        if (Math.max(Math.abs(dx), Math.abs(dy)) >= DRAG_PX) {
          this.press.dragged = true;
          const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
          const z = { r: this.press.cell.r + d.r, c: this.press.cell.c + d.c };
          if (z.r >= 0 && z.r < ROWS && z.c >= 0 && z.c < COLS) this.trySwap(this.press.cell, z, "drag");
        }
      }
    } else if (this.press) {
      if (!this.press.dragged) this.tap(this.press.cell);
      this.press = null;
    }
  }

  cellAt(x, y) {
    const c = Math.floor((x - OX) / CELL), r = Math.floor((y - OY) / CELL);
    return r >= 0 && r < ROWS && c >= 0 && c < COLS ? { r, c } : null;
  }

  tap(cell) {
    if (selected && adjacent(selected, cell)) { this.trySwap(selected, cell, "taps"); return; }
    selected = selected && selected.r === cell.r && selected.c === cell.c ? null : cell;
    this.showSelection();
  }

  showSelection() {
    this.selBox.setVisible(!!selected);
    if (selected) this.selBox.setPosition(cellX(selected.c), cellY(selected.r));
  }

  tween(config) { return new Promise((done) => this.tweens.add({ ...config, onComplete: done })); }

  async moveSwap(a, z) {
    const sa = this.sprites[a.r][a.c], sz = this.sprites[z.r][z.c];
    await Promise.all([
      this.tween({ targets: sa, x: cellX(z.c), y: cellY(z.r), duration: SWAP_MS, ease: "Quad.easeInOut" }),
      this.tween({ targets: sz, x: cellX(a.c), y: cellY(a.r), duration: SWAP_MS, ease: "Quad.easeInOut" })]);
    this.sprites[a.r][a.c] = sz; this.sprites[z.r][z.c] = sa;
    swapIn(board, a, z);
  }

  async trySwap(a, z, via) {
    if (busy) return;
    busy = true; selected = null; this.showSelection();
    const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
    await this.moveSwap(a, z);
    if (runs(board).size === 0) {
      emit({ type: "swap", valid: false, via, from, to });
      await this.moveSwap(a, z);
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
      this.scoreText.setText("Score " + score);
      const dying = [...hit].map((i) => this.sprites[Math.floor(i / COLS)][i % COLS]);
      await this.tween({ targets: dying, scale: 0, alpha: 0, duration: CLEAR_MS, ease: "Quad.easeIn" });
      await this.collapse(hit);
    }
    if (!hasMove(board)) {
      board = freshBoard();
      for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) this.sprites[r][c].setFillStyle(COLORS[board[r][c]]);
      emit({ type: "shuffle" });
    }
    busy = false;
    emit({ type: "idle", score });
  }

  async collapse(hit) {
    const falls = [];
    for (let c = 0; c < COLS; c++) {
      const keep = [], dead = [];
      for (let r = ROWS - 1; r >= 0; r--) {
        (hit.has(r * COLS + c) ? dead : keep).push({ k: board[r][c], s: this.sprites[r][c] });
      }
      let r = ROWS - 1;
      for (const t of keep) { board[r][c] = t.k; this.sprites[r][c] = t.s; falls.push([t.s, r]); r--; }
      const missing = r + 1;
      for (let n = 0; r >= 0; r--, n++) {
        const k = randKind(), s = dead[n].s;
        board[r][c] = k; this.sprites[r][c] = s;
        s.setFillStyle(COLORS[k]).setScale(1).setAlpha(1).setPosition(cellX(c), cellY(r - missing));
        falls.push([s, r]);
      }
    }
    await Promise.all(falls.map(([s, r]) =>
      this.tween({ targets: s, y: cellY(r), duration: FALL_MS, ease: "Quad.easeIn" })));
  }
}

new Phaser.Game({
  type: Phaser.CANVAS, parent: "game", width: 390, height: 720, backgroundColor: "#0f1b2d",
  banner: false, audio: { noAudio: true }, seed: ["zoo-" + SEED], scene: Match3Scene,
});

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: MIN_RUN,
  board: () => board.map((row) => row.slice()),
  busy: () => busy,
  score: () => score,
  cellCenter: (r, c) => {
    const box = document.querySelector("#game canvas").getBoundingClientRect();
    return [box.left + cellX(c), box.top + cellY(r)];
  },
};
