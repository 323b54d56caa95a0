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
"""

from __future__ import annotations

from _thread import get_ident
from dataclasses import fields

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

