"""The machines' events and actions behave as the frozen dataclasses they replaced.

Each class is compared with a dataclass made from its own fields and defaults:
construction (positional, by name, defaults, a fresh dict per default),
equality, hash, repr, ``__match_args__`` and refusal of assignment.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from lingxi.session.core import events

RECORDS = [cls for cls in vars(events).values()
           if isinstance(cls, type) and issubclass(cls, events._Frozen) and cls is not events._Frozen]


def _twin(cls):
    """The frozen dataclass with ``cls``'s fields and defaults."""
    specs = []
    for name, param in list(inspect.signature(cls).parameters.items()):
        if param.default is inspect.Parameter.empty:
            specs.append((name, object))
        elif param.default is None and isinstance(getattr(cls(*_required(cls)), name), dict):
            specs.append((name, object, dataclasses.field(default_factory=dict)))
        else:
            specs.append((name, object, dataclasses.field(default=param.default)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True)


def _required(cls):
    return [f"v{i}" for i, p in enumerate(inspect.signature(cls).parameters.values())
            if p.default is inspect.Parameter.empty]


def test_there_are_records_and_each_names_its_fields():
    assert len(RECORDS) >= 19
    for cls in RECORDS:
        assert cls._fields == tuple(inspect.signature(cls).parameters)
        assert cls.__match_args__ == cls._fields


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_a_record_behaves_as_its_dataclass(cls):
    twin = _twin(cls)
    args = _required(cls)
    ours, theirs = cls(*args), twin(*args)
    assert repr(ours).replace(cls.__qualname__, "X") == repr(theirs).replace(twin.__qualname__, "X")
    assert [getattr(ours, f) for f in cls._fields] == \
        [getattr(theirs, f.name) for f in dataclasses.fields(twin)]
    assert cls(*args) == ours and not (cls(*args) != ours)
    assert ours != theirs  # another class is never equal, as between dataclasses
    names = dict(zip(cls._fields, args, strict=False))
    assert cls(**names) == ours
    if len(cls._fields) > len(args):  # change an optional field: no longer equal
        changed = cls(*args, **{cls._fields[len(args)]: "changed"})
        assert changed != ours
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.x = 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ours, cls._fields[0], "other")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(ours, cls._fields[0])
    try:
        expected_hash = hash(theirs)
    except TypeError:  # a dict among the values: unhashable both ways
        with pytest.raises(TypeError):
            hash(ours)
    else:
        assert hash(ours) == expected_hash == hash(cls(*args))


def test_default_dicts_are_fresh_per_record():
    first, second = events.ControlReceived("offer"), events.ControlReceived("offer")
    assert first.body == {} and first.body is not second.body
    assert events.RequestDecision("p", [], {}, 1.0).peer_text == {}
    given = {"a": 1}
    assert events.SendControl("close", given).body is given
    assert events.Send({"action": "x"}, "x") == events.Send({"action": "x"}, "x", None)
    with pytest.raises(TypeError):
        events.TimerFired()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        events.TimerFired("t", "extra")  # type: ignore[call-arg]


def test_records_can_be_matched_by_position():
    match events.SetTimer("turn", 3.0):
        case events.SetTimer(name, seconds):
            assert (name, seconds) == ("turn", 3.0)
        case _:
            pytest.fail("no match")
