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
            "scoreBeforeActions": run.score_before,
            "scoreGained": run.score_gained(),
            "scoreSource": run.score_source,
            "latticeDimensions": run.lattice_dims,
            "swapCandidates": run.swap_count,
            "standardBoard": run.swap_count > 0,
            "stopReason": run.stop_reason,
            "boardReached": run.board_reached_at is not None,
            "boardReachedAtAction": run.board_reached_at,
            "responses": run.responses,
            "inputModel": run.models.confirmed,
            "hoverEffect": run.has_hover,
            "idleFraction": run.motion.idle_fraction(),
            "scoreCurve": [{"action": i, "score": v} for i, v in run.scores],
            "replay": run.replay_verdict(),
        },
        "harnessSteps": list(run.start_steps),
    }
    blocked = getattr(run.driver, "blocked", None)
    if isinstance(blocked, list):
        doc["summary"]["blocked"] = {"count": int(getattr(run.driver, "blocked_count", 0)),
                                     "requests": list(blocked)}
    missing = getattr(run.driver, "missing", None)
    if isinstance(missing, list):
        doc["summary"]["missing"] = {"count": int(getattr(run.driver, "missing_count", 0)),
                                     "files": list(missing)}
    scale = getattr(run.driver, "scale", 1.0)
    if isinstance(scale, int | float) and 0 < scale < 1:
        doc["summary"]["cameraScale"] = round(float(scale), 4)
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


def _fold(title: str, value: Any) -> str:
    return f"<details><summary>{html.escape(title)}</summary>{_pre(value)}</details>"


def _cell_marks(step: dict[str, Any]) -> str:
    """SVG rectangles over the swapped cells (frame pixels, from the step's target geometry)."""
    cells = step.get("swapCells")
    selection = step.get("selection") or {}
    if not cells:
        return ""
    lattice = next((t for t in step["targets"] if t["kind"] == "lattice"
                    and t.get("rows") and t.get("columns")), None)
    if lattice is None:
        return ""
    box = lattice["box"]
    w, h = box["width"] / lattice["columns"], box["height"] / lattice["rows"]
    marks = "".join(
        f'<rect x="{box["x"] + (c["column"] - 1) * w:.1f}" y="{box["y"] + (c["row"] - 1) * h:.1f}" '
        f'width="{w:.1f}" height="{h:.1f}" class="{"a" if i == 0 else "b"}"/>'
        for i, c in enumerate(cells))
    title = html.escape(str(selection.get("candidateId", "")))
    return f'<svg viewBox="0 0 {VIEWPORT_WIDTH} {VIEWPORT_HEIGHT}"><title>{title}</title>{marks}</svg>'


def _score_curve(summary: dict[str, Any], actions: int) -> str:
    points = summary.get("scoreCurve") or []
    if not points:
        return "<p>No score was reported (no <code>score</code> event).</p>"
    top = max(p["score"] for p in points) or 1
    width, height = 600, 160
    span = max(actions, 1)
    xy = [(0.0, float(height))]
    for p in points:
        x = p["action"] / span * width
        xy.append((x, xy[-1][1]))
        xy.append((x, height - p["score"] / top * (height - 10)))
    xy.append((float(width), xy[-1][1]))
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    return (f'<svg class="curve" viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
            f'<polyline points="{line}"/><text x="4" y="14">{html.escape(str(top))}</text>'
            f'<text x="{width - 60}" y="{height - 4}">action {span}</text></svg>')


def _harness(steps: list[dict[str, Any]]) -> str:
    if not steps:
        return ""
    esc = html.escape
    items = []
    for h in steps:
        kind = h["kind"]
        if kind == "camera" and h.get("followsWindow"):
            text = (f"camera back to 1 for the run: the page ({h['pageSize']['width']}×"
                    f"{h['pageSize']['height']}) grew with the window, zooming cannot fit it")
        elif kind == "camera":
            text = (f"camera zoomed out to {h['scale']} (window {h['window']['width']}×"
                    f"{h['window']['height']} for a page of {h['pageSize']['width']}×"
                    f"{h['pageSize']['height']})")
        elif kind == "input_probe":
            text = f"input model {h['model']}: {'received' if h['received'] else 'not received'}"
            if h.get("woke"):
                text += " (the game woke up: tried again)"
        else:
            text = kind.replace("_", " ") + " " + esc(json.dumps(
                {k: v for k, v in h.items() if k != "kind"}, ensure_ascii=False))
        items.append(f'<li class="{esc(kind)}">{esc(text) if kind in ("camera", "input_probe") else text}</li>')
    return "<h3>Harness steps</h3><ul>" + "".join(items) + "</ul>"


