"""JavaScript the harness runs in the game page.

``bridge_script`` is injected before any page script: it defines
``window.lingxi.emit(event)`` (queueing ``[performance.now(), JSON]`` pairs the
harness drains after each action), suppresses native text selection and
image/link drag-and-drop while the harness's own mouse gesture is under way,
drives ``requestAnimationFrame`` from virtual-time timers at 60 frames per
second, and replaces ``Math.random`` with a PRNG
seeded from the run's seed so that games without their own seed still replay
identically. ``SNAPSHOT_JS`` reads element rectangles only — never text — for
the target catalog.
"""

from __future__ import annotations

_BRIDGE = r"""
(() => {
  // performance.now() from the virtual Date clock: Chromium clamps the native one with a
  // per-process random jitter (tens of microseconds), enough to change an FPS counter or
  // a frame's animation phase between two runs. Whole milliseconds since the page began.
  // Load is gated (issue 24.2): how much virtual time the load takes depends on real time
  // (Chromium runs the clock while the page waits on its own background work: 7-11 ms of
  // it for phaser3 in 1 ms steps), so until the harness starts the clock when the document
  // has loaded (window.__lingxiStartClock) the page's time stands still: performance.now()
  // reads 0, Date reads the epoch, and timers, intervals and animation frames the page asks
  // for are held and started with the clock, their delays counted from then. A page that
  // spins on the clock while loading gets the running clock after 100000 reads, not a hang.
  const dateNow = Date.now.bind(Date);
  let origin = null, frozenReads = 0;
  const nativeTimeout = window.setTimeout.bind(window);  // the harness's own timers
  const nativeClear = window.clearTimeout.bind(window);
  const nativeInterval = window.setInterval.bind(window);
  const heldTimers = new Map(), releasedTimers = new Map();  // page id -> [repeat, args] / real id
  const onStart = [];
  const start = () => {
    if (origin !== null) return;
    origin = dateNow();
    for (const [id, [repeat, args]] of heldTimers) {
      nativeClear(id);
      releasedTimers.set(id, startTimer(repeat, args));
    }
    heldTimers.clear();
    for (const f of onStart) f();
  };
  const clock = () => {
    if (origin === null && ++frozenReads > 100000) start();
    return origin === null ? 0 : dateNow() - origin;
  };
  Object.defineProperty(window, '__lingxiStartClock', { value: start, writable: false,
                                                        configurable: false });
  Object.defineProperty(window, '__lingxiClockRunning', { value: () => origin !== null,
                                                          writable: false, configurable: false });
  // A frame made after the harness started the clocks starts its own at once.
  try {
    if (window.top !== window && window.top.__lingxiClockRunning && window.top.__lingxiClockRunning())
      start();
  } catch (e) { start(); }
  try { Object.defineProperty(performance, 'now', { value: clock, configurable: true }); } catch (e) {}
  // A held timer keeps the id of a native timer that never fires (so ids stay unique).
  // The page's timers and intervals still to run (by native id), so the harness can tell a
  // page with nothing scheduled on the clock from one that merely looks still (settle.py);
  // a timer given code as text is not followed and counts as pending for good.
  const liveTimers = new Set();
  let untrackedTimers = 0;
  const startTimer = (repeat, args) => {
    const [callback, ...rest] = args;
    if (typeof callback !== 'function') { untrackedTimers = 1; return (repeat ? nativeInterval : nativeTimeout)(...args); }
    if (repeat) { const id = nativeInterval(...args); liveTimers.add(id); return id; }
    const id = nativeTimeout(function (...a) { liveTimers.delete(id); return callback.apply(this, a); }, ...rest);
    liveTimers.add(id);
    return id;
  };
  const hold = (repeat) => function (...args) {
    if (origin !== null) return startTimer(repeat, args);
    const id = nativeTimeout(() => {}, 2147483647);
    heldTimers.set(id, [repeat, args]);
    return id;
  };
  const release = function (id) {
    if (heldTimers.delete(id)) return nativeClear(id);
    if (releasedTimers.has(id)) { const real = releasedTimers.get(id); releasedTimers.delete(id);
                                  liveTimers.delete(real); return nativeClear(real); }
    liveTimers.delete(id);
    return nativeClear(id);
  };
  window.setTimeout = hold(false); window.setInterval = hold(true);
  window.clearTimeout = release; window.clearInterval = release;
  // Date on the same clock: the epoch (__EPOCH__ ms) while loading, then epoch + clock.
  const NativeDate = Date, wallNow = () => __EPOCH__ + clock();
  const VirtualDate = function Date(...args) {
    if (!new.target) return new NativeDate(wallNow()).toString();
    return Reflect.construct(NativeDate, args.length ? args : [wallNow()], new.target);
  };
  VirtualDate.prototype = NativeDate.prototype;
  Object.defineProperty(VirtualDate, 'length', { value: 7 });
  VirtualDate.now = wallNow; VirtualDate.parse = NativeDate.parse; VirtualDate.UTC = NativeDate.UTC;
  window.Date = VirtualDate;
  const queue = [];
  let dropped = 0, emitted = 0;
  const stringify = JSON.stringify.bind(JSON);
  const emit = (event) => {
    emitted++;
    try {
      if (queue.length >= 1024) { dropped++; return; }
      const text = stringify(event);
      if (typeof text !== 'string' || text.length > 4096) { dropped++; return; }
      queue.push([clock(), text]);
    } catch (e) { dropped++; }
  };
  const bridge = Object.freeze({ emit });
  Object.defineProperty(window, 'lingxi', { value: bridge, writable: false, configurable: false });
  Object.defineProperty(window, '__lingxiDrain', {
    value: () => { const out = queue.splice(0, queue.length); const d = dropped; dropped = 0;
                   return [out, d]; },
    writable: false, configurable: false });
  // During the harness's own mouse gestures, no native text selection, and no native
  // drag-and-drop of an image or link unless the page uses drag-and-drop: on a page that
  // does not, such a drag would swallow the pointer events the game listens for. Elements
  // marked draggable=true always keep theirs, and so do default-draggable ones (images,
  // links) once the page listens for a drag event (a Match-3 of <img> tiles swapped by
  // the browser's own drag never sets draggable="true").
  let gesture = false, dragListeners = false;
  const DRAG_TYPES = new Set(['dragstart', 'drag', 'dragenter', 'dragover', 'drop', 'dragend']);
  const handlesDrag = (node) => {
    if (dragListeners) return true;
    for (let el = node; el; el = el.parentNode) {
      if (el.ondragstart || el.ondrop || el.ondragover) return true;
    }
    return !!(window.ondragstart || window.ondrop || window.ondragover);
  };
  // The harness's touches are game gestures, never page scrolling, zooming or a back-swipe:
  // the root gets touch-action: none (through an adopted style sheet, put back at each
  // gesture if the page replaced the list). A touch that Chromium took as a page scroll
  // stopped the page's frames under paused virtual time: the rest of the touch never
  // arrived and screenshots never came (play.stalled on the touch-only zoo game).
  let touchSheet = null;
  const touchGestures = () => {
    try {
      if (touchSheet === null) {
        touchSheet = new CSSStyleSheet();
        touchSheet.replaceSync(':root { touch-action: none !important; }');
      }
      const sheets = document.adoptedStyleSheets;
      if (!sheets.includes(touchSheet)) document.adoptedStyleSheets = [...sheets, touchSheet];
    } catch (e) {}
  };
  touchGestures();
  Object.defineProperty(window, '__lingxiGesture', {
    value: (on) => { gesture = !!on; if (on) touchGestures(); if (!on) { try { const s = getSelection();
      if (s && s.type === 'Range') s.removeAllRanges(); } catch (e) {} } },
    writable: false, configurable: false });
  const quiet = (e) => {
    if (!gesture) return;
    const t = e.target;
    if (e.type === 'dragstart' && t && t.getAttribute) {
      if (t.getAttribute('draggable') === 'true') return;
      if (t.getAttribute('draggable') !== 'false' && handlesDrag(t)) return;
    }
    e.preventDefault();
  };
  // Which input events the page has seen, so the harness can wait for a gesture to
  // arrive before virtual time runs again.
  const seen = {};
  const SEEN_TYPES = new Set(['pointermove', 'pointerdown', 'pointerup', 'touchstart', 'touchmove',
                              'touchend', 'pointercancel', 'touchcancel', 'drop']);
  // Trusted events only: the harness's input is the only source of those, so what it has
  // confirmed stays true until it sends more (a page's own synthetic events do not count).
  for (const type of SEEN_TYPES) window.addEventListener(type, (e) => { if (e.isTrusted) saw(type); }, true);
  // A same-origin frame tells the page what it saw: input on a game inside a frame reaches
  // the frame's window, not the page's, and the harness asks the page.
  function saw(type) {
    if (!SEEN_TYPES.has(type)) return;
    seen[type] = (seen[type] || 0) + 1;
    try { if (window.parent !== window && window.parent.__lingxiSaw) window.parent.__lingxiSaw(type); }
    catch (e) {}
  }
  Object.defineProperty(window, '__lingxiSaw', { value: (type) => { saw(String(type)); },
    writable: false, configurable: false });
  Object.defineProperty(window, '__lingxiSeen', { value: () => ({ ...seen }),
    writable: false, configurable: false });
  window.addEventListener('selectstart', quiet, true);
  window.addEventListener('dragstart', quiet, true);
  // Installed after the harness's own listeners, so only the page's count.
  try {
    const add = EventTarget.prototype.addEventListener;
    Object.defineProperty(EventTarget.prototype, 'addEventListener', { configurable: true,
      writable: true, value: function (type, ...rest) {
        if (DRAG_TYPES.has(String(type))) dragListeners = true;
        return add.call(this, type, ...rest);
      } });
  } catch (e) {}
  // Animation frames on the virtual clock: Chromium produces real frames only every so
  // often while virtual time races ahead, so a game that steps its animation once per
  // requestAnimationFrame would barely move in 600 ms. Callbacks are batched into frames
  // every 1000/60 ms of virtual time (one shared timestamp per frame), driven by timers.
  const FRAME = 1000 / 60;
  let frameQueue = new Map(), frameId = 0, frameTimer = null, animationFrame = null;
  const runFrame = () => {
    frameTimer = null;
    if (animationFrame !== null) animationFrame();  // animations first, as in a browser's frame
    const batch = frameQueue; frameQueue = new Map();
    const now = performance.now();
    for (const cb of batch.values()) { try { cb(now); } catch (e) { nativeTimeout(() => { throw e; }); } }
    const resizing = resizeFrame(), intersecting = intersectFrame();
    if (resizing || intersecting) scheduleFrame();  // after the callbacks' layout, as in a browser
  };
  const scheduleFrame = () => {
    if (origin === null) return;  // held until the clock starts (load gate)
    if (frameTimer === null) {
      const now = performance.now();
      frameTimer = nativeTimeout(runFrame, Math.max(0, Math.ceil((Math.floor(now / FRAME) + 1) * FRAME - now)));
    }
  };
  window.requestAnimationFrame = function (cb) {
    const id = ++frameId;
    frameQueue.set(id, cb);
    scheduleFrame();
    return id;
  };
  window.cancelAnimationFrame = function (id) { frameQueue.delete(id); };
  onStart.push(() => { if (frameQueue.size || resizeFrame.observing()) scheduleFrame(); });
  // ResizeObserver on the virtual frames. Chromium delivers its notifications in the
  // rendering update of a real frame, and real frames come at whatever virtual instant real
  // time reaches while the clock runs: a box that grew on a timer was reported at 330 ms in
  // one run and at 600 ms in the next, and a callback that changes the DOM then flips the
  // settle's quiet test. So the observed boxes are measured at every virtual frame while
  // anything is observed, and a change is reported there (sizes from the layout box;
  // a transformed element reports its transformed size).
  const resizeObservers = new Set();
  const px = (v) => parseFloat(v) || 0;
  const boxes = (el) => {
    if (!el.isConnected) return [0, 0, 0, 0, 0, 0];
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    if (cs.display === 'none') return [0, 0, 0, 0, 0, 0];
    if (typeof SVGGraphicsElement === 'function' && el instanceof SVGGraphicsElement
        && !(el instanceof SVGSVGElement)) {
      try { const b = el.getBBox(); return [b.width, b.height, b.width, b.height, 0, 0]; }
      catch (e) { return [0, 0, 0, 0, 0, 0]; }
    }
    const left = px(cs.paddingLeft), top = px(cs.paddingTop);
    const cw = Math.max(0, r.width - left - px(cs.paddingRight) - px(cs.borderLeftWidth) - px(cs.borderRightWidth));
    const ch = Math.max(0, r.height - top - px(cs.paddingBottom) - px(cs.borderTopWidth) - px(cs.borderBottomWidth));
    return [cw, ch, r.width, r.height, left, top];
  };
  const size = (inlineSize, blockSize) => Object.freeze([Object.freeze({ inlineSize, blockSize })]);
  const entryOf = (target, [cw, ch, bw, bh, left, top]) => {
    const dpr = window.devicePixelRatio || 1;
    return Object.freeze({ target, contentRect: new DOMRectReadOnly(left, top, cw, ch),
      contentBoxSize: size(cw, ch), borderBoxSize: size(bw, bh),
      devicePixelContentBoxSize: size(Math.round(cw * dpr), Math.round(ch * dpr)) });
  };
  const watched = (b, box) => box === 'border-box' ? [b[2], b[3]] : [b[0], b[1]];
  function resizeFrame() {
    for (const observer of [...resizeObservers]) {
      const entries = [];
      for (const [target, seen] of observer.targets) {
        const b = boxes(target), now = watched(b, seen.box);
        if (now[0] !== seen.last[0] || now[1] !== seen.last[1]) {
          seen.last = now;
          entries.push(entryOf(target, b));
        }
      }
      if (entries.length) {
        try { observer.callback.call(observer.self, entries, observer.self); }
        catch (e) { nativeTimeout(() => { throw e; }); }
      }
    }
    return resizeObservers.size > 0;
  }
  resizeFrame.observing = () => resizeObservers.size > 0;
  if (typeof window.ResizeObserver === 'function') {
    const state = new WeakMap();
    const ResizeObserver = class ResizeObserver {
      constructor(callback) {
        if (typeof callback !== 'function') throw new TypeError("ResizeObserver: callback is not a function");
        state.set(this, { callback, self: this, targets: new Map() });
      }
      observe(target, options) {
        if (!(target instanceof Element)) throw new TypeError("ResizeObserver.observe: target is not an Element");
        const o = state.get(this);
        o.targets.set(target, { box: (options && options.box) || 'content-box', last: [0, 0] });
        resizeObservers.add(o);
        scheduleFrame();
      }
      unobserve(target) {
        const o = state.get(this);
        o.targets.delete(target);
        if (!o.targets.size) resizeObservers.delete(o);
      }
      disconnect() { const o = state.get(this); o.targets.clear(); resizeObservers.delete(o); }
    };
    window.ResizeObserver = ResizeObserver;
  }
  // IntersectionObserver on the virtual frames, for the same reason as ResizeObserver:
  // Chromium computes intersections in the rendering update of a real frame, so the
  // callback ran at a virtual instant real time chose (a lazy-loading game or an "in
  // view" animation started in a different settle chunk from run to run). Each observed
  // target is measured against its root (the viewport, or the root element's box) grown
  // by rootMargin at every virtual frame while anything is observed; an entry is reported
  // when its threshold index or isIntersecting changes (the first frame always reports).
  // Limits: clipping by scrolling ancestors between target and root is not applied, and
  // isVisible (IntersectionObserver v2) is always false.
  const intersectionObservers = new Set();
  const rectOf = (b) => new DOMRectReadOnly(b[0], b[1], Math.max(0, b[2] - b[0]), Math.max(0, b[3] - b[1]));
  const marginOf = (text) => {
    const parts = String(text === undefined ? '0px' : text).trim().split(/\s+/).slice(0, 4);
    const one = (t) => {
      const m = /^(-?\d*\.?\d+)(px|%)?$/.exec(t || '0px');
      if (!m || (m[2] === undefined && parseFloat(m[1]) !== 0)) {
        throw new DOMException("rootMargin must be given in pixels or percent", 'SyntaxError');
      }
      return [parseFloat(m[1]), m[2] === '%'];
    };
    const v = parts.map(one);
    while (v.length < 4) v.push(v.length === 1 ? v[0] : v.length === 2 ? v[0] : v[1]);
    return v;  // top, right, bottom, left
  };
  function intersectFrame() {
    for (const o of [...intersectionObservers]) {
      let rb;
      if (o.root) {
        if (!o.root.isConnected) continue;
        const r = o.root.getBoundingClientRect();
        rb = [r.left, r.top, r.right, r.bottom];
      } else {
        rb = [0, 0, window.innerWidth, window.innerHeight];
      }
      const w = rb[2] - rb[0], h = rb[3] - rb[1];
      const at = ([v, pct], size) => pct ? v * size / 100 : v;
      rb = [rb[0] - at(o.margin[3], w), rb[1] - at(o.margin[0], h),
            rb[2] + at(o.margin[1], w), rb[3] + at(o.margin[2], h)];
      const entries = [];
      for (const [target, seen] of o.targets) {
        const r = target.isConnected ? target.getBoundingClientRect() : null;
        const box = r ? [r.left, r.top, r.right, r.bottom] : [0, 0, 0, 0];
        const ix = [Math.max(box[0], rb[0]), Math.max(box[1], rb[1]),
                    Math.min(box[2], rb[2]), Math.min(box[3], rb[3])];
        const hit = r !== null && ix[2] >= ix[0] && ix[3] >= ix[1];  // edge-adjacent counts
        const area = (box[2] - box[0]) * (box[3] - box[1]);
        const ratio = !hit ? 0 : area > 0 ? ((ix[2] - ix[0]) * (ix[3] - ix[1])) / area : 1;
        let index = 0;
        while (index < o.thresholds.length && o.thresholds[index] <= ratio) index++;
        if (index === seen.index && hit === seen.hit) continue;
        seen.index = index; seen.hit = hit;
        entries.push(Object.freeze({ target, time: performance.now(), rootBounds: rectOf(rb),
          boundingClientRect: rectOf(box), intersectionRect: rectOf(hit ? ix : [0, 0, 0, 0]),
          isIntersecting: hit, intersectionRatio: ratio, isVisible: false }));
      }
      if (entries.length) {
        try { o.callback.call(o.self, entries, o.self); }
        catch (e) { nativeTimeout(() => { throw e; }); }
      }
    }
    return intersectionObservers.size > 0;
  }
  const observing = resizeFrame.observing;
  resizeFrame.observing = () => observing() || intersectionObservers.size > 0;
  if (typeof window.IntersectionObserver === 'function') {
    const ioState = new WeakMap();
    const IntersectionObserver = class IntersectionObserver {
      constructor(callback, options) {
        if (typeof callback !== 'function') throw new TypeError("IntersectionObserver: callback is not a function");
        const opts = options || {};
        let thresholds = opts.threshold === undefined ? [0] : [].concat(opts.threshold).map(Number);
        if (thresholds.some((t) => !(t >= 0 && t <= 1))) throw new RangeError("IntersectionObserver: threshold values must be in [0, 1]");
        thresholds = [...new Set(thresholds)].sort((a, b) => a - b);
        const root = opts.root || null;
        const margin = marginOf(opts.rootMargin);
        ioState.set(this, { callback, self: this, targets: new Map(), root, margin, thresholds,
          rootMargin: margin.map(([v, pct]) => v + (pct ? '%' : 'px')).join(' ') });
      }
      get root() { return ioState.get(this).root; }
      get rootMargin() { return ioState.get(this).rootMargin; }
      get thresholds() { return Object.freeze(ioState.get(this).thresholds.slice()); }
      observe(target) {
        if (!(target instanceof Element)) throw new TypeError("IntersectionObserver.observe: target is not an Element");
        const o = ioState.get(this);
        if (!o.targets.has(target)) o.targets.set(target, { index: -1, hit: false });
        intersectionObservers.add(o);
        scheduleFrame();
      }
      unobserve(target) {
        const o = ioState.get(this);
        o.targets.delete(target);
        if (!o.targets.size) intersectionObservers.delete(o);
      }
      disconnect() { const o = ioState.get(this); o.targets.clear(); intersectionObservers.delete(o); }
      takeRecords() { return []; }
    };
    window.IntersectionObserver = IntersectionObserver;
  }
  // Promises that settle in real time on the virtual clock: createImageBitmap and
  // img.decode() resolve when Chromium's decoder is done, and virtual time runs meanwhile,
  // so their callbacks landed at a virtual instant real time chose. While one is pending
  // the page holds a request to the harness open (/__lingxi-clock/hold/ID): under the
  // policy pauseIfNetworkFetchesPending virtual time stands still until the decoder is done
  // and the page releases it, so the result arrives at the virtual instant of the call.
  // Results are handed to the page in the order of the calls: three decodes started
  // together finished in an order real time chose (a replay's events differed there).
  const nativeFetch = typeof window.fetch === 'function' ? window.fetch.bind(window) : null;
  const holdToken = Math.floor(Math.random() * 1e9).toString(36);  // Math.random is native here
  let holdSeq = 0;
  let lastHeld = Promise.resolve();
  const canHold = () => nativeFetch !== null && /^https?:$/.test(location.protocol);
  // Decodes pending together share one hold, released when the last of them settles, so
  // their results come back at one virtual instant however the decoder spreads them in
  // real time (a hold each let a late one's completion land 10 ms later under load).
  let batch = null;
  const holdClock = (start) => {
    if (!canHold()) return start();
    if (batch === null) {
      const id = holdToken + '-' + (++holdSeq);
      const path = '/__lingxi-clock/';
      const hold = nativeFetch(path + 'hold/' + id, { cache: 'no-store' }).catch(() => {});
      let open = true;
      batch = { pending: 0, done: null, release: null };
      const ended = new Promise((resolve) => { batch.release = () => {
        if (!open) return;
        open = false;
        nativeFetch(path + 'release/' + id, { cache: 'no-store' }).catch(() => {});
        resolve();
      }; });
      batch.done = ended.then(() => hold);
    }
    const mine = batch;
    mine.pending += 1;
    const end = () => {
      mine.pending -= 1;
      if (mine.pending === 0) {
        if (batch === mine) batch = null;
        mine.release();
      }
      return mine.done;
    };
    let work;
    try { work = Promise.resolve(start()); } catch (e) { work = Promise.reject(e); }
    const settled = work.then((value) => end().then(() => value),
                              (error) => end().then(() => { throw error; }));
    const ordered = lastHeld.then(() => settled, () => settled);
    lastHeld = ordered.catch(() => {});
    return ordered;
  };
  let state = (__SEED__ >>> 0) || 0x9e3779b9;
  const next = () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  Math.random = function () { return next() / 4294967296; };
  // Other clocks and random sources a replay must not depend on: crypto randomness is
  // seeded like Math.random; idle callbacks run on virtual-time timers (Chromium would
  // schedule them by real idleness). What cannot be pinned is reported as a risk.
  try {
    const fill = (array) => {
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 255;
      return array;
    };
    Object.defineProperty(crypto, 'getRandomValues', { value: fill, configurable: true });
    Object.defineProperty(crypto, 'randomUUID', { configurable: true, value: () => {
      const h = [...fill(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
    } });
  } catch (e) {}
  // Schedulers (React's among them) prefer setImmediate over MessageChannel when it
  // exists; MessageChannel tasks run outside virtual time, so give them a timer instead.
  if (typeof window.setImmediate !== 'function') {
    window.setImmediate = (cb, ...args) => setTimeout(cb, 0, ...args);
    window.clearImmediate = (id) => clearTimeout(id);
  }
  window.requestIdleCallback = (cb) => setTimeout(() => cb({ didTimeout: false, timeRemaining: () => 0 }), 1);
  window.cancelIdleCallback = (id) => clearTimeout(id);
  // Is the game still busy? Settling waits until no short timer of the page is pending (a
  // game that thinks 300-500 ms between cascade stages shows nothing meanwhile), and counts
  // DOM mutations and bridge events, all on the virtual clock (see playtest/settle.py).
  const BUSY_TIMER_MS = 1000;
  const pendingTimers = new Set();
  let mutations = 0;
  try {
    const setT = window.setTimeout, clearT = window.clearTimeout;
    window.setTimeout = function (callback, delay, ...args) {
      const ms = Number(delay) || 0;
      if (typeof callback !== 'function' || ms > BUSY_TIMER_MS) return setT.call(window, callback, delay, ...args);
      const id = setT.call(window, (...a) => { pendingTimers.delete(id); return callback(...a); }, delay, ...args);
      pendingTimers.add(id);
      return id;
    };
    window.clearTimeout = function (id) { pendingTimers.delete(id); return clearT.call(window, id); };
    new MutationObserver((records) => { mutations += records.length; })
      .observe(document, { attributes: true, childList: true, subtree: true, characterData: true });
  } catch (e) {}
  // The fourth count: what is scheduled on the virtual clock at all — the page's timers and
  // intervals of any delay (held ones too), the next virtual animation frame (animation
  // frames, held CSS animations, observers) and an image decode holding the clock. None means
  // nothing can change before something outside the page's clock (input, the network) does.
  const scheduled = () => liveTimers.size + heldTimers.size + untrackedTimers
    + (frameTimer !== null || frameQueue.size > 0 ? 1 : 0) + (batch !== null ? 1 : 0);
  Object.defineProperty(window, '__lingxiActivity', {
    value: () => [pendingTimers.size, mutations, emitted, scheduled()], writable: false, configurable: false });
  const risks = new Set();
  const watch = (name, why) => {
    const Original = window[name];
    if (typeof Original !== 'function') return;
    window[name] = new Proxy(Original, { construct(target, args, newTarget) {
      risks.add(why); return Reflect.construct(target, args, newTarget); } });
  };
  watch('Worker', 'worker: a Web Worker runs without the seeded Math.random and rAF clock');
  watch('SharedWorker', 'worker: a shared worker runs outside the page\'s virtual clock');
  watch('MessageChannel', 'scheduler: MessageChannel messages are delivered outside virtual time');
  watch('WebSocket', 'network: a WebSocket delivers messages at real-time moments');
  // Off-thread decoding settles its promise when the decoder is done: held on the clock
  // (above) where the page can reach the harness, a risk where it cannot (about:, file:).
  const holdCall = (owner, name, why) => {
    const original = owner && owner[name];
    if (typeof original !== 'function') return;
    owner[name] = function (...args) {
      if (!canHold()) risks.add(why);
      return holdClock(() => original.apply(this, args));
    };
  };
  holdCall(window, 'createImageBitmap', 'decode: createImageBitmap resolves at a real-time moment');
  holdCall(HTMLImageElement.prototype, 'decode', 'decode: img.decode() resolves at a real-time moment');
  watch('AudioContext', 'audio: an AudioContext clock runs in real time');
  watch('OfflineAudioContext', 'audio: offline audio rendering completes at real-time moments');
  // CSS transitions, CSS animations and Web Animations on the virtual clock. Chromium runs
  // them on its own frame clock (real time), so each one is taken over when it appears: it
  // is paused, and at every virtual animation frame its currentTime is advanced by the
  // virtual time since (times its playbackRate); at its end it is finished. New ones are
  // looked for (document.getAnimations) at the end of every task that changed the DOM, on
  // input, after animate() / play(), and at every virtual frame while any is held. One that
  // had already started on Chromium's clock when found, and a page that handles CSS
  // animation events (Chromium still sends those on its frame clock), are replay risks.
  const Anim = window.Animation;
  const cssRisk = (why) => risks.add('css-animation' + why);
  if (typeof Anim === 'function' && typeof document.getAnimations === 'function') {
    const proto = Anim.prototype, pause = proto.pause, play = proto.play, finish = proto.finish;
    const held = new Map();  // animation -> { time: its currentTime as last set, at: virtual ms }
    const pagePaused = new WeakSet();
    const timeOf = (a) => { const t = a.currentTime; return typeof t === 'number' && isFinite(t) ? t : 0; };
    const endOf = (a) => { try { return a.effect ? a.effect.getComputedTiming().endTime : 0; }
                           catch (e) { return 0; } };
    const take = (a, now, fresh) => {
      if (fresh && !a.pending) cssRisk(': an animation started on the real frame clock');
      try { pause.call(a); a.currentTime = timeOf(a); } catch (e) { return; }
      held.set(a, { time: timeOf(a), at: now });
    };
    const advanceHeld = (a, h, now) => {
      const rate = a.playbackRate, time = h.time + (now - h.at) * rate;
      if ((rate > 0 && time >= endOf(a)) || (rate < 0 && time <= 0)) {
        held.delete(a);
        try { finish.call(a); } catch (e) {}
        return;
      }
      try { a.currentTime = time; } catch (e) {}
      h.time = timeOf(a); h.at = now;
    };
    let queued = false;
    const sync = () => {
      queued = false;
      let list;
      try { list = document.getAnimations(); } catch (e) { return; }
      const now = clock(), live = new Set(list);
      for (const a of held.keys()) if (!live.has(a)) held.delete(a);
      for (const a of list) {
        if (a.timeline !== document.timeline) continue;
        const h = held.get(a), state = a.playState;
        if (h === undefined) { if (state === 'running') take(a, now, true); }
        else if (state === 'running') take(a, now, false);  // the page played it again
        else if (state !== 'paused') held.delete(a);  // finished or cancelled by the page
        else if (timeOf(a) !== h.time || pagePaused.has(a)) { h.time = timeOf(a); h.at = now; }
        else advanceHeld(a, h, now);
      }
      if (held.size) scheduleFrame();
    };
    onStart.push(() => { if (held.size) scheduleFrame(); });
    const soon = () => { if (!queued) { queued = true; queueMicrotask(sync); } };
    animationFrame = () => { if (held.size) sync(); };
    proto.pause = function () { pagePaused.add(this); return pause.call(this); };
    proto.play = function () { pagePaused.delete(this); const out = play.call(this); soon(); return out; };
    const animate = Element.prototype.animate;
    if (typeof animate === 'function') {
      Element.prototype.animate = function (...args) { const out = animate.apply(this, args); soon(); return out; };
    }
    new MutationObserver(sync).observe(document, { attributes: true, childList: true, subtree: true,
                                                   characterData: true });
    for (const type of ['pointerdown', 'pointerup', 'pointermove', 'mousedown', 'mouseup', 'mousemove',
                        'touchstart', 'touchend', 'keydown', 'keyup', 'focusin', 'focusout']) {
      window.addEventListener(type, () => { soon(); scheduleFrame(); }, { capture: true, passive: true });
    }
    const handled = new Set(['transitionend', 'transitionstart', 'transitioncancel', 'animationend',
                             'animationiteration', 'animationcancel']);
    const listen = EventTarget.prototype.addEventListener;
    const listening = new Set();
    EventTarget.prototype.addEventListener = function (type, ...rest) {
      if (handled.has(String(type))) listening.add(String(type));
      return listen.call(this, type, ...rest);
    };
    const sent = (e) => {
      if (listening.has(e.type) || (e.target && typeof e.target['on' + e.type] === 'function'))
        cssRisk('-events: the page handles events sent on real frames');
    };
    for (const type of handled) listen.call(window, type, sent, true);
  } else {
    const css = () => cssRisk(': CSS animations run on the real frame clock');
    window.addEventListener('transitionrun', css, true);
    window.addEventListener('animationstart', css, true);
  }
  Object.defineProperty(window, '__lingxiRisks', { value: () => [...risks],
    writable: false, configurable: false });
})();
"""


EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: the page's Date when its clock starts


def bridge_script(seed: int) -> str:
    """The init script for a run with ``seed``."""
    return _BRIDGE.replace("__SEED__", str(int(seed) & 0xFFFFFFFF)).replace("__EPOCH__",
                                                                              str(EPOCH_MS))


START_CLOCK_JS = "() => window.__lingxiStartClock && window.__lingxiStartClock()"
DRAIN_JS = "() => (window.__lingxiDrain ? window.__lingxiDrain() : [[], 0])"
SEEN_JS = "() => (window.__lingxiSeen ? window.__lingxiSeen() : {})"
# A gesture starts or ends (the page quiets selection and stray drags meanwhile); returns
# what the page has seen, so a gesture's first event needs no read of its own.
GESTURE_JS = ("(on) => { if (window.__lingxiGesture) window.__lingxiGesture(on); "
              "return window.__lingxiSeen ? window.__lingxiSeen() : {}; }")
# What the page has seen, and the gesture's end when its last event (``kind``, and ``also``
# sent just before it, unless null) has arrived since ``before`` — the arrival rule of
# browser.GamePage._seen_more (a count that went down is a new document) — so the release's
# arrival and the gesture's end take one page read.
ARRIVED_END_JS = """(kind, also, before) => {
  const s = window.__lingxiSeen ? window.__lingxiSeen() : {};
  const reset = Object.keys(before).some((k) => (s[k] || 0) < before[k]);
  const more = (k) => (s[k] || 0) > (reset ? 0 : (before[k] || 0));
  if (more(kind) && (also === null || more(also)) && window.__lingxiGesture)
    window.__lingxiGesture(false);
  return s;
}"""
ACTIVITY_JS = "() => (window.__lingxiActivity ? window.__lingxiActivity() : null)"
RISKS_JS = "() => (window.__lingxiRisks ? window.__lingxiRisks() : [])"
# The extent of the page's content in CSS pixels (what the camera must fit): the union of
# the visible elements' boxes in document coordinates, from the document's origin (content
# left of or above it cannot be scrolled to, but a wider window re-centres a centred
# layout). Not scrollWidth: a stage centred with translateX(-50%) overflows on both sides,
# and scrollWidth counts only the right half, so each fit would reveal more to fit
# (issue 24.5: seven zooms over six actions). Up to 5000 elements are read.
PAGE_SIZE_JS = """() => {
  const d = document.documentElement, b = document.body || d;
  let right = Math.max(d.clientWidth, 1), bottom = Math.max(d.clientHeight, 1), left = 0, top = 0;
  const sx = window.scrollX, sy = window.scrollY;
  const all = b.getElementsByTagName('*');
  for (let i = 0; i < all.length && i < 5000; i++) {
    const r = all[i].getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const x0 = r.left + sx, y0 = r.top + sy, x1 = r.right + sx, y1 = r.bottom + sy;
    if (x0 >= left && y0 >= top && x1 <= right && y1 <= bottom) continue;  // inside already
    const style = getComputedStyle(all[i]);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    left = Math.min(left, x0); top = Math.min(top, y0);
    right = Math.max(right, x1); bottom = Math.max(bottom, y1);
  }
  return [Math.ceil(right - left), Math.ceil(bottom - top)];
}"""

