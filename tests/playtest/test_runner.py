"""The play loop against a fake driver: validation, retries, history, evidence."""

from __future__ import annotations

import json

import pytest

from lingxi.actor.contracts import validate_evidence, validate_view
from lingxi.errors import LingxiError
from lingxi.playtest.objectives import Brief, load_brief
from lingxi.playtest.runner import PLACEHOLDER_SELECTION, PlayRun, RunConfig

from .fakes import FakeDriver, ListActor


def run(tmp_path, answers, *, budget=1, board=True, brief=None, then=None):
    driver = FakeDriver(board=board)
    actor = ListActor(answers, then)
    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="list",
                       seed=1, budget=budget, brief=brief or Brief("play"))
    evidence = PlayRun(driver, actor, config, tmp_path).run()
    views = [json.loads(line) for line in (tmp_path / "views.jsonl").read_text().splitlines()]
    return evidence, views, driver, actor


def test_every_view_and_the_evidence_validate(tmp_path):
    evidence, views, _, _ = run(tmp_path, [], budget=3)
    assert len(views) == 3
    for view in views:
        validate_view(view)
    validate_evidence(evidence)
    assert json.loads((tmp_path / "evidence.json").read_text()) == evidence
    assert (tmp_path / "report.html").read_text().count("<section") == 3
    refs = [f["ref"] for f in evidence["frames"]]
    assert refs[0] == "frames/frame-initial.png"
    assert "frames/action-3-post.png" in refs
    for frame in evidence["frames"]:
        assert (tmp_path / frame["ref"]).is_file()


def test_board_gives_lattice_and_112_candidates(tmp_path):
    evidence, views, _, _ = run(tmp_path, [])
    view = views[0]
    lattice = [t for t in view["visualTargetCatalog"]["targets"] if t["kind"] == "lattice"]
    assert lattice == [{"id": "l00", "kind": "lattice", "allowedGestures": ["tap", "drag"],
                        "dimensions": {"rows": 8, "columns": 8},
                        "subAnchors": lattice[0]["subAnchors"]}]
    swaps = view["interactionCandidates"]["match3Swaps"]["candidates"]
    assert len(swaps) == 112
    assert "swap_pair" in view["legalSelections"]["types"]
    assert evidence["summary"]["latticeDimensions"] == {"rows": 8, "columns": 8}


def test_no_board_means_no_swap_pair(tmp_path):
    _, views, _, _ = run(tmp_path, [{"type": "swap_pair", "candidateId": "ms000"}], board=False)
    assert views[0]["interactionCandidates"] is None
    assert "swap_pair" not in views[0]["legalSelections"]["types"]
    assert views[1]["protocolErrors"][0]["code"] == "selection.not_legal"


def test_invalid_selection_is_a_protocol_error_then_retried(tmp_path):
    tap = {"type": "tap", "target": {"targetId": "r00"}}
    evidence, views, driver, _ = run(tmp_path, [{"type": "teleport"}, tap])
    assert len(views) == 2
    assert views[0]["protocolErrors"] == []
    assert views[1]["protocolErrors"][0]["code"] == "selection.invalid"
    assert views[1]["remainingBudget"] == views[0]["remainingBudget"] == 1
    step = evidence["steps"][0]
    assert step["valid"] and step["retryCount"] == 1 and step["selection"] == tap
    assert step["attempts"][0] == {"selection": {"type": "teleport"},
                                   "error": step["attempts"][0]["error"]}
    assert driver.performed == [{"kind": "tap", "x": 71, "y": 41}]  # centre of 20+101/2, 20+41/2
    assert any(e["type"] == "press" for e in step["gameEvents"])
    assert step["causalGameResponse"] is True


@pytest.mark.parametrize(("answer", "code"), [
    ({"type": "tap", "target": {"targetId": "r99"}}, "selection.unknown_target"),
    ({"type": "tap", "target": {"targetId": "l00", "cell": {"row": 9, "column": 1}}},
     "selection.cell_out_of_range"),
    ({"type": "tap", "target": {"targetId": "g01", "cell": {"row": 1, "column": 9}}},
     "selection.cell_out_of_range"),
    ({"type": "drag", "from": {"targetId": "r00"}, "to": {"targetId": "r00"}},
     "selection.gesture_not_allowed"),
    ({"type": "swap_pair", "candidateId": "ms999"}, "selection.unknown_candidate"),
    ({"type": "key", "key": "F12"}, "selection.invalid"),
    ("tap r00", "selection.invalid"),
    (LingxiError("actor.llm_timeout", "no answer in 60 s"), "actor.llm_timeout"),
    (RuntimeError("boom"), "actor.error"),
])
def test_three_bad_answers_spend_the_action_as_none(tmp_path, answer, code):
    evidence, views, driver, _ = run(tmp_path, [answer] * 3, budget=2)
    assert len(views) == 4  # three for action 1, one for action 2
    assert [e["code"] for e in views[2]["protocolErrors"]] == [code, code]
    step = evidence["steps"][0]
    assert step["valid"] is False and step["retryCount"] == 2
    assert step["normalized"]["kind"] == "none"
    assert step["virtualTimeBudgetMs"] == 0 and all(a["kind"] != "none" for a in driver.performed)
    entry = views[3]["history"][0]
    assert entry["valid"] is False and entry["normalized"]["kind"] == "none"
    assert entry["causalGameResponse"] is False
    assert len(entry["protocolErrors"]) == 3 and entry["protocolErrors"][0].startswith(code)
    if isinstance(answer, dict) and code != "selection.invalid":
        assert entry["selection"] == answer  # schema-valid but wrong now: kept as given
    else:
        assert entry["selection"] == PLACEHOLDER_SELECTION
    assert evidence["summary"]["protocolErrors"] == 3
    validate_evidence(evidence)


