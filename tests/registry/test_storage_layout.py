"""The store is split along its unit-of-work seam: only the write path opens transactions,
the aggregates stay small, nobody reaches into another module's private names, and the
facade's settings reach the aggregates that use them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lingxi.registry.errors import RegistryError
from lingxi.registry.storage.store import Store

STORAGE = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "registry" / "storage"
AGGREGATES = ["identities", "protocols", "bundles", "invitations", "claims", "sessions",
              "ratings", "logreads"]
# who may begin or commit a transaction, spend a nonce or append to the log
WRITE_PATH = {"unit", "batch", "engine", "serverkey", "relay"}


def _tree(name: str) -> ast.Module:
    return ast.parse((STORAGE / f"{name}.py").read_text())


def test_no_storage_module_is_over_400_lines():
    sizes = {p.name: len(p.read_text().splitlines()) for p in STORAGE.glob("*.py")}
    assert {n: s for n, s in sizes.items() if s > 400} == {}


@pytest.mark.parametrize("name", AGGREGATES + ["store"])
def test_an_aggregate_never_runs_the_write_path_itself(name):
    """Transactions, nonces and log appends belong to the unit of work: an aggregate only
    hands it a decision (reads open plain connections)."""
    calls = {(ast.unparse(node.func.value), node.func.attr) for node in ast.walk(_tree(name))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    own = [f"{who}.{what}" for who, what in calls
           if what in ("begin", "begin_nested", "commit", "rollback")
           or (who.endswith("uow") and what in ("transaction", "append", "write_once"))]
    assert own == [], name
    assert ("self.uow", "write") in calls or name in ("logreads", "ratings", "store")


def test_no_module_reaches_another_modules_private_names():
    """``x._name`` only on ``self`` (or ``sys._current_frames``-like stdlib), and no import
    of an underscored name: what a module shares is public in it."""
    reached = []
    for path in STORAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") \
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                reached.append(f"{path.name}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.ImportFrom):
                reached += [f"{path.name}:{node.lineno} {a.name}" for a in node.names
                            if a.name.startswith("_")]
    assert reached == []


def test_the_facade_settings_reach_the_aggregates(sqlite_url, alice):
    """``lingxi server`` and tests set limits on the store after it is built; the
    aggregates read them from the shared rules and unit of work, not from a copy."""
    from .test_write_path import _post, _setup

    store = Store(sqlite_url, writes_per_minute=None)
    try:
        pid = _setup(store, alice, "alice")
        store.max_open_invitations = 1
        _post(store, alice, pid, 1)
        with pytest.raises(RegistryError) as refused:
            _post(store, alice, pid, 2)
        assert refused.value.code == "registry.too_many_invitations"
        assert store.invitations.rules.max_open_invitations == 1
        store.presence_timeout = 5
        store.clock = lambda: 10 ** 10  # far in the future: every host has gone silent
        assert store.browse()["items"] == []
        assert store.head()["timestamp"] == 10 ** 10
    finally:
        store.close()