# The score a page shows in its own markup, for games that report none on the bridge (a
# game nobody wrote for Lingxi, issue 24): the visible element whose id or class names a
# score (not a best, high or target score) and whose text holds exactly one number, the
# one with the shortest text (the counter itself, not its label's box) first in document
# order. Returns [value, element] (element: "#id" or "tag.class", at most 60 characters)
# or null. The page's text is data: only the number and the element's name leave it.
SHOWN_SCORE_JS = r"""
() => {
  const NAME = /score|points/i, NOT = /best|high|top|record|target|goal|max|level|combo/i;
  let best = null;
  for (const el of document.querySelectorAll('[id],[class]')) {
    const cls = typeof el.className === 'string' ? el.className : (el.getAttribute('class') || '');
    const key = (el.id || '') + ' ' + cls;
    if (!NAME.test(key) || NOT.test(key)) continue;
    const text = (el.textContent || '').trim();
    if (text.length === 0 || text.length > 40) continue;
    const numbers = text.replace(/[\s,\u00a0']/g, '').match(/-?\d+(\.\d+)?/g);
    if (!numbers || numbers.length !== 1) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none') continue;
    if (best === null || text.length < best[2]) {
      const name = el.id ? '#' + el.id
        : el.tagName.toLowerCase() + '.' + cls.trim().split(/\s+/)[0];
      best = [Number(numbers[0]), name.slice(0, 60), text.length];
    }
  }
  return best && Number.isFinite(best[0]) ? [best[0], best[1]] : null;
}
"""

