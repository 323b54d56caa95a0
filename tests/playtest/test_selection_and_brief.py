"""Selections to concrete actions, briefs and their obligations, bridge events."""

from __future__ import annotations

import json

import pytest

from lingxi.playtest.catalog import build_catalog
from lingxi.playtest.errors import PlayInputError, SelectionRejected
from lingxi.playtest.events import MAX_PER_ACTION, EventLog
from lingxi.playtest.objectives import DEFAULT_BRIEF, Progress, load_brief
from lingxi.playtest.selection import normalize

from .fakes import board_rects

LEGAL = ["tap", "drag", "key", "wait", "swap_pair"]
CATALOG = build_catalog({"interactive": [[20, 20, 100, 40]], "boxes": board_rects()})


def test_tap_points_from_sub_anchors():
    ref = {"targetId": "r00"}
    assert normalize({"type": "tap", "target": ref}, CATALOG, legal_types=LEGAL) == \
        {"kind": "tap", "x": 70, "y": 40}
    north = normalize({"type": "tap", "target": {**ref, "subAnchor": "northwest"}}, CATALOG,
                      legal_types=LEGAL)
    assert north == {"kind": "tap", "x": 40, "y": 28}
    cell = normalize({"type": "tap", "target": {"targetId": "g01", "cell": {"row": 17,
                                                                           "column": 8}}},
                     CATALOG, legal_types=LEGAL)
    assert cell == {"kind": "tap", "x": 366, "y": 819}


def test_drag_between_lattice_cells():
    action = normalize({"type": "drag", "from": {"targetId": "l00", "cell": {"row": 1, "column": 1}},
                        "to": {"targetId": "l00", "cell": {"row": 1, "column": 2}}},
                       CATALOG, legal_types=LEGAL)
    assert action["kind"] == "drag" and len(action["path"]) >= 2
    assert action["path"][0]["y"] == action["path"][-1]["y"]
    assert action["path"][-1]["x"] - action["path"][0]["x"] == 45


def test_key_and_wait_pass_through():
    assert normalize({"type": "key", "key": "Space"}, CATALOG, legal_types=LEGAL) == \
        {"kind": "key", "key": "Space"}
    assert normalize({"type": "wait", "ms": 450}, CATALOG, legal_types=LEGAL) == \
        {"kind": "wait", "ms": 450}


def test_swap_pair_taps_variant():
    candidates = {"ms000": {"candidateId": "ms000", "latticeId": "l00",
                            "pair": [{"cell": {"row": 2, "column": 2}},
                                     {"cell": {"row": 3, "column": 2}}]}}
    action = normalize({"type": "swap_pair", "candidateId": "ms000"}, CATALOG, legal_types=LEGAL,
                       candidates=candidates, swap_via="taps")
    assert action["kind"] == "swap" and action["via"] == "taps"
    assert action["to"]["y"] - action["from"]["y"] == 45


@pytest.mark.parametrize(("selection", "code"), [
    ({"type": "tap", "target": {"targetId": "l01", "cell": {"row": 1, "column": 1}}},
     "selection.unknown_target"),
    ({"type": "tap", "target": {"targetId": "l00", "cell": {"row": 1, "column": 9}}},
     "selection.cell_out_of_range"),
    ({"type": "swap_pair", "candidateId": "ms000"}, "selection.no_lattice"),
])
def test_rejections(selection, code):
    with pytest.raises(SelectionRejected) as caught:
        normalize(selection, CATALOG, legal_types=LEGAL)
    assert caught.value.code == code
    with pytest.raises(SelectionRejected) as caught:
        normalize({"type": "wait", "ms": 100}, CATALOG, legal_types=["tap"])
    assert caught.value.code == "selection.not_legal"


def test_brief_forms(tmp_path):
    assert load_brief(None).text == DEFAULT_BRIEF and load_brief(None).obligations == ()
    assert load_brief("Just play.").text == "Just play."
    doc = {"brief": "Score.", "obligations": [{"id": "m", "title": "Match", "steps": [
        {"title": "Swap", "event": "swap", "where": {"valid": True}},
        {"title": "Score", "event": "score"}]}]}
    path = tmp_path / "brief.json"
    path.write_text(json.dumps(doc))
    brief = load_brief(str(path))
    assert brief.text == "Score." and brief.obligations[0].steps[0].where == (("valid", "true"),)
    text = tmp_path / "brief.txt"
    text.write_text("Score.\nobligation m: Match\n  step Swap @ swap valid=true\n"
                    "  step Score @ score\n")
    assert load_brief(str(text)) == brief


@pytest.mark.parametrize("bad", [
    "obligation x: nothing follows",
    "step Orphan @ swap",
    "obligation x: t\n  step no event marker",
])
def test_bad_text_briefs(bad):
    with pytest.raises(PlayInputError) as caught:
        load_brief(bad)
    assert caught.value.code == "play.bad_brief" and caught.value.exit_code == 2


def test_bad_json_brief(tmp_path):
    path = tmp_path / "b.json"
    for content in ("{", '{"obligations": [{"id": "", "steps": []}]}', "[1]"):
        path.write_text(content)
        with pytest.raises(PlayInputError):
            load_brief(str(path))


def test_progress_statuses_and_where():
    brief = load_brief("x\nobligation m: Match\n  step Swap @ swap valid=true\n  step Score @ score")
    progress = Progress(brief)
    ev = lambda t, **d: {"seq": 1, "source": "bridge", "type": t, "virtualTimeMs": 0, "data": d}  # noqa: E731
    assert not progress.observe([ev("swap", valid=False)])
    assert progress.view()["obligations"][0]["status"] == "unobserved"
    assert progress.observe([ev("swap", valid=True)])
    assert progress.view()["obligations"][0]["status"] == "partial"
    progress.observe([ev("score", score=3)])
    view = progress.view()
    assert view["obligations"][0]["status"] == "observed" and view["candidateOnly"] is True
    assert view["snapshotSeq"] == 3


def test_bridge_events_are_bounded():
    log = EventLog()
    raw = [[5, '{"type":"ok","a":1}'], "junk", [1, "not json"], [2, "NaN"], [3, "[1,2]"],
           [4, json.dumps({"type": "big", "s": "x" * 5000})], [None, '{"type":""}'],
           [7, json.dumps({"type": "t" * 100})], [8, "[" * 3000 + "]" * 3000]]
    added = log.add_bridge_batch(raw, 2, (0, 600))
    kinds = [(e["source"], e["type"]) for e in added]
    assert kinds[0] == ("bridge", "ok") and added[0]["data"] == {"a": 1}
    assert ("bridge", "event") in kinds and ("bridge", "t" * 64) in kinds
    overflow = added[-1]
    assert overflow["type"] == "bridge_overflow" and overflow["data"] == {"dropped": 2 + 6}
    assert [e["seq"] for e in added] == list(range(1, len(added) + 1))
    many = log.add_bridge_batch([[1, '{"type":"x"}']] * (MAX_PER_ACTION + 5), 0, (600, 1200))
    assert sum(e["source"] == "bridge" for e in many) == MAX_PER_ACTION
    assert many[-1]["data"] == {"dropped": 5}
    assert all(600 <= e["virtualTimeMs"] <= 1200 for e in many)
