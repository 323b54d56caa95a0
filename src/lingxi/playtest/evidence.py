"""The evidence bundle: evidence.json (valid playtest-evidence), views.jsonl, report.html.

Frames are already on disk under ``frames/`` (written as they were captured);
views.jsonl is appended as each view is shown. This module writes the rest
when a run ends, including when it ends early on an error.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from lingxi.actor.contracts import ContractViolation, validate_evidence
from lingxi.playtest.errors import PlayError
from lingxi.playtest.geometry import VIEWPORT_HEIGHT, VIEWPORT_WIDTH

if TYPE_CHECKING:
    from lingxi.playtest.runner import PlayRun


def evidence_document(run: PlayRun) -> dict[str, Any]:
    cfg = run.config
    steps = run.steps
    doc: dict[str, Any] = {
        "schemaVersion": "lingxi.playtest-evidence/1",
        "runId": cfg.run_id,
        "game": {"source": cfg.game_source, "url": cfg.game_url},
        "actor": {"name": cfg.actor_name, "options": dict(cfg.actor_options)},
        "seed": cfg.seed,
        "brief": cfg.brief.text,
        "budget": cfg.budget,
        "viewport": {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT, "dpr": 1},
        "steps": steps,
        "frames": list(run.frames.index),
        "events": list(run.events.events),
        "summary": {
            "actions": len(steps),
            "validActions": sum(1 for s in steps if s["valid"]),
            "protocolErrors": sum(sum(1 for a in s["attempts"] if a["error"]) for s in steps),
            "framesChanged": sum(1 for s in steps if s["preFrameHash"] != s["postFrameHash"]),
            "bridgeEvents": sum(1 for e in run.events.events if e["source"] == "bridge"),
            "virtualTimeMs": run.driver.virtual_time_ms,
            "score": run.score,
            "latticeDimensions": run.lattice_dims,
            "swapCandidates": run.swap_count,
            "stopReason": run.stop_reason,
        },
    }
    if run.initial is not None:
        doc["initialFrame"] = run.initial.ref
    return doc


def write_bundle(run: PlayRun) -> dict[str, Any]:
    """Validate and write evidence.json and report.html; returns the evidence document."""
    doc = evidence_document(run)
    try:
        validate_evidence(doc)
    except ContractViolation as error:
        raise PlayError("play.internal_evidence_invalid",
                        f"the harness built invalid evidence: {error}") from error
    (run.out_dir / "evidence.json").write_text(
        json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (run.out_dir / "report.html").write_text(render_report(doc), encoding="utf-8")
    return doc


def _pre(value: Any) -> str:
    return f"<pre>{html.escape(json.dumps(value, ensure_ascii=False, indent=1))}</pre>"


def render_report(doc: dict[str, Any]) -> str:
    """A self-contained HTML page: each step's frames, selection, action and events."""
    esc = html.escape
    summary = doc["summary"]
    rows = []
    for step in doc["steps"]:
        events = "".join(
            f"<li>#{e['seq']} {esc(e['source'])} <b>{esc(e['type'])}</b> "
            f"@{e['virtualTimeMs']} ms {esc(json.dumps(e['data'], ensure_ascii=False))}</li>"
            for e in step["gameEvents"][:50])
        more = len(step["gameEvents"]) - 50
        if more > 0:
            events += f"<li>… {more} more</li>"
        errors = "".join(f"<li>{esc(a['error']['code'])}: {esc(a['error']['message'])}</li>"
                         for a in step["attempts"] if a["error"])
        rows.append(f"""
<section class="step {'ok' if step['valid'] else 'bad'}">
 <h2>{esc(step['actionId'])} {'' if step['valid'] else '(spent as none)'}
  <small>retries {step['retryCount']} · causal {str(step['causalGameResponse']).lower()}
  · t={step.get('virtualTimeMs', 0)} ms</small></h2>
 <div class="frames">
  <figure><img src="{esc(step['preFrameRef'])}" loading="lazy"><figcaption>pre</figcaption></figure>
  <figure><img src="{esc(step['postFrameRef'])}" loading="lazy"><figcaption>post</figcaption></figure>
  <div class="detail">
   <h3>Selection</h3>{_pre(step['selection'])}
   <h3>Action</h3>{_pre(step['normalized'])}
   {'<h3>Protocol errors</h3><ul>' + errors + '</ul>' if errors else ''}
   <h3>Events</h3><ul>{events or '<li>none</li>'}</ul>
  </div>
 </div>
</section>""")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Lingxi play report {esc(doc['runId'])}</title>
<style>
body{{font:14px system-ui,sans-serif;margin:1.5em;color:#222}}
.frames{{display:flex;gap:1em;align-items:flex-start}}
figure{{margin:0}} img{{width:195px;border:1px solid #ccc}}
.step{{border-top:1px solid #ddd;padding:.5em 0}} .bad h2{{color:#a00}}
pre{{background:#f6f6f6;padding:.4em;max-width:40em;overflow:auto;font-size:12px}}
small{{color:#666;font-weight:normal}} table td{{padding:0 1em 0 0}}
</style></head><body>
<h1>Play report</h1>
<table>
<tr><td>run</td><td>{esc(doc['runId'])}</td></tr>
<tr><td>game</td><td>{esc(doc['game']['source'])}</td></tr>
<tr><td>actor</td><td>{esc(doc['actor']['name'])}</td></tr>
<tr><td>seed</td><td>{doc['seed']}</td></tr>
<tr><td>brief</td><td>{esc(doc['brief'])}</td></tr>
<tr><td>actions</td><td>{summary['actions']} ({summary['validActions']} valid,
 {summary['protocolErrors']} protocol errors)</td></tr>
<tr><td>score</td><td>{esc(str(summary.get('score')))}</td></tr>
<tr><td>board</td><td>{esc(json.dumps(summary.get('latticeDimensions')))},
 {summary.get('swapCandidates', 0)} swap candidates</td></tr>
<tr><td>stopped</td><td>{esc(str(summary.get('stopReason')))}</td></tr>
</table>
<p>Initial frame:</p>
<img src="{esc(doc.get('initialFrame', 'frames/frame-initial.png'))}">
{''.join(rows)}
</body></html>
"""
