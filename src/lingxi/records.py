"""Equality, hash and repr for dataclasses, written once instead of compiled per class.

On Python 3.11 ``@dataclass`` writes every method it adds as source text and compiles it
with ``exec`` when the class is created, at every start of the process: ``__init__``,
``__repr__``, ``__eq__`` and, for a frozen class, ``__hash__``, ``__setattr__`` and
``__delattr__``. ``lingxi protocol test`` created some forty dataclasses and so compiled
about two hundred small functions before it played a move (a fifth of its CPU, issue 22.7).

A class declared ``@dataclass(repr=False, eq=False)`` (``frozen=True`` as before) on one of
the bases below keeps its generated ``__init__`` (and the frozen guards) and is still a
dataclass to :func:`dataclasses.fields`, :func:`dataclasses.replace` and
:func:`dataclasses.asdict`; its ``__eq__``, ``__repr__`` and ``__hash__`` are these, which
behave as the generated ones: equality with an instance of the very same class only, over
the fields with ``compare=True``; ``Name(field=value, ...)`` over the fields with
``repr=True`` (``...`` for an instance met again while it is being shown); unhashable
unless frozen, then the hash of the hashed fields' values. ``tests/test_records.py``
holds them to what ``@dataclass`` generates.

A class made at start-up and rarely (a spec's parts, a flow mode's descriptor, a run's
configuration) goes one step further with ``@record`` (on :class:`Record`) or
``@frozen_record`` (on :class:`FrozenRecord`) in place of ``@dataclass``: a dataclass
whose ``__init__`` (:func:`record_init`) binds its arguments as the generated one does
(positions and names, defaults, default factories, ``init=False`` fields,
``__post_init__``, the same ``TypeError`` texts) from one shared function, so creating
the class compiles nothing; a frozen record refuses assignment and deletion with
:class:`dataclasses.FrozenInstanceError` as ``frozen=True`` does. Type checkers see both
decorators as dataclasses (PEP 681). Calling that ``__init__`` costs a few microseconds
more than a generated one, so classes made per message keep theirs.
"""

from __future__ import annotations

from _thread import get_ident
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T", bound=type)

# per class: (compared names, shown names, hashed names), worked out on first use
_PLANS: dict[type, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}
# (instance id, thread) of every repr being built: the recursion guard @dataclass has
_SHOWING: set[tuple[int, int]] = set()


