// Zoo game "phaser-build": a Phaser 3 Match-3 shipped the way published canvas games are
// (issue 24.4): a bundle built for the base path /game/ (every URL absolute under it), the
// engine's ENVELOP scale mode (the 720×1280 canvas covers the window and overflows it, the
// board in its safe area), a Start button drawn on the canvas, and a "tap to begin" gate
// that swallows the first press into the play scene (as audio-unlock and focus gates do).
// Swaps are drags only (Phaser game-object press, then a move of ≥ 20 game px).

// ?seed=S seeds Math.random (the game's only source of randomness); without it the game
// uses whatever Math.random the page has (the harness installs a seeded one).
const given = new URLSearchParams(location.search).get("seed");
if (given !== null) {
  let s = (parseInt(given, 10) >>> 0) ^ 0x5bd1e995;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const Phaser = window.Phaser;
const BASE = "/game/";  // what the bundler was told (import.meta.env.BASE_URL)
const SEED = parseInt(given || "0", 10) >>> 0;
const W = 720, H = 1280, N = 9, KINDS = 6, MIN_RUN = 3;
const CELL = 64, GEM = 56, OX = 72, OY = 340;              // board 576×576 at (72, 340)
const SWAP_MS = 200, CLEAR_MS = 250, FALL_MS = 300, DRAG_PX = 20;

const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };
const randKind = () => Math.floor(Math.random() * KINDS);
const cellX = (c) => OX + c * CELL + CELL / 2;
const cellY = (r) => OY + r * CELL + CELL / 2;

let board = [], score = 0, busy = false, awake = false, scene = "boot";

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

class Boot extends Phaser.Scene {
  constructor() { super("boot"); }
  preload() {
    // a base-relative asset URL, as bundlers resolve them: 404 when served at another base
    this.load.spritesheet("gems", BASE + "assets/gems-5a81c0.svg", { frameWidth: 64, frameHeight: 64 });
  }
  create() { this.scene.start("menu"); }
}

class Menu extends Phaser.Scene {
  constructor() { super("menu"); }
  create() {
    scene = "menu";
    this.add.text(W / 2, 360, "GEM RUSH", { fontFamily: "sans-serif", fontSize: "96px", color: "#ffd166" }).setOrigin(0.5);
    // the Start button is drawn on the canvas: no DOM element for it
    const button = this.add.rectangle(W / 2, 760, 380, 130, 0x2a9d8f).setStrokeStyle(6, 0xf1faee)
      .setInteractive({ useHandCursor: true });
    this.add.text(W / 2, 760, "START", { fontFamily: "sans-serif", fontSize: "64px", color: "#ffffff" }).setOrigin(0.5);
    button.on("pointerup", () => { emit({ type: "start", seed: SEED, rows: N, columns: N }); this.scene.start("play"); });
    emit({ type: "menu" });
  }
}

class Play extends Phaser.Scene {
  constructor() { super("play"); }

  create() {
    scene = "play";
    board = freshBoard();
    this.add.rectangle(OX + N * CELL / 2, OY + N * CELL / 2, N * CELL + 12, N * CELL + 12, 0x231b45);
    this.sprites = [];
    for (let r = 0; r < N; r++) {
      this.sprites.push([]);
      for (let c = 0; c < N; c++) {
        const gem = this.add.image(cellX(c), cellY(r), "gems", board[r][c]).setDisplaySize(GEM, GEM).setInteractive();
        gem.setData("cell", { r, c });
        this.sprites[r].push(gem);
      }
    }
    // the header hides gems that fall in from above the board
    this.add.rectangle(W / 2, (OY - 6) / 2, W, OY - 6, 0x14102a).setDepth(10);
    this.scoreText = this.add.text(W / 2, 200, "Score 0", { fontFamily: "sans-serif", fontSize: "56px", color: "#ffd166" })
      .setOrigin(0.5).setDepth(11);
    this.hint = this.add.text(W / 2, 1040, "TAP TO BEGIN", { fontFamily: "sans-serif", fontSize: "60px", color: "#f1faee" })
      .setOrigin(0.5);
    this.press = null;
    // Phaser sends gameobjectdown before the scene's pointerdown: the first press on a gem
    // finds the game asleep and is only its wake-up (an audio unlock does the same).
    this.input.on("gameobjectdown", (pointer, gem) => {
      if (!awake || busy) return;
      this.press = { cell: gem.getData("cell"), x: pointer.x, y: pointer.y };
    });
    this.input.once("pointerdown", () => { awake = true; this.hint.setVisible(false); });
    this.input.on("pointermove", (pointer) => {
      if (!this.press || busy) return;
      const dx = pointer.x - this.press.x, dy = pointer.y - this.press.y;
      if (Math.max(Math.abs(dx), Math.abs(dy)) < DRAG_PX) return;
      const a = this.press.cell;
      this.press = null;
      const d = Math.abs(dx) > Math.abs(dy) ? { r: 0, c: Math.sign(dx) } : { r: Math.sign(dy), c: 0 };
      const z = { r: a.r + d.r, c: a.c + d.c };
      if (z.r >= 0 && z.r < N && z.c >= 0 && z.c < N) this.trySwap(a, z);
    });
    this.input.on("pointerup", () => { this.press = null; });
  }

