"""Small shared shapes: timestamps, ids, cursors, input limits."""

from __future__ import annotations

import base64
import re
import secrets
from datetime import UTC, datetime

from lingxi.registry.errors import RegistryError

DEFAULT_TTL = 2 * 3600
MIN_TTL = 60
MAX_TTL = 72 * 3600
DEFAULT_CLAIM_TIMEOUT = 60.0
MAX_BODY = 256 * 1024
MAX_BUNDLE_BODY = 2 * 1024 * 1024
NICKNAME = re.compile(r"^[\w.-]{1,64}$")
ENDPOINT = re.compile(r"^tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253}):([0-9]{1,5})$")
RECORD_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def iso(ts: float | None) -> str | None:
    """RFC 3339 UTC with millisecond precision, or None."""
    if ts is None:
        return None
    moment = datetime.fromtimestamp(ts, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(10)}"


def encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"s{seq}".encode()).rstrip(b"=").decode()


def decode_cursor(cursor: str | None) -> int | None:
    if not cursor:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if text[0] != "s" or not text[1:].isdigit() or len(text) > 20:
            raise ValueError
        return int(text[1:])
    except (ValueError, IndexError, UnicodeDecodeError):
        raise RegistryError("registry.bad_cursor", "the cursor is not one this server gave",
                            status=400) from None


def check_endpoint(endpoint: object) -> str:
    match = ENDPOINT.match(endpoint) if isinstance(endpoint, str) else None
    if not match or not 1 <= int(match.group(2)) <= 65535:
        raise RegistryError("registry.bad_endpoint",
                            "endpoint must be tcp://HOST:PORT with a port 1-65535", status=422)
    return str(endpoint)


def check_ttl(ttl: object) -> int:
    if ttl is None:
        return DEFAULT_TTL
    if not isinstance(ttl, int) or isinstance(ttl, bool) or not MIN_TTL <= ttl <= MAX_TTL:
        raise RegistryError("registry.bad_ttl",
                            f"ttl_seconds must be an integer {MIN_TTL}-{MAX_TTL} (72 h)",
                            status=422)
    return ttl
