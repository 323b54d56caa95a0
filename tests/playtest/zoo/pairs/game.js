// Zoo game "pairs": a memory game of 16 cards (8 pairs) that needs taps. Tap a card to
// turn it over; a second card that matches stays up (10 points), one that does not is
// turned back after 600 ms, and taps meanwhile are ignored. A drag from one card to
// another is no tap on either (the click lands on the table), so a swapping actor gets
// almost nothing received. When every pair is found a new table is dealt.
"use strict";

(function seedMathRandom() {
  const given = new URLSearchParams(location.search).get("seed");
  if (given === null) return;
  let s = (parseInt(given, 10) >>> 0) ^ 0xe6546b64;
  Math.random = function () {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const SEED = parseInt(new URLSearchParams(location.search).get("seed") || "0", 10) >>> 0;
const CARDS = 16, BACK_MS = 600;
const tableEl = document.getElementById("table");
const emit = (event) => { try { if (window.lingxi) window.lingxi.emit(event); } catch (e) { /* optional */ } };

let faces = [], up = [], done = new Set(), score = 0, turns = 0, found = 0, busy = false;
const cards = [];
for (let i = 0; i < CARDS; i++) {
  const el = document.createElement("div");
  el.appendChild(document.createElement("i"));
  el.addEventListener("click", () => flip(i));
  tableEl.appendChild(el); cards.push(el);
}
function deal() {
  faces = [];
  for (let f = 0; f < CARDS / 2; f++) faces.push(f, f);
  for (let i = faces.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [faces[i], faces[j]] = [faces[j], faces[i]];
  }
  up = []; done = new Set(); found = 0;
  render();
  emit({ type: "deal", seed: SEED, cards: CARDS });
}
function render() {
  for (let i = 0; i < CARDS; i++) {
    let cls = "card f" + faces[i];
    if (done.has(i)) cls += " done"; else if (up.includes(i)) cls += " up";
    cards[i].className = cls;
  }
  document.getElementById("pairs").textContent = String(found);
  document.getElementById("score").textContent = String(score);
  document.getElementById("turns").textContent = String(turns);
}
function flip(i) {
  if (busy || done.has(i) || up.includes(i)) return;
  up.push(i); render();
  emit({ type: "flip", card: i + 1 });
  if (up.length < 2) return;
  turns += 1;
  const [a, b] = up;
  if (faces[a] === faces[b]) {
    done.add(a); done.add(b); up = []; found += 1; score += 10;
    render();
    emit({ type: "pair", found });
    emit({ type: "score", score });
    if (found === CARDS / 2) setTimeout(deal, 300);
    return;
  }
  busy = true;
  setTimeout(() => { up = []; busy = false; render(); emit({ type: "miss", turns }); }, BACK_MS);
}
deal();

// Test hook for tests (the harness reads no page state).
window.__zoo = {
  faces: () => faces.slice(),
  busy: () => busy,
  score: () => score,
  cellCenter: (i) => { const r = cards[i].getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; },
};