  tween(config) { return new Promise((done) => this.tweens.add({ ...config, onComplete: done })); }

  async moveSwap(a, z) {
    const sa = this.sprites[a.r][a.c], sz = this.sprites[z.r][z.c];
    await Promise.all([
      this.tween({ targets: sa, x: cellX(z.c), y: cellY(z.r), duration: SWAP_MS }),
      this.tween({ targets: sz, x: cellX(a.c), y: cellY(a.r), duration: SWAP_MS })]);
    this.sprites[a.r][a.c] = sz; this.sprites[z.r][z.c] = sa;
    sz.setData("cell", { r: a.r, c: a.c }); sa.setData("cell", { r: z.r, c: z.c });
    swapIn(board, a, z);
  }

  async trySwap(a, z) {
    busy = true;
    const from = [a.r + 1, a.c + 1], to = [z.r + 1, z.c + 1];
    await this.moveSwap(a, z);
    if (runs(board).size === 0) {
      emit({ type: "swap", valid: false, via: "drag", from, to });
      await this.moveSwap(a, z);
      busy = false;
      return;
    }
    emit({ type: "swap", valid: true, via: "drag", from, to });
    for (let chain = 1; ; chain++) {
      const hit = runs(board);
      if (hit.size === 0) break;
      score += hit.size * 10 * chain;
      emit({ type: "match", count: hit.size, chain });
      emit({ type: "score", score });
      this.scoreText.setText("Score " + score);
      const dying = [...hit].map((i) => this.sprites[Math.floor(i / N)][i % N]);
      await this.tween({ targets: dying, alpha: 0, duration: CLEAR_MS });
      await this.collapse(hit);
    }
    if (!hasMove(board)) {
      board = freshBoard();
      for (let r = 0; r < N; r++) for (let c = 0; c < N; c++) this.sprites[r][c].setFrame(board[r][c]);
      emit({ type: "shuffle" });
    }
    busy = false;
    emit({ type: "idle", score });
  }

  async collapse(hit) {
    const falls = [];
    for (let c = 0; c < N; c++) {
      const keep = [], dead = [];
      for (let r = N - 1; r >= 0; r--) (hit.has(r * N + c) ? dead : keep).push({ k: board[r][c], s: this.sprites[r][c] });
      let r = N - 1;
      for (const t of keep) { board[r][c] = t.k; this.sprites[r][c] = t.s; falls.push([t.s, r, c]); r--; }
      const missing = r + 1;
      for (let n = 0; r >= 0; r--, n++) {
        const k = randKind(), s = dead[n].s;
        board[r][c] = k; this.sprites[r][c] = s;
        s.setFrame(k).setDisplaySize(GEM, GEM).setAlpha(1).setPosition(cellX(c), cellY(r - missing));
        falls.push([s, r, c]);
      }
    }
    for (const [s, r, c] of falls) s.setData("cell", { r, c });
    await Promise.all(falls.map(([s, r]) => this.tween({ targets: s, y: cellY(r), duration: FALL_MS })));
  }
}

const game = new Phaser.Game({
  type: Phaser.CANVAS, parent: "app", width: W, height: H, backgroundColor: "#14102a",
  banner: false, audio: { noAudio: true }, seed: ["zoo-" + SEED],
  scale: { mode: Phaser.Scale.ENVELOP, autoCenter: Phaser.Scale.CENTER_BOTH },
  scene: [Boot, Menu, Play],
});

// Test hook for tests/playtest/test_zoo_smoke.py (the harness reads no page state).
window.__zoo = {
  minRun: MIN_RUN,
  board: () => board.map((row) => row.slice()),
  busy: () => busy,
  score: () => score,
  scene: () => scene,
  awake: () => awake,
  cellCenter: (r, c) => {
    const box = game.canvas.getBoundingClientRect(), k = box.width / W;
    return [box.left + cellX(c) * k, box.top + cellY(r) * k];
  },
};