def test_swap_pair_is_normalized_to_the_two_cell_centres(tmp_path):
    first = {"type": "wait", "ms": 100}
    evidence, views, driver, actor = run(tmp_path, [first], budget=2,
                                         then={"type": "swap_pair", "candidateId": "ms000"})
    candidate = views[1]["interactionCandidates"]["match3Swaps"]["candidates"][0]
    (a, b) = (end["cell"] for end in candidate["pair"])
    swap = driver.performed[1]
    assert swap["kind"] == "swap" and swap["via"] == "drag"
    for point, cell in ((swap["from"], a), (swap["to"], b)):  # tile centres: 15 + 45k + 20.5
        assert abs(point["x"] - (15 + (cell["column"] - 1) * 45 + 20.5)) <= 1
        assert abs(point["y"] - (200 + (cell["row"] - 1) * 45 + 20.5)) <= 1
    assert evidence["summary"]["score"] == 30
    assert evidence["steps"][1]["preFrameHash"] != evidence["steps"][1]["postFrameHash"]
    assert [e["type"] for e in evidence["steps"][1]["gameEvents"]] == ["score", "frame_changed"]


def test_history_keeps_the_newest_64(tmp_path):
    evidence, views, _, _ = run(tmp_path, [], budget=66)
    last = views[-1]
    assert len(last["history"]) == 64
    assert last["history"][0]["actionId"] == "action-2"
    assert last["history"][-1]["actionId"] == "action-65"
    assert last["remainingBudget"] == 1
    assert len(evidence["steps"]) == 66
    validate_view(last)  # 64 history entries, checked in one piece


def test_history_entry_event_seq_and_time(tmp_path):
    _, views, _, _ = run(tmp_path, [], budget=3)
    first, second = views[1]["history"][0], views[2]["history"][1]
    assert first["preEventSeq"] == 1  # the "start" event before action 1
    assert second["preEventSeq"] == first["postEventSeq"]
    # a wait of 100 ms, the settle's first chunk, then one more 100 ms chunk without change
    # (the fake page reports no activity, so settling wants two still chunks)
    assert first["virtualTimeBudgetMs"] == second["virtualTimeBudgetMs"] == 200
    assert views[2]["virtualTimeMs"] - views[1]["virtualTimeMs"] == 200


def test_objective_progress_from_events(tmp_path):
    brief = load_brief("Press the button.\nobligation b: Use the button\n"
                       "  step Press it @ press n=1\n  step Never @ nothing\n")
    tap = {"type": "tap", "target": {"targetId": "r00", "subAnchor": "northwest"}}
    _, views, _, _ = run(tmp_path, [tap], budget=2, brief=brief)
    before, after = views[0]["objectiveProgress"], views[1]["objectiveProgress"]
    assert views[0]["brief"] == "Press the button."
    assert before["candidateOnly"] is True and after["candidateOnly"] is True
    assert before["obligations"][0]["status"] == "unobserved"
    assert after["obligations"][0] == {"id": "b", "title": "Use the button",
                                       "seenStepTitles": ["Press it"],
                                       "missingStepTitles": ["Never"], "status": "partial"}
    assert after["snapshotSeq"] == before["snapshotSeq"] + 1 and after["hash"] != before["hash"]


def test_no_obligations_means_null_progress(tmp_path):
    _, views, _, _ = run(tmp_path, [])
    assert views[0]["objectiveProgress"] is None


