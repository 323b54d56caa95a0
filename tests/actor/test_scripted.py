"""scripted actor: validated JSON list, replayed in order, then wait."""

import json

import pytest

from lingxi.actor.actors import ActorError, create_actor

from .views import make_view

SCRIPT = [
    {"type": "tap", "target": {"targetId": "r00"}},
    {"type": "swap_pair", "candidateId": "ms003", "reason": "try it"},
    {"type": "drag", "from": {"targetId": "l00", "cell": {"row": 1, "column": 1}},
     "to": {"targetId": "l00", "cell": {"row": 1, "column": 2}, "subAnchor": "east"}},
]


def _write(tmp_path, data, raw=None):
    path = tmp_path / "script.json"
    path.write_text(raw if raw is not None else json.dumps(data), encoding="utf-8")
    return str(path)


def test_replays_in_order_then_waits(tmp_path):
    actor = create_actor("scripted", seed=0, options={"script": _write(tmp_path, SCRIPT)})
    view = make_view(b"")
    assert [actor.select(view, b"") for _ in range(3)] == SCRIPT
    assert actor.select(view, b"") == {"type": "wait", "ms": 600, "reason": "script exhausted"}
    assert actor.select(view, b"")["type"] == "wait"


@pytest.mark.parametrize(("data", "raw", "code", "path"), [
    (None, "[{", "actor.script_invalid", None),
    ({"type": "wait", "ms": 100}, None, "actor.script_invalid", "$"),
    ([{"type": "wait", "ms": 100}, {"type": "wait", "ms": 50}], None, "actor.script_invalid", "$[1]"),
    ([{"type": "tap", "target": {"targetId": "r00", "cell": {"row": 1, "column": 1}}}], None,
     "actor.script_invalid", "$[0]"),
    ([{"type": "key", "key": "F5"}], None, "actor.script_invalid", "$[0]"),
    ([{"type": "wait", "ms": 100, "run": "rm -rf /"}], None, "actor.script_invalid", "$[0]"),
])
def test_bad_scripts_fail_at_creation_with_the_entry_index(tmp_path, data, raw, code, path):
    with pytest.raises(ActorError) as err:
        create_actor("scripted", seed=0, options={"script": _write(tmp_path, data, raw)})
    assert err.value.code == code
    if path is not None:
        assert (err.value.path or "").startswith(path)


def test_missing_script_option_or_file(tmp_path):
    with pytest.raises(ActorError) as err:
        create_actor("scripted", seed=0, options={})
    assert err.value.code == "actor.bad_option"
    with pytest.raises(ActorError) as err:
        create_actor("scripted", seed=0, options={"script": str(tmp_path / "nope.json")})
    assert err.value.code == "actor.script_unreadable"