SNAPSHOT_JS = r"""
() => {
  const W = window.innerWidth, H = window.innerHeight;
  const INTERACTIVE = 'a[href],button,input,select,textarea,summary,[role=button],[role=link],' +
    '[role=checkbox],[role=tab],[role=menuitem],[onclick],[tabindex]:not([tabindex="-1"])';
  const shown = (el, r) => {
    if (r.width < 1 || r.height < 1) return false;
    if (r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none' && parseFloat(s.opacity || '1') > 0.05;
  };
  const rect = (r) => [Math.round(r.left * 2) / 2, Math.round(r.top * 2) / 2,
                       Math.round(r.width * 2) / 2, Math.round(r.height * 2) / 2];
  // a parent is asked about for each of its children: each element's answer is kept
  const pointers = new Map();
  const pointer = (el) => {
    let out = pointers.get(el);
    if (out === undefined) {
      out = el.matches(INTERACTIVE) || getComputedStyle(el).cursor === 'pointer';
      pointers.set(el, out);
    }
    return out;
  };
  const hit = (el, r) => {
    const x = Math.min(Math.max(r.left + r.width / 2, 0), W - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), H - 1);
    const root = el.getRootNode();
    const top = (root && root.elementFromPoint ? root : document).elementFromPoint(x, y);
    return top && (top === el || el.contains(top) || top.contains(el));
  };
  const interactive = [], boxes = [], canvases = [];
  // Every element, open shadow roots included (web-component boards), at most 5000.
  const all = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (all.length >= 5000) return;
      all.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  if (document.body) walk(document.body);
  for (const el of all) {
    const r = el.getBoundingClientRect();
    if (!shown(el, r)) continue;
    const tag = el.tagName.toLowerCase();
    if (tag === 'canvas') { canvases.push(rect(r)); continue; }
    if (r.width >= 8 && r.height >= 8 && r.width <= 160 && r.height <= 160) boxes.push(rect(r));
    if (pointer(el) && !(el.parentElement && pointer(el.parentElement)) && hit(el, r))
      interactive.push(rect(r));
  }
  // As JSON text: one string crosses to the harness instead of a tree of numbers that
  // Playwright would serialize and check value by value. Written here, not by
  // JSON.stringify (a page's toJSON on Array.prototype would change it); -0 (a box a hair
  // left of the window) is written "-0" so that the harness reads the number it read before.
  const list = (rects) => {
    let out = '[';
    for (let i = 0; i < rects.length; i++) {
      out += (i ? ',[' : '[');
      for (let j = 0; j < rects[i].length; j++) {
        const v = rects[i][j];
        out += (j ? ',' : '') + (Object.is(v, -0) ? '"-0"' : String(v));
      }
      out += ']';
    }
    return out + ']';
  };
  return '{"interactive":' + list(interactive) + ',"boxes":' + list(boxes) +
         ',"canvases":' + list(canvases) + '}';
}
"""