def test_a_failing_game_still_leaves_a_bundle(tmp_path):
    from lingxi.playtest.errors import PlayError

    class Crashing(FakeDriver):
        def perform(self, action, model="mouse"):
            if len(self.performed) == 1:
                raise PlayError("play.page_failed", "the page crashed")
            return super().perform(action, model)

    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="list",
                       seed=1, budget=5, brief=Brief("play"))
    with pytest.raises(PlayError):
        PlayRun(Crashing(), ListActor([]), config, tmp_path).run()
    evidence = json.loads((tmp_path / "evidence.json").read_text())
    validate_evidence(evidence)
    assert evidence["summary"]["stopReason"] == "error: play.page_failed"
    assert evidence["summary"]["actions"] == 1


def test_oversized_answers_are_bounded(tmp_path):
    huge = {"type": "wait", "ms": 100, "reason": "x" * 100_000}
    evidence, views, _, _ = run(tmp_path, [huge, "y" * 100_000, ["z"] * 50_000], budget=1)
    assert evidence["steps"][0]["normalized"]["kind"] == "none"
    assert all(len(e["message"]) <= 300 for e in views[2]["protocolErrors"])
    assert all(len(json.dumps(a["selection"])) < 20_000 for a in evidence["steps"][0]["attempts"])


def test_an_actor_mutating_its_view_changes_nothing_recorded(tmp_path):
    class Vandal(ListActor):
        def select(self, view, frame_png):
            for entry in view["history"]:
                entry["selection"] = {"type": "teleport"}
                entry["gameEvents"].clear()
            view["visualTargetCatalog"]["targets"].clear()
            return {"type": "tap", "target": {"targetId": "r00"}}

    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="v",
                       seed=1, budget=3, brief=Brief("play"))
    evidence = PlayRun(FakeDriver(), Vandal([]), config, tmp_path).run()
    views = [json.loads(line) for line in (tmp_path / "views.jsonl").read_text().splitlines()]
    for view in views:
        validate_view(view)
    assert views[2]["history"][0]["selection"]["type"] == "tap"
    assert evidence["summary"]["validActions"] == 3


def test_human_quit_ends_the_run_normally(tmp_path):
    from lingxi.actor.actors import ActorError

    tap = {"type": "tap", "target": {"targetId": "r00"}}
    evidence, views, _, _ = run(tmp_path, [tap, ActorError("actor.human_quit", "the player quit")],
                                budget=5)
    assert evidence["summary"]["stopReason"] == "quit"
    assert evidence["summary"]["actions"] == 1 and len(views) == 2
    validate_evidence(evidence)


def test_an_unreachable_llm_endpoint_stops_the_run(tmp_path):
    from lingxi.actor.actors import ActorError
    from lingxi.playtest.errors import PlayError

    down = ActorError("actor.llm_http", "cannot reach http://127.0.0.1:9/v1: refused")
    with pytest.raises(PlayError) as caught:
        run(tmp_path, [down] * 3, budget=3)
    assert caught.value.code == "play.actor_unreachable"
    evidence = json.loads((tmp_path / "evidence.json").read_text())
    assert evidence["summary"]["stopReason"] == "error: play.actor_unreachable"
    # an HTTP error status is an answer, not an unreachable endpoint: the run goes on
    status = ActorError("actor.llm_http", "HTTP 500", details={"status": 500})
    evidence, _, _, _ = run(tmp_path / "b", [status] * 3, budget=2)
    assert evidence["summary"]["stopReason"] == "budget"


def test_dimensions_and_candidates_describe_the_same_board(tmp_path):
    evidence, _, _, _ = run(tmp_path, [], budget=2)
    summary = evidence["summary"]
    assert summary["latticeDimensions"] == {"rows": 8, "columns": 8}
    assert summary["swapCandidates"] == 112 and summary["standardBoard"] is True
    assert summary["boardReached"] is True and summary["boardReachedAtAction"] == 1


def test_post_frame_is_the_next_pre_frame(tmp_path):
    evidence, views, _, _ = run(tmp_path, [], budget=3)
    steps = evidence["steps"]
    for before, after in zip(steps, steps[1:], strict=False):
        assert after["preFrameRef"] == before["postFrameRef"]
        assert after["preFrameHash"] == before["postFrameHash"]
    assert views[1]["currentFrameRef"] == steps[0]["postFrameRef"]


def test_an_unreceived_swap_is_tried_with_the_next_input_model(tmp_path):
    class TapsOnly(FakeDriver):
        def perform(self, action, model="mouse"):
            if action["kind"] == "swap" and action["via"] != "taps":
                self.performed.append(action)
                self.models.append(model)
                return 0  # the game ignores drags
            return super().perform(action, model)

    driver = TapsOnly()
    swap = {"type": "swap_pair", "candidateId": "ms000"}
    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="list",
                       seed=1, budget=2, brief=Brief("play"))
    evidence = PlayRun(driver, ListActor([swap, swap]), config, tmp_path).run()
    first, second = evidence["steps"]
    probes = [h for h in first["harnessSteps"] if h["kind"] == "input_probe"]
    assert [(p["model"], p["received"]) for p in probes] == [("mouse", False), ("taps", True)]
    assert first["inputModel"] == "taps" and first["normalized"]["via"] == "taps"
    assert first["causalGameResponse"] is True
    assert second["inputModel"] == "taps" and driver.models[-1] == "taps"  # remembered
    assert evidence["summary"]["inputModel"] == "taps"
    validate_evidence(evidence)


