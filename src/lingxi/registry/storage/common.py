"""What every aggregate of the store shares: its refusals, page sizes and LIKE patterns."""

from __future__ import annotations

from lingxi.registry.errors import RegistryError

MAX_LIMIT = 100


def bad(message: str, code: str = "registry.bad_request", status: int = 400) -> RegistryError:
    return RegistryError(code, message, status=status)


def not_found(what: str, ident: str) -> RegistryError:
    return RegistryError(f"registry.{what}_not_found", f"no {what} {ident}", status=404)


def page_limit(value: int | None) -> int:
    """The page size a list read asked for (20 when not given), 1 to ``MAX_LIMIT``."""
    if value is None:
        return 20
    if not 1 <= value <= MAX_LIMIT:
        raise bad(f"limit must be 1-{MAX_LIMIT}")
    return value


def like(text: str) -> str:
    """A case-insensitive ``LIKE`` pattern matching ``text`` anywhere (escape ``\\``)."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
