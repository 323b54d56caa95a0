"""human actor: prompt on injected streams, short forms or JSON, re-prompts on bad input."""

import io
import json

import pytest

from lingxi.actor.actors import ActorError, create_actor
from lingxi.actor.actors.human import ParseError, parse_short

from .views import make_view

VIEW = make_view(b"frame", frame_ref="frames/action-3-pre.png")


def _human(lines, **options):
    out = io.StringIO()
    actor = create_actor("human", seed=0, options=options,
                         input_stream=io.StringIO("".join(line + "\n" for line in lines)),
                         output_stream=out)
    return actor, out


@pytest.mark.parametrize(("line", "want"), [
    ("tap r00", {"type": "tap", "target": {"targetId": "r00"}}),
    ("tap l00 3 4", {"type": "tap", "target": {"targetId": "l00", "cell": {"row": 3, "column": 4}}}),
    ("tap g01 17,8 north", {"type": "tap", "target": {"targetId": "g01", "cell": {"row": 17, "column": 8},
                                                     "subAnchor": "north"}}),
    ("drag l00 1 1 l00 1 2", {"type": "drag", "from": {"targetId": "l00", "cell": {"row": 1, "column": 1}},
                              "to": {"targetId": "l00", "cell": {"row": 1, "column": 2}}}),
    ("swap ms012", {"type": "swap_pair", "candidateId": "ms012"}),
    ("key ArrowUp", {"type": "key", "key": "ArrowUp"}),
    ("wait 300", {"type": "wait", "ms": 300}),
    ('{"type":"wait","ms":150}', {"type": "wait", "ms": 150}),
])
def test_short_forms_and_json(line, want):
    actor, _ = _human([line])
    assert actor.select(VIEW, b"frame") == want


@pytest.mark.parametrize("line", ["jump", "tap", "tap l00 3", "swap", "wait soon", "{not json", "[1]",
                                  "tap r00 extra words"])
def test_parse_errors(line):
    with pytest.raises(ParseError):
        parse_short(line, VIEW)


def test_bad_input_is_explained_and_the_prompt_repeats():
    actor, out = _human(["dance", "wait 5000", "tap r07", "key F5", "swap ms999", "help", "wait 200"])
    assert actor.select(VIEW, b"frame") == {"type": "wait", "ms": 200}
    text = out.getvalue()
    assert text.count("selection> ") == 7
    assert "not understood" in text                   # dance
    assert "not a valid selection" in text            # wait 5000 / key F5 fail the schema
    assert "no target 'r07'" in text                  # unknown target
    assert "no swap candidate 'ms999'" in text
    assert "swap <candidateId>" in text               # help


def test_prompt_shows_frame_path_legal_types_and_targets(tmp_path):
    actor, out = _human(["wait 100"], frame_root=str(tmp_path))
    actor.select(VIEW, b"frame")
    text = out.getvalue()
    assert f"frame: {tmp_path / 'frames/action-3-pre.png'}" in text
    assert "legal: tap, drag, key, wait, swap_pair" in text
    assert "l00 lattice 8x8" in text and "r00 region" in text
    assert "swap candidates: 112" in text


def test_illegal_type_for_this_view_is_refused():
    view = make_view(b"f", types=["wait"], with_candidates=False)
    actor, out = _human(["tap r00", "wait 100"])
    assert actor.select(view, b"f") == {"type": "wait", "ms": 100}
    assert "not playable now" in out.getvalue()


@pytest.mark.parametrize("lines", [[], ["quit"]])
def test_end_of_input_or_quit_is_a_typed_error(lines):
    actor, _ = _human(lines)
    with pytest.raises(ActorError) as err:
        actor.select(VIEW, b"frame")
    assert err.value.code == "actor.human_quit"


def test_history_and_protocol_errors_are_shown():
    view = json.loads(json.dumps(VIEW))
    view["protocolErrors"] = [{"code": "selection.invalid", "message": "ms must be at least 100"}]
    actor, out = _human(["wait 100"])
    actor.select(view, b"")
    assert "error: selection.invalid: ms must be at least 100" in out.getvalue()