def test_a_swap_no_model_delivers_is_not_a_response(tmp_path):
    class Deaf(FakeDriver):
        def perform(self, action, model="mouse"):
            self.performed.append(action)
            self.models.append(model)
            return 0

    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="list",
                       seed=1, budget=1, brief=Brief("play"))
    evidence = PlayRun(Deaf(), ListActor([{"type": "swap_pair", "candidateId": "ms000"}]),
                       config, tmp_path).run()
    step = evidence["steps"][0]
    assert step["causalGameResponse"] is False
    assert [h["model"] for h in step["harnessSteps"] if h["kind"] == "input_probe"] == [
        "mouse", "taps", "touch", "touch-taps"]


def test_report_shows_verdicts_curve_and_marked_cells(tmp_path):
    evidence, _, _, _ = run(tmp_path, [{"type": "swap_pair", "candidateId": "ms000"}], budget=2)
    page = (tmp_path / "report.html").read_text()
    assert "board reached" in page and "replayable" in page and "responses" in page
    assert "<polyline" in page  # the score curve (the fake reports score 30)
    assert 'class="a"' in page and 'class="b"' in page  # the swapped cells on the frame
    assert "<details>" in page
    assert evidence["summary"]["scoreCurve"] == [{"action": 1, "score": 30}]


def test_report_leads_with_responses_and_the_score_the_actions_gained(tmp_path):
    """24.8: a game that scores 90 on its own while loading and then ignores every action
    is reported as 0 responses and no score gained, not as a success."""
    class Deaf(FakeDriver):
        def __init__(self):
            super().__init__()
            self.queue.append([1, '{"type":"score","score":90}'])  # its own cascade at load

        def perform(self, action, model="mouse"):
            self.performed.append(action)
            return 0

    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="list",
                       seed=1, budget=2, brief=Brief("play"))
    swap = {"type": "swap_pair", "candidateId": "ms000"}
    evidence = PlayRun(Deaf(), ListActor([swap, swap]), config, tmp_path).run()
    summary = evidence["summary"]
    assert summary["responses"] == 0 and summary["score"] == 90
    assert summary["scoreBeforeActions"] == 90 and summary["scoreGained"] == 0
    page = (tmp_path / "report.html").read_text()
    table = page[page.index('<table class="verdicts">'):page.index("</table>")]
    rows = table.split("<tr")[1:]
    assert "responses received" in rows[0] and "0 of 2 actions" in rows[0] and "poor" in rows[0]
    assert "score gained by the actions" in rows[1] and "+0" in rows[1] and "poor" in rows[1]
    assert "board reached" in rows[2] and "no action was received" in rows[2]
    assert "good" not in rows[2]  # a board with nothing received is not shown as a success


def test_score_gained_counts_only_what_came_after_loading(tmp_path):
    evidence, _, _, _ = run(tmp_path, [{"type": "swap_pair", "candidateId": "ms000"}])
    summary = evidence["summary"]
    assert summary["scoreBeforeActions"] is None and summary["scoreGained"] == 30
    rows = (tmp_path / "report.html").read_text().split('<table class="verdicts">')[1]
    assert "+30" in rows.split("</table>")[0]


def test_a_swap_the_game_scored_is_received_even_without_a_visible_change(tmp_path):
    """24.3: the verdict uses the game's events too, never a frame diff alone."""
    class Counted(FakeDriver):
        def perform(self, action, model="mouse"):
            self.performed.append(action)
            self.models.append(model)
            if action["kind"] == "swap":  # scored, but the board is redrawn only later
                self.queue.append([self.virtual_time_ms + 10, '{"type":"score","score":30}'])
            return 0

    config = RunConfig(run_id="t", game_source="fake", game_url="http://fake/", actor_name="list",
                       seed=1, budget=1, brief=Brief("play"))
    driver = Counted()
    evidence = PlayRun(driver, ListActor([{"type": "swap_pair", "candidateId": "ms000"}]),
                       config, tmp_path).run()
    step = evidence["steps"][0]
    assert step["causalGameResponse"] is True
    assert driver.models == ["mouse"]  # received on the first model: no probing, no deselect
    assert not step["harnessSteps"] or all(h["kind"] not in ("input_probe", "deselect")
                                           for h in step["harnessSteps"])
