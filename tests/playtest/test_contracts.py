"""The four play-loop schemas load from the package, resolve offline and reject bad input."""

from __future__ import annotations

import json
import socket

import pytest

from lingxi.actor import contracts
from lingxi.actor.contracts import (
    ContractViolation,
    validate_evidence,
    validate_game_event,
    validate_selection,
    validate_view,
)
from lingxi.errors import CheckFailed


def test_shipped_view_schema_is_the_seed(shared):
    seed = shared("seeds", "actor-view-v4.schema.json")
    assert contracts.load_schema(contracts.VIEW_SCHEMA) == json.loads(seed.read_text("utf-8"))


def test_refs_resolve_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("schema loading tried the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    validate_view(minimal_view(history=[history_entry()]))


def minimal_view(**over):
    view = {
        "schemaVersion": "playtest/3", "projectionVersion": "ActorView/4", "brief": "play",
        "currentFrameRef": "frames/action-1-pre.png", "currentFrameHash": "a" * 64,
        "viewport": {"width": 390, "height": 844, "dpr": 1},
        "legalSelections": {"types": ["tap", "wait"], "safeKeys": ["Enter"],
                            "actionBudgetMs": 600, "waitMs": [100, 600]},
        "visualTargetCatalog": {
            "schemaVersion": "VisualTargetSet/1", "sourceFrameRef": "frames/action-1-pre.png",
            "sourceFrameHash": "a" * 64, "targetSetHash": "b" * 64,
            "targets": [{"id": "r00", "kind": "region", "allowedGestures": ["tap"]}]},
        "history": [], "protocolErrors": [], "remainingBudget": 3, "virtualTimeMs": 0,
        "objectiveProgress": None, "interactionCandidates": None,
    }
    view.update(over)
    return view


def history_entry(**over):
    entry = {
        "actionId": "action-1", "selection": {"type": "wait", "ms": 200},
        "normalized": {"kind": "wait", "ms": 200}, "valid": True, "retryCount": 0,
        "preFrameRef": "frames/action-1-pre.png", "preFrameHash": "c" * 64, "preEventSeq": 0,
        "virtualTimeBudgetMs": 200, "postFrameRef": "frames/action-1-post.png",
        "postFrameHash": "d" * 64, "postEventSeq": 1, "causalGameResponse": True,
        "gameEvents": [{"seq": 1, "source": "bridge", "type": "score", "virtualTimeMs": 5,
                        "data": {"score": 3}}],
        "protocolErrors": [],
    }
    entry.update(over)
    return entry


@pytest.mark.parametrize("selection", [
    {"type": "tap", "target": {"targetId": "r00"}},
    {"type": "tap", "target": {"targetId": "l00", "cell": {"row": 8, "column": 8},
                               "subAnchor": "northeast"}, "reason": "why not"},
    {"type": "drag", "from": {"targetId": "g01", "cell": {"row": 17, "column": 8}},
     "to": {"targetId": "r01"}},
    {"type": "key", "key": "Space"},
    {"type": "wait", "ms": 100},
    {"type": "swap_pair", "candidateId": "ms111"},
])
def test_valid_selections(selection):
    validate_selection(selection)


@pytest.mark.parametrize(("selection", "path"), [
    ({"type": "tap", "target": {"targetId": "r00", "cell": {"row": 1, "column": 1}}}, "$.target"),
    ({"type": "tap", "target": {"targetId": "l00"}}, "$.target"),
    ({"type": "tap", "target": {"targetId": "x00"}}, "$.target.targetId"),
    ({"type": "tap", "target": {"targetId": "g01", "cell": {"row": 18, "column": 1}}},
     "$.target.cell.row"),
    ({"type": "key", "key": "F5"}, "$.key"),
    ({"type": "wait", "ms": 601}, "$.ms"),
    ({"type": "wait", "ms": True}, "$.ms"),
    ({"type": "swap_pair", "candidateId": "ms1"}, "$.candidateId"),
    ({"type": "wait", "ms": 200, "reason": "x" * 281}, "$.reason"),
    ({"type": "wait", "ms": 200, "run": "rm -rf /"}, "$"),
    ({"type": "teleport"}, "$"),
    ("tap", "$"),
])
def test_invalid_selections_name_the_path(selection, path):
    with pytest.raises(ContractViolation) as caught:
        validate_selection(selection)
    assert caught.value.code == "selection.invalid"
    assert caught.value.path == path
    assert isinstance(caught.value, CheckFailed) and caught.value.exit_code == 1


def test_view_with_history_validates_and_bad_nested_selection_is_located():
    validate_view(minimal_view(history=[history_entry()]))
    bad = minimal_view(history=[history_entry(selection={"type": "wait", "ms": 5})])
    with pytest.raises(ContractViolation) as caught:
        validate_view(bad)
    assert caught.value.code == "view.invalid"
    assert caught.value.path.startswith("$.history[0].selection")


def test_view_rejects_bad_normalized_action_and_event():
    with pytest.raises(ContractViolation):
        validate_view(minimal_view(history=[history_entry(normalized={"kind": "fly"})]))
    bad_event = {"seq": 0, "source": "bridge", "type": "x", "virtualTimeMs": 0, "data": {}}
    with pytest.raises(ContractViolation) as caught:
        validate_view(minimal_view(history=[history_entry(gameEvents=[bad_event])]))
    assert caught.value.path == "$.history[0].gameEvents[0].seq"


def test_game_event_schema():
    validate_game_event({"seq": 1, "source": "observed", "type": "frame_changed",
                         "virtualTimeMs": 0, "data": {}})
    for bad in ({"seq": 1, "source": "page", "type": "x", "virtualTimeMs": 0, "data": {}},
                {"seq": 1, "source": "bridge", "type": "", "virtualTimeMs": 0, "data": {}},
                {"seq": 1, "source": "bridge", "type": "x" * 65, "virtualTimeMs": 0, "data": {}},
                {"seq": 1, "source": "bridge", "type": "x", "virtualTimeMs": 0, "data": []}):
        with pytest.raises(ContractViolation) as caught:
            validate_game_event(bad)
        assert caught.value.code == "game_event.invalid"


def test_evidence_action_defs():
    schema = contracts.load_schema(contracts.EVIDENCE_SCHEMA)
    assert {"action", "frameRef"} <= set(schema["$defs"])
    with pytest.raises(ContractViolation) as caught:
        validate_evidence({"schemaVersion": "lingxi.playtest-evidence/1"})
    assert caught.value.code == "evidence.invalid"


# ---- the compiled validator agrees with jsonschema (issue 22.5) ------------------------------

JSON_VALUES = [None, True, 0, -1, 3, 2.5, "", "x", "a" * 64, [], [1], {}, {"type": "wait"}]


def _paths(value, prefix=()):
    """Every (path, value) in a JSON document, the root included."""
    yield prefix, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replaced(document, path, value):
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


def test_the_compiled_view_validator_agrees_with_jsonschema():
    """Every value of a view with history, replaced by each of a set of JSON values (and
    deleted): the fast validator says valid exactly when jsonschema finds no error."""
    fast = contracts.fast_validator(contracts.VIEW_SCHEMA)
    if fast is None:
        pytest.skip("jsonschema_rs is not installed (the play extra): nothing to compare")
    slow = contracts.validator(contracts.VIEW_SCHEMA)
    view = minimal_view(history=[history_entry()])
    cases = [view]
    for path, _ in _paths(view):
        cases += [_replaced(view, path, value) for value in JSON_VALUES]
        if path:
            parent = json.loads(json.dumps(view))
            target = parent
            for step in path[:-1]:
                target = target[step]
            if isinstance(target, dict):
                del target[path[-1]]
                cases.append(parent)
    disagree = [c for c in cases if fast.is_valid(c) != (not list(slow.iter_errors(c)))]
    assert len(cases) > 800 and not disagree, disagree[:1]
    assert sum(fast.is_valid(c) for c in cases) > 10  # some stay valid: both sides are tested