def _verdicts(summary: dict[str, Any], replay: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """The report's first table, truth first: did the game receive the actions, what did
    they score, then whether a board was reached, replays and what was blocked. A board
    reached with no action received is not shown as a success."""
    esc = html.escape
    responses, actions = summary.get("responses", 0), summary["actions"]
    gained, before = summary.get("scoreGained"), summary.get("scoreBeforeActions")
    if gained is None:
        score = "no score reported"
    else:
        score = f"{gained:+g}" + (f" (the game had {before:g} before the first action)"
                                  if before else "")
        if summary.get("scoreSource") == "page":
            score += " (the number the page shows for its score; the game sent none)"
    reached, at = summary.get("boardReached"), summary.get("boardReachedAtAction")
    blocked = (summary.get("blocked") or {}).get("count", 0)
    missing = summary.get("missing") or {}
    first = (missing.get("files") or [{}])[0].get("path", "")
    return [
        ("responses received", f"{responses} of {actions} actions", responses > 0),
        ("score gained by the actions", esc(score), None if gained is None else gained > 0),
        ("board reached", ("yes" + (f" (action {at})" if at else "")
                           + ("" if responses else ", but no action was received"))
         if reached else "no", (True if responses else None) if reached else False),
        ("replayable", f"{replay.get('replayable', 'unknown')}"
         + (" (checked against a second run)" if replay.get("checked") else " (not checked)")
         + ("".join(f"<br>{esc(r)}" for r in replay.get("reasons", []))),
         replay.get("replayable") == "yes"),
        ("blocked off the machine", f"{blocked} requests or navigations", None),
        ("game files not found", f"{missing.get('count', 0)}"
         + (f" (first {esc(first)}; a build made for another base path? see --base)"
            if missing.get("count") else ""), False if missing.get("count") else None),
        ("game's score", esc(str(summary.get("score"))), None),
    ]


def _step_section(step: dict[str, Any]) -> str:
    """One step of the report: what was chosen and sent, both frames, events and errors."""
    esc = html.escape
    events = "".join(
        f"<li>#{e['seq']} {esc(e['source'])} <b>{esc(e['type'])}</b> "
        f"@{e['virtualTimeMs']} ms {esc(json.dumps(e['data'], ensure_ascii=False))}</li>"
        for e in step["gameEvents"][:50])
    more = len(step["gameEvents"]) - 50
    if more > 0:
        events += f"<li>… {more} more</li>"
    errors = "".join(f"<li>{esc(a['error']['code'])}: {esc(a['error']['message'])}</li>"
                     for a in step["attempts"] if a["error"])
    reason = (step.get("selection") or {}).get("reason")
    return f"""
<section class="step {'ok' if step['valid'] else 'bad'}">
 <h2>{esc(step['actionId'])} {'' if step['valid'] else '(spent as none)'}
  <small>{esc((step.get('selection') or {}).get('type', 'none'))}
  · response {'yes' if step['causalGameResponse'] else 'no'}
  · input {esc(step.get('inputModel', '-'))} · settled in {step['virtualTimeBudgetMs']} ms
  · retries {step['retryCount']} · t={step.get('virtualTimeMs', 0)} ms</small></h2>
 {f'<p class="reason">{esc(reason)}</p>' if reason else ''}
 <div class="frames">
  <figure><div class="shot"><img src="{esc(step['preFrameRef'])}" loading="lazy">{_cell_marks(step)}</div>
   <figcaption>before</figcaption></figure>
  <figure><div class="shot"><img src="{esc(step['postFrameRef'])}" loading="lazy"></div>
   <figcaption>after</figcaption></figure>
  <div class="detail">
   {_harness(step.get('harnessSteps', []))}
   {'<h3>Protocol errors</h3><ul>' + errors + '</ul>' if errors else ''}
   <h3>Events</h3><ul>{events or '<li>none</li>'}</ul>
   {_fold('selection and action (JSON)', {'selection': step['selection'], 'normalized': step['normalized'], 'attempts': step['attempts']})}
  </div>
 </div>
</section>"""


def _board_text(summary: dict[str, Any]) -> str:
    dims = summary.get("latticeDimensions")
    if dims and summary.get("swapCandidates"):
        return (f"{dims['rows']}×{dims['columns']}, {summary.get('swapCandidates', 0)} swap "
                "candidates")
    return f"{dims['rows']}×{dims['columns']} lattice, not a standard board" if dims \
        else "none found"


def render_report(doc: dict[str, Any]) -> str:
    """A self-contained HTML page a person reads first: the run's verdicts, the score
    curve, camera moves, then each step's frames with the swapped cells marked; the raw
    JSON behind folds."""
    esc = html.escape
    summary = doc["summary"]
    replay = summary.get("replay") or {}
    rows = [_step_section(step) for step in doc["steps"]]
    board = _board_text(summary)
    verdicts = _verdicts(summary, replay)
    verdict_rows = "".join(
        f'<tr class="{"" if good is None else ("good" if good else "poor")}"><td>{name}</td>'
        f"<td>{value}</td></tr>" for name, value, good in verdicts)
    raw = {k: v for k, v in doc.items() if k not in ("steps", "events", "frames")}
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Lingxi play report {esc(doc['runId'])}</title>
<style>
body{{font:14px system-ui,sans-serif;margin:1.5em;color:#222}}
.frames{{display:flex;gap:1em;align-items:flex-start}}
figure{{margin:0}} .shot{{position:relative;width:195px}} .shot img{{width:195px;border:1px solid #ccc;display:block}}
.shot svg{{position:absolute;left:0;top:0;width:195px;height:422px}}
.shot rect{{fill:none;stroke-width:4}} .shot rect.a{{stroke:#e0218a}} .shot rect.b{{stroke:#00a0e0}}
.step{{border-top:1px solid #ddd;padding:.5em 0}} .bad h2{{color:#a00}}
pre{{background:#f6f6f6;padding:.4em;max-width:40em;overflow:auto;font-size:12px}}
small{{color:#666;font-weight:normal}} table td{{padding:0 1em 0 0;vertical-align:top}}
tr.good td:last-child{{color:#070}} tr.poor td:last-child{{color:#a00}}
.curve polyline{{fill:none;stroke:#0a6;stroke-width:2}} .curve{{border:1px solid #ddd;background:#fcfcfc}}
.reason{{color:#555;margin:.2em 0}}
</style></head><body>
<h1>Play report</h1>
<table class="verdicts">{verdict_rows}</table>
<h2>Score over the run</h2>
{_score_curve(summary, summary['actions'])}
<h2>Run</h2>
<table>
<tr><td>run</td><td>{esc(doc['runId'])}</td></tr>
<tr><td>game</td><td>{esc(doc['game']['source'])}</td></tr>
<tr><td>actor</td><td>{esc(doc['actor']['name'])}</td></tr>
<tr><td>seed</td><td>{doc['seed']}</td></tr>
<tr><td>brief</td><td>{esc(doc['brief'])}</td></tr>
<tr><td>actions</td><td>{summary['actions']} ({summary['validActions']} valid,
 {summary['protocolErrors']} protocol errors)</td></tr>
<tr><td>board</td><td>{esc(board)}</td></tr>
<tr><td>input model</td><td>{esc(str(summary.get('inputModel') or 'not detected'))}</td></tr>
<tr><td>camera</td><td>{esc(f"zoomed out to {summary['cameraScale']}" if summary.get('cameraScale') else 'no move (the page fits)')}</td></tr>
<tr><td>stopped</td><td>{esc(str(summary.get('stopReason')))}</td></tr>
</table>
{_harness(doc.get('harnessSteps', []))}
{_fold('summary and run (JSON)', raw)}
<p>Initial frame:</p>
<img src="{esc(doc.get('initialFrame', 'frames/frame-initial.png'))}" width="195">
{''.join(rows)}
</body></html>
"""
