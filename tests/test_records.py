"""lingxi.records: a dataclass on Record/FrozenRecord (repr=False, eq=False) compares,
hashes and shows itself as the same @dataclass with the generated methods does."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from lingxi.records import FrozenRecord, Record, frozen_record, record, record_init


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


def init_twins(frozen: bool) -> tuple[type, type]:
    def body() -> dict[str, Any]:
        return {"__annotations__": {"a": "int", "b": "int", "c": "Any", "d": "Any",
                                    "e": "int", "f": "Any"},
                "b": 2, "c": field(default_factory=list), "d": field(default=5, init=False),
                "e": field(default=0, repr=False), "f": field(default_factory=dict, init=False),
                "__post_init__": lambda self: object.__setattr__(self, "seen", self.a + 1)}

    plain = dataclass(frozen=frozen)(type("Thing", (), body()))
    base = FrozenRecord if frozen else Record
    record = record_init(dataclass(init=False, repr=False, eq=False)(
        type("Thing", (base,), body())))
    return plain, record


def _outcome(cls: type, args: tuple, kwargs: dict) -> Any:
    try:
        made = cls(*args, **kwargs)
    except TypeError as error:
        return ("TypeError", str(error))
    return (repr(made), vars(made), made.seen)


@pytest.mark.parametrize("frozen", [False, True])
def test_record_init_binds_as_the_generated_init(frozen: bool) -> None:
    plain, record = init_twins(frozen)
    calls = [((1,), {}), ((1, 3), {}), ((1, 3, [4]), {}), ((1,), {"c": [9], "e": 4}),
             ((), {"a": 1, "b": 7}), ((), {}), ((), {"b": 1}), ((1, 2, 3, 4, 5), {}),
             ((1,), {"a": 2}), ((1,), {"z": 2}), ((1,), {"d": 2})]
    for args, kwargs in calls:
        assert _outcome(record, args, kwargs) == _outcome(plain, args, kwargs), (args, kwargs)
    one, two = record(1), record(1)
    assert one.c is not two.c and one.f is not two.f  # a fresh default per instance
    assert "d" not in vars(one) and one.d == 5  # the class attribute holds it, as generated
    if frozen:
        with pytest.raises(FrozenInstanceError):
            one.a = 3
        with pytest.raises(FrozenInstanceError):
            del one.a
        assert dataclasses.replace(one, b=4) == record(1, 4)


def test_record_init_names_three_missing_arguments_as_python_does() -> None:
    @dataclass
    class Plain:
        x: int
        y: int
        z: int

    @record_init
    @dataclass(init=False, repr=False, eq=False)
    class Rec(Record):
        x: int
        y: int
        z: int

    with pytest.raises(TypeError) as plain_error:
        Plain()  # type: ignore[call-arg]
    with pytest.raises(TypeError) as record_error:
        Rec()  # type: ignore[call-arg]
    assert str(record_error.value).replace("Rec", "Plain") == str(plain_error.value)


def test_the_decorators_make_dataclasses_that_compile_nothing(monkeypatch) -> None:
    import builtins

    compiled: list[str] = []
    real_exec = builtins.exec

    def counting_exec(source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(str(source)[:40])
        return real_exec(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "exec", counting_exec)

    @frozen_record
    class Point(FrozenRecord):
        x: int
        tags: list[str] = field(default_factory=list)

    @record
    class Box(Record):
        points: list[Point]

    monkeypatch.undo()
    assert compiled == []
    assert dataclasses.is_dataclass(Point) and dataclasses.is_dataclass(Box)
    assert repr(Box([Point(1)])).replace(Point.__qualname__, "Point").replace(
        Box.__qualname__, "Box") == "Box(points=[Point(x=1, tags=[])])"
    with pytest.raises(FrozenInstanceError):
        Point(1).x = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        record(Point)
    with pytest.raises(TypeError):
        frozen_record(Box)


def test_an_undocumented_record_gets_the_docstring_dataclass_writes(monkeypatch) -> None:
    """From its fields, without inspect.signature (which parses object's text signature)."""
    import inspect

    @dataclass
    class Plain:
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)
        d: int = field(default=5, init=False)
        e: Any = None
        f: int = field(default=1, kw_only=True)

    asked: list[Any] = []
    monkeypatch.setattr(inspect, "signature", lambda *a, **k: asked.append(a))

    @record
    class Rec(Record):
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)
        d: int = field(default=5, init=False)
        e: Any = None
        f: int = field(default=1, kw_only=True)

    @frozen_record
    class Documented(FrozenRecord):
        """Its own words."""

        a: int

    monkeypatch.undo()
    assert asked == []
    assert Rec.__doc__ is not None and Plain.__doc__ is not None
    assert Rec.__doc__.replace("Rec", "Plain") == Plain.__doc__
    assert Documented.__doc__ == "Its own words."

    class Kind:
        pass

    made = type("Typed", (Record,), {"__annotations__": {"k": Kind, "n": int}})
    plain = dataclass(type("Typed", (), {"__annotations__": {"k": Kind, "n": int}}))
    assert record(made).__doc__ == plain.__doc__
