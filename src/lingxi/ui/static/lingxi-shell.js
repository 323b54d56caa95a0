/* Lingxi's shell around a registry's page (served at / when the protocol's UI came from a
 * registry). The shell is Lingxi's own: it holds the token, shows the open decision with
 * Lingxi's buttons, the log and the outcome. The registry's page runs in a sandboxed frame
 * (no allow-same-origin: an opaque origin, no token, no storage of ours, no network by its
 * CSP) and talks to the shell through one narrow bridge:
 *
 *   shell -> page: {lingxi: 1, kind: "state", data: <GET /api/state>}
 *                  {lingxi: 1, kind: "event", data: <an event record>}
 *   page -> shell: {lingxi: 1, kind: "ready"}            (send me everything so far)
 *                  {lingxi: 1, kind: "choose", value: V} (suggest a legal value)
 *
 * A suggestion only marks the matching button; the person plays it by clicking. Nothing
 * else a page sends is acted on: it cannot decide, abort, type a line or navigate.
 */
(function () {
  "use strict";
  const frame = document.getElementById("lx-frame");
  const seen = [];  // every message for the page, replayed when it (re)loads
  let lastState = null;
  const LIMIT = 20000;

  function post(kind, data) {
    const message = {lingxi: 1, kind: kind, data: data};
    if (kind === "event") { seen.push(message); if (seen.length > LIMIT) seen.shift(); }
    if (kind === "state") lastState = message;
    if (frame.contentWindow) frame.contentWindow.postMessage(message, "*");
  }

  function replay() {
    if (!frame.contentWindow) return;
    for (const message of seen) frame.contentWindow.postMessage(message, "*");
    if (lastState) frame.contentWindow.postMessage(lastState, "*");
  }

  function propose(value) {
    const wanted = JSON.stringify(value);
    const buttons = document.querySelectorAll("#lx-decision button.lx-choice[data-value]");
    let found = null;
    buttons.forEach(button => {
      button.classList.remove("lx-proposed");
      if (button.dataset.value === wanted) found = button;
    });
    const note = document.getElementById("lx-decision-note");
    if (!found) return;  // not a legal value now: ignored
    found.classList.add("lx-proposed");
    found.title = "the page suggests this move";
    if (note) note.textContent = "the page suggests " + found.textContent + ": click it to play it";
  }

  window.addEventListener("message", event => {
    if (event.source !== frame.contentWindow) return;  // only our frame, nothing else
    const data = event.data;
    if (!data || typeof data !== "object" || data.lingxi !== 1) return;
    if (data.kind === "ready") replay();
    else if (data.kind === "choose") propose(data.value);
    // anything else (decide, abort, input, navigate…) is not offered: ignored
  });
  frame.addEventListener("load", replay);

  LingxiUI.start({
    onEvent(e) { post("event", e); },
    onState(state) { post("state", state); },
  });

  // which bundle this is and who published it: the registry's facts, shown as text
  let token = null;
  try { token = sessionStorage.getItem("lingxi-token"); } catch (err) { /* no storage */ }
  if (!token) return;
  fetch("/api/page", {headers: {"X-Lingxi-Token": token}}).then(r => r.json()).then(info => {
    const facts = document.getElementById("lx-bundle-facts");
    const bundle = (info && info.bundle) || {};
    const publisher = bundle.publisher && typeof bundle.publisher === "object" ? bundle.publisher : {};
    const rows = [["bundle", bundle.bundle_id || "unknown (no .lingxi-bundle.json)"],
                  ["published by", publisher.nickname ? publisher.nickname + " (" + (publisher.agent_id || publisher.public_key || "?") + ")"
                                   : (publisher.agent_id || publisher.public_key || "unknown")],
                  ["registry", bundle.registry || "unknown"]];
    if (bundle.allowed_by) rows.push(["allowed by", bundle.allowed_by]);
    for (const [name, value] of rows) {
      facts.appendChild(LingxiUI.el("dt", "", name));
      facts.appendChild(LingxiUI.el("dd", "", LingxiUI.show(value)));
    }
  }, () => {});
})();
