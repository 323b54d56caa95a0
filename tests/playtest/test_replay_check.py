"""--check-replay says where two runs first differ (issue 24.2), without a browser."""

from __future__ import annotations

from lingxi.playtest.launch import compare_runs, first_difference
from lingxi.playtest.objectives import Brief
from lingxi.playtest.runner import PlayRun, RunConfig

from .fakes import FakeDriver, ListActor

TAP = {"type": "tap", "target": {"targetId": "r00"}}


def _run(tmp_path, name, driver):
    config = RunConfig(run_id=name, game_source="fake", game_url="http://fake/",
                       actor_name="list", seed=1, budget=2, brief=Brief("play"))
    run = PlayRun(driver, ListActor([TAP, TAP]), config, tmp_path / name)
    run.run()
    return run


class LateStart(FakeDriver):
    """The same game, but its start event is stamped 4 ms later (a load that took longer)."""

    def __init__(self):
        super().__init__()
        self.queue = [[4, '{"type":"start"}']]


def test_identical_runs_are_replayable(tmp_path):
    verdict = compare_runs(_run(tmp_path, "a", FakeDriver()), _run(tmp_path, "b", FakeDriver()))
    assert verdict == {"replayable": "yes", "reasons": [], "checked": True,
                       "firstDivergence": None}


def test_a_difference_is_located(tmp_path):
    verdict = compare_runs(_run(tmp_path, "a", FakeDriver()), _run(tmp_path, "b", LateStart()))
    assert verdict["replayable"] == "no"
    assert verdict["firstDivergence"] == "events #1"  # frames and views agree; the stamp does not
    assert verdict["reasons"] == ["the game's events differ between the two runs from event #1 "
                                  "('start' at 0 ms vs 'start' at 4 ms)"]


def test_first_difference_names_the_json_path():
    a = {"history": [{"gameEvents": [{"virtualTimeMs": 50}]}], "x": 1}
    b = {"history": [{"gameEvents": [{"virtualTimeMs": 54}]}], "x": 1}
    assert first_difference(a, b) == "$.history[0].gameEvents[0].virtualTimeMs"
    assert first_difference([1, 2], [1, 2, 3]) == "$[2]"
    assert first_difference({"a": 1}, {"b": 1}) == "$.a"
