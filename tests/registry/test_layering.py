"""Layer rules of the registry and the shipped migrations matching the tables."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine

import lingxi.registry
from lingxi.registry.storage.engine import migrate
from lingxi.registry.storage.schema import metadata

PACKAGE = Path(lingxi.registry.__file__).parent


def _imports(folder: Path) -> dict[Path, set[str]]:
    out = {}
    for path in folder.rglob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        out[path] = names
    return out


def _bad(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    return [f"{path.name}: {name}" for path, names in _imports(PACKAGE / folder).items()
            for name in names if name.startswith(forbidden)]


def test_server_and_storage_never_import_hooks_session_protocols_or_wire():
    forbidden = ("lingxi.hooks", "lingxi.session", "lingxi.protocols", "lingxi.wire",
                 "lingxi.cli", "lingxi.registry.client", "httpx")
    assert _bad("server", forbidden) == [] and _bad("storage", forbidden) == []


def test_client_never_imports_session_or_server():
    assert _bad("client", ("lingxi.session", "lingxi.registry.server",
                           "lingxi.registry.storage", "lingxi.hooks", "lingxi.cli",
                           "sqlalchemy", "starlette")) == []


def test_models_are_pure():
    assert _bad("models", ("lingxi.session", "lingxi.wire", "lingxi.hooks", "lingxi.contract",
                           "lingxi.registry.server", "lingxi.registry.storage",
                           "lingxi.registry.client", "sqlalchemy", "starlette", "httpx")) == []


def test_ticket_verifier_imports_no_server_dependency():
    code = ("import sys; from lingxi.registry.models.ticket import verify_ticket\n"
            "print(sorted(m for m in ('sqlalchemy', 'starlette', 'httpx', 'alembic', 'uvicorn')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_migrations_create_exactly_the_declared_tables(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = create_engine(database_url)
    try:
        migrate(engine)
        migrate(engine)  # a second run is a no-op
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
        assert diff == []
    finally:
        engine.dispose()