def _plan(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    plan = _PLANS.get(cls)
    if plan is None:
        found = fields(cls)
        plan = (tuple(f.name for f in found if f.compare),
                tuple(f.name for f in found if f.repr),
                tuple(f.name for f in found if (f.compare if f.hash is None else f.hash)))
        _PLANS[cls] = plan
    return plan


class Record:
    """The base of a ``@dataclass(repr=False, eq=False)`` that is not frozen."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # as @dataclass(eq=True) leaves it

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _plan(self.__class__)[0]
        return tuple([getattr(self, name) for name in names]) == \
            tuple([getattr(other, name) for name in names])

    def __repr__(self) -> str:
        key = (id(self), get_ident())
        if key in _SHOWING:
            return "..."
        _SHOWING.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}"
                              for name in _plan(self.__class__)[1])
        finally:
            _SHOWING.discard(key)
        return f"{self.__class__.__qualname__}({inner})"


class FrozenRecord(Record):
    """The base of a ``@dataclass(frozen=True, repr=False, eq=False)``: hashable by value."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # Record's is None: unhashable
        return hash(tuple([getattr(self, name) for name in _plan(self.__class__)[2]]))


    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def record_init(cls: T) -> T:
    """Give a ``@dataclass(init=False, ...)`` class the ``__init__`` ``init=True`` would
    (see the module's docstring); apply it above ``@dataclass``."""
    found = fields(cls)
    params = [f for f in found if f.init]
    names = tuple(f.name for f in params)
    known = frozenset(names)
    qualname = f"{cls.__qualname__}.__init__()"
    # per field in order: (name, taken from the call, default, default factory)
    # (an init=False field with a plain default is not set: the class attribute holds it,
    # unless the class has slots)
    slots = "__slots__" in cls.__dict__
    plan = tuple((f.name, f.init, f.default, f.default_factory) for f in found
                 if f.init or f.default_factory is not MISSING
                 or (slots and f.default is not MISSING))
    post_init: Callable[..., Any] | None = getattr(cls, "__post_init__", None)
    put = object.__setattr__

    required = sum(1 for f in params if f.default is MISSING and f.default_factory is MISSING)
    takes = f"{len(names) + 1}" if required == len(names) else \
        f"from {required + 1} to {len(names) + 1}"
    takes += " positional argument" + ("s" if takes != "1" else "")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{qualname} takes {takes} but {len(args) + 1} were given")
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{qualname} got an unexpected keyword argument {key!r}")
            if key in given:
                raise TypeError(f"{qualname} got multiple values for argument {key!r}")
            given[key] = value
        missing = []
        for name, taken, default, factory in plan:
            if taken and name in given:
                value = given[name]
            elif default is not MISSING:
                value = default
            elif factory is not MISSING:
                value = factory()  # type: ignore[operator]
            elif taken:
                missing.append(name)
                continue
            else:  # init=False without a default: left unset, as the generated __init__
                continue
            put(self, name, value)
        if missing:  # worded as Python words it for a compiled __init__
            quoted = [repr(name) for name in missing]
            listed = " and ".join(quoted) if len(quoted) < 3 else \
                ", ".join(quoted[:-1]) + ", and " + quoted[-1]
            raise TypeError(f"{qualname} missing {len(missing)} required positional argument"
                            f"{'s' if len(missing) > 1 else ''}: {listed}")
        if post_init is not None:
            post_init(self)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    type.__setattr__(cls, "__init__", __init__)
    return cls


def _parameter_text(item: Field[Any]) -> str:
    """One ``__init__`` parameter as :func:`inspect.signature` writes it for the
    ``__init__`` ``@dataclass`` generates (its annotation is the field's type)."""
    kind = item.type
    shown = repr(kind) if isinstance(kind, str) else \
        kind.__qualname__ if isinstance(kind, type) and kind.__module__ == "builtins" else \
        (f"{kind.__module__}.{kind.__qualname__}" if isinstance(kind, type) else repr(kind))
    text = f"{item.name}: {shown}"
    if item.default is not MISSING:
        text += f" = {item.default!r}"
    elif item.default_factory is not MISSING:
        text += " = <factory>"
    return text


def _made(cls: T) -> T:
    """The class as ``@dataclass(init=False, repr=False, eq=False)`` makes it, then given
    its :func:`record_init` ``__init__`` and, without a docstring of its own, the one
    ``@dataclass`` writes (``Name(field: 'type' = default, ...)``), here from the fields:
    ``@dataclass`` asks :func:`inspect.signature`, which for a class without an
    ``__init__`` of its own yet parses ``object``'s text signature (``ast`` and the
    tokenizer's patterns, at every start)."""
    undocumented = not cls.__doc__
    if undocumented:
        cls.__doc__ = cls.__name__  # dataclass writes none over it
    dataclass(init=False, repr=False, eq=False)(cls)  # in place: no slots
    record_init(cls)
    if undocumented:
        params = [f for f in fields(cls) if f.init]
        texts = [_parameter_text(f) for f in params if not f.kw_only]
        named = [_parameter_text(f) for f in params if f.kw_only]
        if named:
            texts += ["*", *named]
        cls.__doc__ = f"{cls.__name__}({', '.join(texts)})"
    return cls


@dataclass_transform(field_specifiers=(field,))
def record(cls: T) -> T:
    """``@dataclass`` for a :class:`Record` made rarely: its ``__init__`` from
    :func:`record_init`, eq/repr from the base (nothing compiled when it is created)."""
    if not issubclass(cls, Record) or issubclass(cls, FrozenRecord):
        raise TypeError(f"@record is for subclasses of Record, not {cls.__qualname__}")
    return _made(cls)


@dataclass_transform(field_specifiers=(field,), frozen_default=True)
def frozen_record(cls: T) -> T:
    """``@dataclass(frozen=True)`` for a :class:`FrozenRecord` made rarely (see :func:`record`)."""
    if not issubclass(cls, FrozenRecord):
        raise TypeError(f"@frozen_record is for subclasses of FrozenRecord, not {cls.__qualname__}")
    return _made(cls)
