"""Small shared shapes: timestamps, ids, cursors, input limits."""

from __future__ import annotations

import base64
import functools
import ipaddress
import re
import secrets
from datetime import UTC, datetime

from lingxi.registry.errors import RegistryError

DEFAULT_TTL = 2 * 3600
MIN_TTL = 60
MAX_TTL = 72 * 3600
DEFAULT_CLAIM_TIMEOUT = 60.0
DEFAULT_PRESENCE_TIMEOUT = 60.0  # an open invitation whose host is silent this long is withdrawn
DEFAULT_WRITES_PER_MINUTE = 120  # signed requests per agent
DEFAULT_CLAIMS_PER_MINUTE = 60  # claim attempts per invitation, all guests together
MAX_BODY = 256 * 1024
MAX_BUNDLE_BODY = 2 * 1024 * 1024
NICKNAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # ASCII only: no Unicode look-alikes
ENDPOINT = re.compile(r"^tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253}):([0-9]{1,5})$")
RECORD_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def iso(ts: float | None) -> str | None:
    """RFC 3339 UTC with millisecond precision, or None."""
    if ts is None:
        return None
    # isoformat truncates to the millisecond (as microsecond // 1000 does) and ends
    # in "+00:00"; it is several times cheaper than strftime, and lists call it per row
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


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


# Within the ASCII alphabet, what still reads alike (after lower-casing, in the spirit of
# UTS #39 skeletons): two nicknames with one skeleton are one name to a reader.
_SKELETON = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"),
             ("5", "s"), ("_", "-"), (".", "-"))


def nickname_skeleton(nickname: str) -> str:
    """The form two confusable nicknames share (``Alice``, ``aIice``, ``a1ice`` -> ``alice``)."""
    out = nickname.lower()
    for a, b in _SKELETON:
        out = out.replace(a, b)
    return out


ENDPOINT_POLICIES = ("public", "lan")


def check_endpoint(endpoint: object, policy: str = "lan") -> str:
    """``tcp://HOST:PORT`` whose address a guest may be sent to.

    Loopback and public addresses always pass; ``lan`` also lets private, shared
    and documentation ranges through (a host on a LAN posts its LAN address), and
    ``public`` refuses them. Link-local (169.254.0.0/16, where cloud metadata
    services listen; fe80::/10), unspecified, multicast and reserved addresses are
    refused under every policy (``registry.endpoint_refused``). Host names pass: the
    registry does not resolve them.
    """
    match = ENDPOINT.match(endpoint) if isinstance(endpoint, str) else None
    if not match or not 1 <= int(match.group(2)) <= 65535:
        raise RegistryError("registry.bad_endpoint",
                            "endpoint must be tcp://HOST:PORT with a port 1-65535", status=422)
    refusal = _host_refusal(match.group(1).strip("[]"), policy)
    if refusal is not None:
        raise RegistryError(*refusal, status=422)
    return str(endpoint)


@functools.lru_cache(maxsize=4096)
def _host_refusal(host: str, policy: str) -> tuple[str, str] | None:
    """Why ``check_endpoint`` refuses ``host`` under ``policy`` (code, message), or None.
    Remembered per host: the address classes are fixed, and hosts repost from the same
    few addresses (each class test walks a list of networks)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if all(part.isdigit() for part in host.split(".")):
            return "registry.bad_endpoint", "not an IP address or host name"
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return None
    if (address.is_link_local or address.is_unspecified or address.is_multicast
            or address.is_reserved or str(address) == "255.255.255.255"):
        return ("registry.endpoint_refused",
                f"{host} is a link-local, unspecified, multicast or reserved "
                "address: no guest is sent there")
    if not address.is_global and policy != "lan":
        return ("registry.endpoint_refused",
                f"{host} is not a public address (this registry's endpoint policy "
                "is public)")
    return None


def check_ttl(ttl: object) -> int:
    if ttl is None:
        return DEFAULT_TTL
    if not isinstance(ttl, int) or isinstance(ttl, bool) or not MIN_TTL <= ttl <= MAX_TTL:
        raise RegistryError("registry.bad_ttl",
                            f"ttl_seconds must be an integer {MIN_TTL}-{MAX_TTL} (72 h)",
                            status=422)
    return ttl
