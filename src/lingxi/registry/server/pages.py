"""The read-only web pages: protocols, open invitations, finished sessions; the API docs.

Rendered on the server with every value escaped; no script runs on ``/`` or a
protocol page. ``/docs`` carries one small inline script that reads
``/openapi.json`` and lets a reader try the GET routes; it loads nothing from
elsewhere.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from typing import Any

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:14px 24px}header a{color:#fff}
main{max-width:1100px;margin:0 auto;padding:8px 24px 40px}
h1{font-size:20px;margin:0}h2{font-size:17px;margin:26px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 2px #0001}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #e3e6ea;vertical-align:top}
th{background:#eef1f4;font-weight:600}code,pre{font:13px ui-monospace,monospace}
pre{background:#fff;padding:12px;overflow:auto;box-shadow:0 1px 2px #0001}
.empty{color:#6b7480;font-style:italic}.id{word-break:break-all}
"""


def _page(title: str, body: str, script: str = "") -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<header><h1><a href='/'>Lingxi registry</a> · {escape(title)}</h1>"
            f"<small><a href='/docs'>API docs</a> · <a href='/openapi.json'>OpenAPI</a>"
            f"</small></header><main>{body}</main>{script}</body></html>")


def _table(table_id: str, heads: list[str], rows: list[list[str]], empty: str) -> str:
    if not rows:
        return f"<p class=empty id={table_id}>{escape(empty)}</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in heads)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f"<table id={table_id}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _protocol_link(protocol_id: str, label: str) -> str:
    return f"<a href='/protocols/{escape(protocol_id)}'>{escape(label)}</a>"


def home_page(store: Any) -> str:
    protocols = store.search_protocols(limit=100)["items"]
    invitations = store.browse(limit=100)["items"]
    finished = store.sessions(status="finished", limit=50)["items"]
    names = {p["protocol_id"]: p["name"] for p in protocols}
    body = "<h2>Protocols</h2>" + _table("protocols", ["name", "type", "protocol_id", "since"], [
        [_protocol_link(p["protocol_id"], p["name"]), escape(p["type"] or ""),
         f"<code class=id>{escape(p['protocol_id'])}</code>", escape(p["created_at"])]
        for p in protocols], "No protocol registered yet.")
    body += "<h2>Open invitations</h2>" + _table(
        "invitations", ["protocol", "host", "options", "endpoint", "note", "expires"], [
            [_protocol_link(i["protocol_id"], i.get("protocol_name") or i["protocol_id"][:12]),
             f"<code>{escape(i['host_agent_id'])}</code>",
             f"<code>{escape(json.dumps(i['options'], ensure_ascii=False))}</code>",
             f"<code>{escape(i['endpoint'])}</code>", escape(i["note"]),
             escape(i["expires_at"])]
            for i in invitations], "No open invitation.")
    body += "<h2>Finished sessions</h2>" + _table(
        "sessions", ["session", "protocol", "host", "guest", "outcome", "receipts"], [
            [f"<code>{escape(s['session_id'])}</code>",
             _protocol_link(s["protocol_id"], names.get(s["protocol_id"], s["protocol_id"][:12])),
             f"<code>{escape(s['host_agent_id'])}</code>",
             f"<code>{escape(s['guest_agent_id'])}</code>",
             escape(" / ".join(str((s["outcome"] or {}).get(k)) for k in ("host_status",
                                                                           "guest_status"))),
             "verified" if s["verified"] else "mismatch"]
            for s in finished], "No finished session yet.")
    return _page("overview", body)


def protocol_page(store: Any, protocol_id: str) -> str:
    p = store.protocol(protocol_id)
    facts = [["protocol_id", f"<code class=id id=protocol-id>{escape(p['protocol_id'])}</code>"],
             ["name", escape(p["name"])], ["type", escape(p["type"] or "")],
             ["spec_version", escape(p["spec_version"])],
             ["registered by", f"<code>{escape(p['registered_by'])}</code>"],
             ["registered", escape(p["created_at"])],
             ["description", escape(p["description"])]]
    if p["reason"]:
        facts.append(["registered despite near-duplicates because", escape(p["reason"])])
    body = _table("facts", ["", ""], facts, "")
    if p["bundles"]:
        body += "<h2>UI bundles</h2>" + _table("bundles", ["bundle_id", "bytes", "by"], [
            [f"<code class=id>{escape(b['bundle_id'])}</code>", str(b["size"]),
             f"<code>{escape(b['created_by'])}</code>"] for b in p["bundles"]], "")
    spec = json.dumps(p["spec"], ensure_ascii=False, indent=2, sort_keys=True)
    body += f"<h2>spec.json</h2><pre id=spec>{escape(spec)}</pre>"
    return _page(p["name"], body)


DOCS_SCRIPT = """<script>
(async () => {
  const root = document.getElementById('ops');
  const doc = await (await fetch('/openapi.json')).json();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const box = document.createElement('section');
      box.className = 'op';
      const title = document.createElement('h2');
      title.textContent = method.toUpperCase() + ' ' + path;
      const summary = document.createElement('p');
      summary.textContent = op.summary || '';
      box.append(title, summary);
      if (method === 'get') {
        const form = document.createElement('form');
        const inputs = {};
        for (const p of op.parameters || []) {
          const label = document.createElement('label');
          label.textContent = p.name + (p.in === 'path' ? ' (path) ' : ' ');
          const input = document.createElement('input');
          input.name = p.name; inputs[p.name] = [p, input];
          label.append(input); form.append(label);
        }
        const button = document.createElement('button');
        button.textContent = 'Try it';
        const out = document.createElement('pre');
        form.append(button);
        form.onsubmit = async (event) => {
          event.preventDefault();
          let url = path; const query = new URLSearchParams();
          for (const [name, [p, input]] of Object.entries(inputs)) {
            if (p.in === 'path') url = url.replace('{' + name + '}', encodeURIComponent(input.value));
            else if (input.value) query.set(name, input.value);
          }
          const q = query.toString();
          const response = await fetch(url + (q ? '?' + q : ''));
          out.textContent = response.status + '\\n' + JSON.stringify(await response.json(), null, 2);
        };
        box.append(form, out);
      } else {
        const note = document.createElement('p');
        note.className = 'empty';
        note.textContent = 'Signed request: use the lingxi client or CLI.';
        box.append(note);
      }
      root.append(box);
    }
  }
})();
</script>"""


def docs_page() -> str:
    return _page("API docs", "<p>Every route of the versioned API, read from "
                             "<a href='/openapi.json'>/openapi.json</a>. GET routes can be "
                             "tried here.</p><div id=ops></div>", DOCS_SCRIPT)


def _hash_source(tag: str) -> str:
    inner = tag.split(">", 1)[1].rsplit("<", 1)[0]
    return "'sha256-" + base64.b64encode(hashlib.sha256(inner.encode()).digest()).decode() + "'"


# The pages' only script and style are the inline ones above, allowed by hash: nothing else
# runs, loads, frames the page or is framed by it (registry text is data, escaped above).
CSP = ("default-src 'none'; "
       f"script-src {_hash_source(DOCS_SCRIPT)}; "
       f"style-src {_hash_source('<style>' + STYLE + '</style>')}; "
       "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
