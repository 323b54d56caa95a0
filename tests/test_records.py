"""lingxi.records: a dataclass on Record/FrozenRecord (repr=False, eq=False) compares,
hashes and shows itself as the same @dataclass with the generated methods does."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from lingxi.records import FrozenRecord, Record


def twins(frozen: bool, slots: bool = False) -> tuple[type, type]:
    """The same fields as a plain dataclass and as a record."""
    def body() -> dict[str, Any]:
        return {"__annotations__": {"a": "int", "b": "Any", "hidden": "int", "loose": "int"},
                "b": field(default_factory=list), "hidden": field(default=0, repr=False),
                "loose": field(default=0, compare=False)}

    plain = dataclass(frozen=frozen, slots=slots)(type("Thing", (), body()))
    base = FrozenRecord if frozen else Record
    record = dataclass(frozen=frozen, slots=slots, repr=False, eq=False)(
        type("Thing", (base,), body()))
    return plain, record


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("slots", [False, True])
def test_equality_repr_and_hash_are_the_dataclass_ones(frozen: bool, slots: bool) -> None:
    plain, record = twins(frozen, slots)
    for args in [(1,), (1, [2]), (1, (2, "x"))]:
        for kwargs in [{}, {"hidden": 5}, {"loose": 7}]:
            p, r = plain(*args, **kwargs), record(*args, **kwargs)
            assert repr(p) == repr(r)
            assert (p == plain(*args)) == (r == record(*args))
            assert (p == plain(9)) == (r == record(9))
            if frozen and isinstance(p.b, tuple):
                assert hash(p) == hash(r)
    assert record(1) != plain(1)  # another class: not equal, as a dataclass
    assert (record(1) == 1) is False
    assert record(1).__eq__(1) is NotImplemented
    if frozen:
        with pytest.raises(FrozenInstanceError):
            record(1).a = 2  # type: ignore[misc]
    else:
        assert record.__hash__ is None and plain.__hash__ is None
        with pytest.raises(TypeError):
            hash(record(1))


def test_still_a_dataclass_to_the_module_functions() -> None:
    _, record = twins(frozen=True)
    thing = record(1, [2], hidden=3)
    assert dataclasses.is_dataclass(thing)
    assert [f.name for f in dataclasses.fields(thing)] == ["a", "b", "hidden", "loose"]
    assert dataclasses.asdict(thing) == {"a": 1, "b": [2], "hidden": 3, "loose": 0}
    assert dataclasses.replace(thing, a=4) == record(4, [2], hidden=3)


def test_a_record_shown_inside_itself_is_dots_as_in_a_dataclass() -> None:
    plain, record = twins(frozen=False)
    p, r = plain(1), record(1)
    p.b.append(p)
    r.b.append(r)
    assert repr(r) == repr(p) == "Thing(a=1, b=[...], loose=0)"


def test_subclass_fields_and_qualname() -> None:
    @dataclass(frozen=True, repr=False, eq=False)
    class Base(FrozenRecord):
        x: int

    @dataclass(frozen=True, repr=False, eq=False)
    class Child(Base):
        y: int = 2

    assert repr(Child(1)).endswith("Child(x=1, y=2)")
    assert Child(1) == Child(1, 2) and Child(1) != Base(1) and hash(Child(1)) == hash((1, 2))
