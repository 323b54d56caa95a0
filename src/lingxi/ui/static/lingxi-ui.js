/* Lingxi's shared client for protocol pages (served at /lingxi-ui.js by `--ui`).
 *
 * LingxiUI.start(page) connects to the running session (GET /api/state, the SSE stream
 * GET /api/events), shows the open decision (buttons for legal values, a number field for
 * bounds, a text field otherwise), its countdown, the event log and the outcome, and
 * answers through POST /api/decide. Everything from the session is put on the page with
 * textContent / element attributes only, never as HTML.
 *
 * `page` (all optional):
 *   describe(event, ctx) -> string | {text, cls} | null | undefined
 *       a log line for an event (null hides it; undefined = the generic line);
 *       ctx = {role, peer, state}
 *   label(value, ctx) -> string             a button's text for a legal value
 *   viewRows(view, ctx) -> [[name, value]]  the decision's projection as rows
 *   onEvent(event, ctx), onState(state, ctx) for protocol widgets (scoreboard, hand)
 *   multiline: true                         a free-text decision gets a text area
 * Without a token in the URL (a page opened from disk) only the events.jsonl replay runs.
 */
(function () {
  "use strict";

  // bidi overrides/isolates and control characters in session text become visible escapes,
  // so a peer's string cannot reorder or hide what is around it
  const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  const clean = text => String(text).replace(UNSAFE, c => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = clean(text);
    return node;
  };
  const show = value => {
    if (value === null || value === undefined) return "—";
    if (typeof value === "string") return value;
    if (Array.isArray(value) && value.every(v => typeof v !== "object" || v === null))
      return value.map(show).join(", ");
    return JSON.stringify(value);
  };
  const genericLabel = value => {
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      return Object.values(value).map(show).join(" ");
    return show(value);
  };

  function part(id, tag, cls) {
    let node = document.getElementById(id);
    if (!node) {
      node = el(tag, cls);
      node.id = id;
      (document.getElementById("lingxi") || document.body).appendChild(node);
    }
    return node;
  }

  function genericLine(e, ctx) {
    const mine = e.event === "message.sent";
    const lab = value => (ctx.label ? ctx.label(value) : genericLabel(value));
    const outcome = e.status === "completed" ? "completed" : e.status;
    switch (e.event) {
      case "session.offered": return null;
      case "session.started": return {text: "session started" + (e.mode ? " (" + e.mode + ")" : ""), cls: "lx-muted"};
      case "message.sent":
      case "message.received":
        if (typeof e.text !== "string") return null;
        return {text: (mine ? "you" : "peer") + ": " + e.text, cls: mine ? "lx-mine" : "lx-peer"};
      case "round": {
        const you = ctx.role, peer = ctx.peer;
        const r = e.result || {};
        const winner = r.round_winner === you ? "you win" : r.round_winner === peer ? "peer wins" : r.round_winner;
        return {text: "round " + e.round + ": you " + show(e[you]) + ", peer " + show(e[peer]) +
          (winner ? " → " + show(winner) : ""), cls: "lx-round"};
      }
      case "decision.requested": return {text: "your decision is open (" + e.point_id + ")", cls: "lx-muted"};
      case "decision.made": return {text: "you chose " + lab(e.value), cls: "lx-mine"};
      case "decision.timeout_fallback": return {text: "time is up: the default " + lab(e.value) + " was used", cls: "lx-warn"};
      case "decision.declined": return {text: "decision declined: " + show(e.reason), cls: "lx-warn"};
      case "decision.declined_fallback": return {text: "the default " + lab(e.value) + " was used", cls: "lx-warn"};
      case "decision.rejected": return {text: "answer refused: " + lab(e.value) + " is not allowed", cls: "lx-warn"};
      case "decision.ignored": return {text: "answer ignored: " + show(e.reason), cls: "lx-warn"};
      case "peer.deciding": return {text: "the peer is deciding (up to " + show(e.seconds) + " s)", cls: "lx-muted"};
      case "violation": return {text: "⚠ " + show(e.code) + ": " + show(e.reason), cls: "lx-violation"};
      case "peer.aborted": return {text: "the peer aborted: " + show(e.reason || e.code), cls: "lx-warn"};
      case "peer.closed": return {text: "the peer closed the connection", cls: "lx-warn"};
      case "session.abort_requested": return {text: "abort requested: " + show(e.reason), cls: "lx-warn"};
      case "session.finished": return {text: "session " + outcome + (e.code ? " (" + e.code + ")" : "") + (e.reason ? ": " + e.reason : ""), cls: "lx-end"};
      case "receipts.exchanged": return null;  // shown as the proof, in the outcome box
      default: return null;
    }
  }

  function makeLog(page, ctx) {
    const log = part("lx-log", "ol", "lx-log");
    return function add(e) {
      if (!ctx.role && (e.role === "host" || e.role === "guest")) {
        ctx.role = e.role;
        ctx.peer = e.role === "host" ? "guest" : "host";
      }
      let line = page.describe ? page.describe(e, ctx) : undefined;
      if (line === undefined) line = genericLine(e, ctx);
      if (line === null || line === undefined || line === "") return;
      if (typeof line === "string") line = {text: line};
      const li = el("li", line.cls || "", line.text);
      li.dataset.event = e.event;
      if (typeof e.t === "number") li.title = new Date(e.t * 1000).toLocaleTimeString();
      log.appendChild(li);
      li.scrollIntoView({block: "nearest"});
    };
  }

  // "You won 2–1" / "You lost" / "A draw": the outcome in terms of this side
  function headline(outcome, ctx) {
    const summary = outcome.summary || {};
    if (outcome.status !== "completed") return "The session was " + (outcome.status || "ended");
    const score = summary.score && typeof summary.score === "object" ? summary.score : null;
    const tally = score && ctx.role && typeof score[ctx.role] === "number" && typeof score[ctx.peer] === "number"
      ? " " + score[ctx.role] + "–" + score[ctx.peer] : "";
    const w = summary.winner;
    if (w === undefined || w === null || w === "none") return "Game over" + tally;
    if (w === ctx.role) return "You won" + tally;
    if (w === ctx.peer) return "You lost" + tally;
    if (w === "draw") return "A draw" + tally;
    return "Winner: " + show(w) + tally;
  }

  function outcomeText(outcome, ctx) {
    if (!outcome) return "";
    const summary = outcome.summary || {};
    const parts = ["Session " + (outcome.status || "ended")];
    if (outcome.code) parts.push("(" + outcome.code + ")");
    let text = parts.join(" ");
    if (summary.winner !== undefined && summary.winner !== null) {
      const w = summary.winner === ctx.role ? "you (" + summary.winner + ")"
        : summary.winner === ctx.peer ? "the peer (" + summary.winner + ")" : show(summary.winner);
      text += " — winner: " + w;
    }
    if (outcome.reason) text += " — " + outcome.reason;
    return text;
  }

  function renderOutcome(state, ctx) {
    const box = part("lx-outcome", "div", "lx-outcome");
    const outcome = state.outcome;
    box.hidden = !outcome;
    const proof = proofNode;
    box.textContent = "";
    if (!outcome) return;
    box.appendChild(el("p", "lx-headline", headline(outcome, ctx)));
    box.appendChild(el("strong", "lx-outcome-line", outcomeText(outcome, ctx)));
    const summary = outcome.summary || {};
    const dl = el("dl", "lx-rows");
    for (const [name, value] of Object.entries(summary)) {
      dl.appendChild(el("dt", "", name));
      dl.appendChild(el("dd", "", show(value)));
    }
    if (dl.childNodes.length) box.appendChild(dl);
    if (proof) box.appendChild(proof);
    box.dataset.status = outcome.status || "";
  }

  // the proof of a finished session (receipts.exchanged): kept in the outcome box
  let proofNode = null;
  function renderProof(e) {
    if (!proofNode) {
      proofNode = el("dl", "lx-rows lx-proof");
      proofNode.id = "lx-proof";
    }
    const proof = proofNode;
    proof.textContent = "";
    const rows = [["receipts", e.verified ? "both signed, the peer's verified" : "NOT verified: " + show(e.problems)],
                  ["transcript head", e.transcript_head], ["your receipt", e.receipt_hash],
                  ["the peer's receipt", e.peer_receipt_hash]];
    for (const [name, value] of rows) {
      if (value === undefined) continue;
      proof.appendChild(el("dt", "", name));
      proof.appendChild(el("dd", "", show(value)));
    }
    proof.dataset.verified = e.verified ? "true" : "false";
    const box = document.getElementById("lx-outcome");
    if (box && !box.hidden) box.appendChild(proof);
  }

  function start(page) {
    page = page || {};
    const params = new URLSearchParams(location.search);
    let token = params.get("token");
    try {
      if (token) sessionStorage.setItem("lingxi-token", token);
      else token = sessionStorage.getItem("lingxi-token");
    } catch (err) { /* storage may be off; the URL token still works */ }
    const ctx = {role: null, peer: null, state: null};
    ctx.label = value => (page.label ? page.label(value, ctx) : genericLabel(value));
    replay(page, ctx);
    if (!token || location.protocol === "file:") {
      part("lx-status", "p", "lx-status").textContent = "Not connected to a session (open the URL that `--ui` prints); you can replay an events.jsonl file.";
      return;
    }
    if (params.has("token")) history.replaceState(null, "", location.pathname);
    const status = part("lx-status", "p", "lx-status");
    const decision = part("lx-decision", "section", "lx-decision");
    const add = makeLog(page, ctx);
    let pending = null, deadline = null, busy = false, timer = null;

    const api = (path, body) => fetch(path, {
      method: "POST", headers: {"Content-Type": "application/json", "X-Lingxi-Token": token},
      body: JSON.stringify(body)}).then(r => r.json().catch(() => ({ok: false, code: "ui.bad_reply", message: "HTTP " + r.status})));

    function setRole(state) {
      ctx.state = state;
      if (state.role) {
        ctx.role = state.role;
        ctx.peer = state.role === "host" ? "guest" : "host";
      }
    }

    function statusLine(state) {
      const bits = [];
      if (state.protocol) bits.push(state.protocol);
      if (state.role) bits.push("you are the " + state.role);
      if (state.mode) bits.push(state.mode);
      if (state.session_id) bits.push("session " + String(state.session_id).slice(0, 8));
      status.textContent = clean(bits.length ? bits.join(" · ") : "waiting for the session to start…");
      const rules = document.getElementById("lx-rules");
      if (rules && !rules.childNodes.length && state.rules && typeof state.rules === "object") {
        for (const [name, text] of Object.entries(state.rules)) {
          const li = el("li");
          li.appendChild(el("b", "", name));
          li.appendChild(document.createTextNode(clean(": " + show(text))));
          rules.appendChild(li);
        }
      }
    }

    function tick() {
      const clock = document.getElementById("lx-countdown");
      if (!clock || deadline === null) return;
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      clock.textContent = left + " s left";
      clock.classList.toggle("lx-urgent", left <= 10);
    }

    function answer(value) {
      if (!pending || busy) return;
      busy = true;
      decision.querySelectorAll("button, input, textarea").forEach(n => { n.disabled = true; });
      const note = document.getElementById("lx-decision-note");
      api("/api/decide", {value: value, point_id: pending.point_id}).then(reply => {
        if (reply.ok) { if (note) note.textContent = "sent — waiting for the session…"; return; }
        busy = false;
        decision.querySelectorAll("button, input, textarea").forEach(n => { n.disabled = false; });
        if (note) note.textContent = clean("refused: " + show(reply.code) + " — " + show(reply.message));
      }, err => {
        busy = false;
        if (note) note.textContent = "could not reach the session: " + err;
        decision.querySelectorAll("button, input, textarea").forEach(n => { n.disabled = false; });
      });
    }

    function renderDecision(state) {
      pending = state.pending_decision || null;
      busy = false;
      decision.textContent = "";
      if (timer) { clearInterval(timer); timer = null; }
      deadline = null;
      decision.hidden = !pending;
      if (!pending) return;
      decision.dataset.point = pending.point_id;
      decision.appendChild(el("h2", "lx-prompt", "Your decision"));
      if (pending.message) decision.appendChild(el("p", "lx-muted lx-message", pending.message));
      if (typeof pending.seconds_left === "number") {
        deadline = Date.now() + pending.seconds_left * 1000;
        const clock = el("p", "lx-countdown");
        clock.id = "lx-countdown";
        decision.appendChild(clock);
        tick();
        timer = setInterval(tick, 250);
      }
      const view = pending.view || {};
      const rows = page.viewRows ? page.viewRows(view, ctx) : Object.entries(view).filter(([k]) => k !== "suggested");
      if (rows && rows.length) {
        const dl = el("dl", "lx-rows lx-view");
        for (const [name, value] of rows) {
          dl.appendChild(el("dt", "", name));
          dl.appendChild(el("dd", "", show(value)));
        }
        decision.appendChild(dl);
      }
      const choices = el("div", "lx-choices");
      const legal = Array.isArray(pending.legal) ? pending.legal : [];
      const suggested = view.suggested;
      if (legal.length) {
        legal.forEach((value, index) => {
          const label = page.label ? page.label(value, ctx) : genericLabel(value);
          const button = el("button", "lx-choice", label);
          button.type = "button";
          button.dataset.index = String(index);
          button.dataset.value = JSON.stringify(value);
          if (suggested !== undefined && JSON.stringify(suggested) === JSON.stringify(value)) {
            button.classList.add("lx-suggested");
            button.title = "suggested";
          }
          button.addEventListener("click", () => answer(value));
          choices.appendChild(button);
        });
      } else {
        const form = el("form", "lx-free");
        const bounds = Array.isArray(pending.bounds) ? pending.bounds : null;
        const input = el(!bounds && page.multiline ? "textarea" : "input");
        input.id = "lx-value";
        input.required = true;
        if (bounds) {
          input.type = "number";
          input.step = "1";
          if (bounds[0] !== null) input.min = String(bounds[0]);
          if (bounds[1] !== null) input.max = String(bounds[1]);
          input.placeholder = show(bounds[0]) + " … " + show(bounds[1]);
        } else {
          if (input.tagName === "INPUT") input.type = "text";
          else input.rows = 6;
          input.placeholder = "your answer";
        }
        if (suggested !== undefined && suggested !== null) input.value = String(suggested);
        const send = el("button", "lx-choice", "Send");
        send.type = "submit";
        form.appendChild(input);
        form.appendChild(send);
        form.addEventListener("submit", ev => {
          ev.preventDefault();
          answer(bounds ? Number.parseInt(input.value, 10) : input.value);
        });
        choices.appendChild(form);
      }
      decision.appendChild(choices);
      const note = el("p", "lx-note");
      note.id = "lx-decision-note";
      decision.appendChild(note);
    }

    function onState(state) {
      setRole(state);
      statusLine(state);
      renderDecision(state);
      renderOutcome(state, ctx);
      abortButton.hidden = !!state.finished;
      if (page.onState) page.onState(state, ctx);
    }

    const abortButton = part("lx-abort", "button", "lx-abort");
    abortButton.type = "button";
    abortButton.textContent = "Leave the session";
    abortButton.addEventListener("click", () => {
      if (!confirm("Abort this session? The peer is told you left.")) return;
      api("/api/abort", {reason: "the person left (browser)"}).then(reply => {
        if (!reply.ok) part("lx-status", "p", "lx-status").textContent = clean("could not abort: " + show(reply.message));
      });
    });

    // free mode: a page with <form id="lx-input"><input name="line"> sends lines
    const form = document.getElementById("lx-input");
    if (form) {
      form.hidden = false;
      form.addEventListener("submit", ev => {
        ev.preventDefault();
        const field = form.querySelector("input[name=line]"), note = document.getElementById("lx-input-note");
        const line = field.value;
        if (!line.trim()) return;
        api("/api/input", {line: line}).then(reply => {
          if (reply.ok) { field.value = ""; if (note) note.textContent = ""; return; }
          if (note) note.textContent = clean("refused: " + show(reply.code) + " — " + show(reply.message));
        });
      });
    }

    const source = new EventSource("/api/events?token=" + encodeURIComponent(token));
    source.onmessage = msg => {
      let e;
      try { e = JSON.parse(msg.data); } catch (err) { return; }
      add(e);
      if (e.event === "receipts.exchanged") renderProof(e);
      if (page.onEvent) page.onEvent(e, ctx);
    };
    source.addEventListener("state", msg => {
      try { onState(JSON.parse(msg.data)); } catch (err) { /* a bad frame is skipped */ }
    });
    // once the end is here the page keeps what it shows (result, rounds, proof) on its own:
    // the stream is closed, so a server that goes away costs nothing
    let ended = false;
    source.addEventListener("end", () => {
      ended = true;
      source.close();
      document.body.dataset.finished = "true";
      status.textContent = clean(status.textContent.replace(/ · .*(lost|over).*$/, "") +
        " · the session is over; this page keeps its record");
    });
    source.onerror = () => {
      if (ended) return;
      if (!/ · connection lost/.test(status.textContent))
        status.textContent += " · connection lost, retrying…";
    };
    source.onopen = () => {
      status.textContent = status.textContent.replace(/ · connection lost, retrying…/, "");
    };
  }

  function replay(page, ctx) {
    const input = document.getElementById("lx-file");
    if (!input) return;
    input.addEventListener("change", async ev => {
      const file = ev.target.files && ev.target.files[0];
      if (!file) return;
      const log = part("lx-log", "ol", "lx-log");
      log.textContent = "";
      const add = makeLog(page, ctx);
      for (const row of (await file.text()).split("\n")) {
        if (!row.trim()) continue;
        let e;
        try { e = JSON.parse(row); } catch (err) { continue; }
        if (!ctx.role && typeof e.role === "string") {
          ctx.role = e.role;
          ctx.peer = e.role === "host" ? "guest" : "host";
        }
        add(e);
        if (e.event === "session.finished") renderOutcome({outcome: e}, ctx);
        if (e.event === "receipts.exchanged") renderProof(e);
      }
    });
  }

  window.LingxiUI = {start: start, show: show, label: genericLabel, el: el, clean: clean};
})();
