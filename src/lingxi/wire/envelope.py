"""The Synapse envelope and agent endpoint (seed: synapse-raw-protocol, §3).

``Envelope.parse`` / ``Envelope.from_dict`` check shape only, in the order a
receiver needs: JSON object → version compatible → no unknown fields (unless a
newer minor version sent them) → required fields present → every field of the
right type. Signatures, windows and replay live in ``signature`` and
``pipeline``. ``to_dict`` writes back exactly the fields that are present, so a
parsed envelope re-serialises to what was signed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring as _encode_string
from typing import Any

from lingxi.records import FrozenRecord
from lingxi.wire.agent_fields import check_endpoint_fields
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.timefmt import parse_rfc3339

# Prebuilt JSON codec: the settings of lingxi.canonical (a test checks they agree),
# without building a new encoder/decoder per call.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                            allow_nan=False)


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder JSONEncoder.encode builds on every call, built once. Without the
# circular-reference markers a cyclic value raises RecursionError instead of
# ValueError; callers treat both as "not JSON".
_C_ENCODE = (None if _c_make_encoder is None else
             _c_make_encoder(None, _not_json, _encode_string, None, ":", ",", True, False, False))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # the C scanner, untyped


def canonical_bytes(value: Any) -> bytes:
    """``lingxi.canonical.canonical_bytes``, faster for the hot path."""
    if _C_ENCODE is not None and type(value) is dict:
        return "".join(_C_ENCODE(value, 0)).encode("utf-8")
    return _ENCODER.encode(value).encode("utf-8")


def decode_json(text: str) -> Any:
    """``json.loads`` with our settings; a document that is exactly one object skips the
    whitespace handling. Anything else (and every error) goes through the full decoder."""
    if text[:1] == "{":
        try:
            value, end = _SCAN(text, 0)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if end == len(text):
                return value
    return _DECODER.decode(text)


def _repeated(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"key {key[:60]!r} appears twice in one object")
        seen.add(key)


def _unique_pairs(pairs: list[tuple[str, Any]], _dict: Any = dict, _len: Any = len
                  ) -> dict[str, Any]:
    out: dict[str, Any] = _dict(pairs)
    if _len(out) != _len(pairs):
        _repeated(pairs)
    return out


_STRICT = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_pairs)
_STRICT_SCAN = _STRICT.scan_once  # type: ignore[attr-defined]


def decode_json_strict(text: str) -> Any:
    """:func:`decode_json` that also refuses a key repeated within one object (ValueError).

    Two readers of a document with a repeated key may keep different values
    (the last one wins here, the first elsewhere), so such a document is not
    one message: envelopes and their payloads are always read this way.
    """
    if text[:1] == "{":
        try:
            value, end = _STRICT_SCAN(text, 0)
        except (StopIteration, RecursionError):
            pass
        else:
            if end == len(text):
                return value
    return _STRICT.decode(text)


WIRE_VERSION = "1.0.0"
_OUR_MAJOR, _OUR_MINOR = 1, 0

PREFIXES = ("p2p", "group", "inter_group", "caller")
GROUP_PREFIXES = ("group", "inter_group")

_SEMVER = re.compile(r"(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})"
                     r"(?:-[0-9A-Za-z.-]{1,64})?(?:\+[0-9A-Za-z.-]{1,64})?", re.ASCII)
_TYPE = re.compile(r"(p2p|group|inter_group|caller):([A-Za-z0-9_.:-]{1,128})")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_MAX_ID = 256
_MAX_TEXT = 1024
_MAX_TTL = 2**31 - 1

ENDPOINT_FIELDS = ("agent_id", "agent_name", "system_id", "endpoint", "version")
ENVELOPE_FIELDS = ("id", "version", "type", "sender", "receiver", "payload", "timestamp",
                   "correlation_id", "reply_to", "group_id", "conversation_id", "ttl",
                   "broadcast", "encrypt", "signature", "signature_algorithm")
REQUIRED_FIELDS = ("id", "version", "type", "sender", "payload", "timestamp")
_ENDPOINT_SET = frozenset(ENDPOINT_FIELDS)
_REPLACEABLE = frozenset(ENVELOPE_FIELDS)
_REQUIRED_SET = frozenset(REQUIRED_FIELDS)
def _fail(code: str, message: str, path: str) -> EnvelopeError:
    return EnvelopeError(code, message, path=path)


def _text(value: Any, path: str, *, limit: int = _MAX_TEXT, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise _fail("envelope.malformed", f"must be a string, not {type(value).__name__}", path)
    if not empty and not value:
        raise _fail("envelope.malformed", "must not be empty", path)
    if len(value) > limit:
        raise _fail("envelope.malformed", f"longer than {limit} characters", path)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _fail("envelope.malformed", "not valid Unicode text (lone surrogate)",
                        path) from None
    return value


def _opt_text(value: Any, path: str, limit: int = _MAX_ID) -> str | None:
    return None if value is None else _text(value, path, limit=limit)


_VERSIONS: dict[str, tuple[int, int]] = {}


def check_version(value: Any) -> tuple[int, int]:
    """``(major, minor)`` of a compatible version; ``envelope.bad_version`` otherwise."""
    if isinstance(value, str):
        known = _VERSIONS.get(value)
        if known is not None:
            return known
    if not isinstance(value, str) or not _SEMVER.fullmatch(value):
        raise _fail("envelope.bad_version", "version must be MAJOR.MINOR.PATCH", "$.version")
    major, minor = (int(part) for part in value.split(".")[:2])
    if major != _OUR_MAJOR:
        raise _fail("envelope.bad_version",
                    f"version {value} has major {major}; this receiver speaks {_OUR_MAJOR}.x",
                    "$.version")
    if len(_VERSIONS) < 256:
        _VERSIONS[value] = (major, minor)
    return major, minor


_ENDPOINT_CACHE: dict[tuple[Any, ...], AgentEndpoint] = {}
_ENDPOINT_CACHE_SIZE = 4096
_LAST_ENDPOINT: dict[str, tuple[bool, dict[str, Any], AgentEndpoint]] = {}


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class AgentEndpoint(FrozenRecord):
    """Who sends or receives: agent_id, system_id and endpoint are required.

    ``agent_id`` may not contain ``|``: it is the separator of the signed
    content, and allowing it would let two different sender/receiver pairs
    share one signature.
    """

    agent_id: str
    system_id: str
    endpoint: str
    agent_name: str | None = None
    version: str | None = None
    _json: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.agent_id, str) or not self.agent_id or "|" in self.agent_id:
            raise ValueError("agent_id must be a non-empty string without '|'")

    @classmethod
    def from_dict(cls, data: Any, path: str = "$.sender", *, allow_extra: bool = False
                  ) -> AgentEndpoint:
        """Check and build an endpoint; repeated identical endpoints come from a small cache.

        The endpoint last seen at ``path`` is compared first (a session's peer sends
        the same two endpoints every time); the value compared is exactly the
        dict the cache would have been keyed on.
        """
        last = _LAST_ENDPOINT.get(path)
        if last is not None and type(data) is dict and last[0] is allow_extra \
                and last[1] == data:
            return last[2]
        try:
            key = (allow_extra, *data.items())
            cached = _ENDPOINT_CACHE.get(key)
        except (AttributeError, TypeError):  # not a dict, or unhashable values
            key, cached = None, None
        if cached is not None:
            return cached
        endpoint = cls._check(data, path, allow_extra)
        if key is not None:
            if len(_ENDPOINT_CACHE) >= _ENDPOINT_CACHE_SIZE:
                _ENDPOINT_CACHE.clear()
            _ENDPOINT_CACHE[key] = endpoint
            if type(data) is dict and len(_LAST_ENDPOINT) < 16:
                _LAST_ENDPOINT[path] = (allow_extra, dict(data), endpoint)
        return endpoint

    @classmethod
    def _check(cls, data: Any, path: str, allow_extra: bool) -> AgentEndpoint:
        if not isinstance(data, dict):
            raise _fail("envelope.malformed", "an agent endpoint must be an object", path)
        if not allow_extra:
            extra = data.keys() - _ENDPOINT_SET
            if extra:
                key = sorted(map(str, extra))[0]
                raise _fail("envelope.unknown_field", f"unknown endpoint field {key!r}",
                            f"{path}.{key}")
        for key in ("agent_id", "system_id", "endpoint"):
            if key not in data:
                raise _fail("envelope.missing_field", f"endpoint needs {key}", f"{path}.{key}")
        agent_id = _text(data["agent_id"], f"{path}.agent_id", limit=_MAX_ID)
        if "|" in agent_id:
            raise _fail("envelope.malformed", "agent_id may not contain '|'", f"{path}.agent_id")
        endpoint = cls(
            agent_id=agent_id,
            system_id=_text(data["system_id"], f"{path}.system_id", empty=True),
            endpoint=_text(data["endpoint"], f"{path}.endpoint", empty=True),
            agent_name=_opt_text(data.get("agent_name"), f"{path}.agent_name", _MAX_TEXT),
            version=_opt_text(data.get("version"), f"{path}.version", _MAX_ID),
        )
        check_endpoint_fields(endpoint.system_id, endpoint.endpoint, path)  # seed §3.5
        return endpoint

    def canonical(self) -> bytes:
        """Canonical JSON of the endpoint (cached)."""
        cached = self._json
        if cached is None:
            cached = canonical_bytes(self.to_dict())
            object.__setattr__(self, "_json", cached)
        return cached

    def to_dict(self) -> dict[str, str]:
        out = {"agent_id": self.agent_id, "system_id": self.system_id, "endpoint": self.endpoint}
        if self.agent_name is not None:
            out["agent_name"] = self.agent_name
        if self.version is not None:
            out["version"] = self.version
        return out


@dataclass(frozen=True, repr=False, eq=False)
class Envelope(FrozenRecord):
    """One Synapse message. Absent optional fields are ``None``; treat it as immutable."""

    id: str
    type: str
    sender: AgentEndpoint
    payload: dict[str, Any]
    timestamp: str
    version: str = WIRE_VERSION
    receiver: AgentEndpoint | None = None
    correlation_id: str | None = None
    reply_to: str | None = None
    group_id: str | None = None
    conversation_id: str | None = None
    ttl: int | None = None
    broadcast: bool | None = None
    encrypt: bool | None = None
    signature: str | None = None
    signature_algorithm: str | None = None
    _payload_json: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _instant: float | None = field(default=None, init=False, repr=False, compare=False)
    _wire: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _bytes: bytes | None = field(default=None, init=False, repr=False, compare=False)

    # ---- derived views -------------------------------------------------
    @property
    def prefix(self) -> str:
        return self.type.split(":", 1)[0]

    @property
    def name(self) -> str:
        return self.type.split(":", 1)[1]

    @property
    def action(self) -> str | None:
        action = self.payload.get("action")
        return action if isinstance(action, str) else None

    @property
    def wire(self) -> bytes | None:
        """The exact bytes this envelope was parsed from (kept when a sealed payload is opened).

        Evidence for transcripts: ``verify_signature(Envelope.parse(env.wire), key)``
        re-checks it later. ``None`` for envelopes built locally or changed by ``replace``.
        """
        return self._wire

    @property
    def instant(self) -> float:
        """The timestamp as POSIX seconds (cached)."""
        cached = self._instant
        if cached is None:
            cached = parse_rfc3339(self.timestamp)
            object.__setattr__(self, "_instant", cached)
        return cached

    def payload_json(self) -> bytes:
        """Canonical JSON of the payload (cached; the signed ``payload_json``)."""
        cached = self._payload_json
        if cached is None:
            try:
                cached = canonical_bytes(self.payload)
            except (ValueError, TypeError, RecursionError) as error:
                raise _fail("envelope.malformed", f"payload is not JSON-encodable: {error}",
                            "$.payload") from None
            object.__setattr__(self, "_payload_json", cached)
        return cached

    def replace(self, **changes: Any) -> Envelope:
        """A copy with ``changes`` applied; caches survive unless their source changed.

        Much cheaper than ``dataclasses.replace`` (no re-validation, no __init__).
        """
        unknown = changes.keys() - _REPLACEABLE
        if unknown:
            raise TypeError(f"unknown envelope fields {sorted(unknown)}")
        new = object.__new__(Envelope)
        state = new.__dict__
        state.update(self.__dict__)
        state.update(changes)
        if "payload" in changes:
            state["_payload_json"] = None
        if "timestamp" in changes:
            state["_instant"] = None
        state["_wire"] = None
        state["_bytes"] = None
        return new

    # ---- (de)serialisation ----------------------------------------------
    @classmethod
    def parse(cls, data: bytes | bytearray | str) -> Envelope:
        """Read an envelope from JSON text or UTF-8 bytes; typed errors only."""
        try:
            if isinstance(data, bytes | bytearray):
                raw = bytes(data)
                text = raw.decode("utf-8")
            else:
                text, raw = data, data.encode("utf-8", "surrogatepass")
            value = decode_json_strict(text)
        except (UnicodeDecodeError, ValueError, RecursionError, TypeError) as error:
            raise _fail("envelope.malformed", f"not a JSON document: {str(error)[:120]}",
                        "$") from None
        env = cls.from_dict(value)
        env.__dict__["_wire"] = raw
        return env

    @classmethod
    def from_dict(cls, data: Any) -> Envelope:
        """Check and build an envelope from a decoded JSON object (the first problem found,
        in field order, is the typed error)."""
        version, newer = _check_keys(data)
        get = data.get
        env_id = data["id"]
        if not isinstance(env_id, str) or not _UUID.fullmatch(env_id):
            raise _fail("envelope.malformed", "id must be a UUID", "$.id")
        kind = data["type"]
        prefix = _check_type(kind)
        sender = AgentEndpoint.from_dict(data["sender"], "$.sender", allow_extra=newer)
        receiver = get("receiver")
        if receiver is not None:
            receiver = AgentEndpoint.from_dict(receiver, "$.receiver", allow_extra=newer)
        payload = data["payload"]
        if not isinstance(payload, dict):
            raise _fail("envelope.malformed", "payload must be a JSON object", "$.payload")
        timestamp = data["timestamp"]
        instant = parse_rfc3339(timestamp)
        ttl = _check_ttl(get("ttl"))
        broadcast = _check_flag(get("broadcast"), "$.broadcast")
        encrypt = _check_flag(get("encrypt"), "$.encrypt")
        group_id = _optional_id(get("group_id"), "$.group_id")
        _check_routing(prefix, receiver, group_id, broadcast)
        signature, algorithm = _check_signing(get("signature"), get("signature_algorithm"))
        correlation_id = _optional_id(get("correlation_id"), "$.correlation_id")
        reply_to = _optional_id(get("reply_to"), "$.reply_to")
        conversation_id = _optional_id(get("conversation_id"), "$.conversation_id")
        payload_json = _canonical_payload(payload)
        new = object.__new__(cls)
        object.__setattr__(new, "__dict__", {
            "id": env_id, "type": kind, "sender": sender, "payload": payload,
            "timestamp": timestamp, "version": version, "receiver": receiver,
            "correlation_id": correlation_id, "reply_to": reply_to, "group_id": group_id,
            "conversation_id": conversation_id, "ttl": ttl, "broadcast": broadcast,
            "encrypt": encrypt, "signature": signature, "signature_algorithm": algorithm,
            "_payload_json": payload_json, "_instant": instant, "_wire": None, "_bytes": None,
        })
        return new

    @classmethod
    def _from_state(cls, state: dict[str, Any]) -> Envelope:
        """Adopt a complete field dict as a new instance (no ``__init__``, no copying)."""
        new = object.__new__(cls)
        object.__setattr__(new, "__dict__", state)
        return new

    def header_dict(self) -> dict[str, Any]:
        """Every present field except payload, signature and signature_algorithm."""
        out: dict[str, Any] = {"id": self.id, "version": self.version, "type": self.type,
                               "sender": self.sender.to_dict(), "timestamp": self.timestamp}
        if self.receiver is not None:
            out["receiver"] = self.receiver.to_dict()
        for key in ("correlation_id", "reply_to", "group_id", "conversation_id", "ttl",
                    "broadcast", "encrypt"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        out = self.header_dict()
        out["payload"] = self.payload
        if self.signature_algorithm is not None:
            out["signature_algorithm"] = self.signature_algorithm
        if self.signature is not None:
            out["signature"] = self.signature
        return out

    def to_bytes(self) -> bytes:
        """Canonical JSON of ``to_dict()``, ready to be framed.

        Assembled field by field in sorted key order, reusing the payload JSON
        computed for the signature and the endpoints' cached JSON; a test checks
        it equals ``canonical_bytes(self.to_dict())``. An ``EnvelopeBuilder`` fills
        it in while building (from its per-session template; tested the same way).
        """
        cached = self._bytes
        if cached is not None:
            return cached
        return b"{" + b",".join(self._parts(True)) + b"}"

    def header_bytes(self) -> bytes:
        """Canonical JSON of ``header_dict()`` (a sealed payload's associated data).

        Assembled like :meth:`to_bytes`, without payload and signature fields; a
        test checks it equals ``canonical_bytes(self.header_dict())``.
        """
        return b"{" + b",".join(self._parts(False)) + b"}"

    def _parts(self, whole: bool) -> list[bytes]:
        """The ``"key":value`` pieces of the canonical JSON, in sorted key order;
        ``whole=False`` leaves out payload, signature and signature_algorithm."""
        parts: list[bytes] = []
        add = parts.append
        if self.broadcast is not None:
            add(b'"broadcast":true' if self.broadcast else b'"broadcast":false')
        if self.conversation_id is not None:
            add(b'"conversation_id":' + _json_str(self.conversation_id))
        if self.correlation_id is not None:
            add(b'"correlation_id":' + _json_str(self.correlation_id))
        if self.encrypt is not None:
            add(b'"encrypt":true' if self.encrypt else b'"encrypt":false')
        if self.group_id is not None:
            add(b'"group_id":' + _json_str(self.group_id))
        add(b'"id":' + _json_str(self.id))
        if whole:
            add(b'"payload":' + self.payload_json())
        if self.receiver is not None:
            add(b'"receiver":' + self.receiver.canonical())
        if self.reply_to is not None:
            add(b'"reply_to":' + _json_str(self.reply_to))
        add(b'"sender":' + self.sender.canonical())
        if whole:
            if self.signature is not None:
                add(b'"signature":' + _json_str(self.signature))
            if self.signature_algorithm is not None:
                add(b'"signature_algorithm":' + _json_str(self.signature_algorithm))
        add(b'"timestamp":' + _json_str(self.timestamp))
        if self.ttl is not None:
            add(b'"ttl":%d' % self.ttl)
        add(b'"type":' + _json_str(self.type))
        add(b'"version":' + _json_str(self.version))
        return parts


def json_string(text: str) -> bytes:
    """``text`` as a JSON string, UTF-8 (as canonical JSON writes it)."""
    return _encode_string(text).encode("utf-8")


_json_str = json_string


# ---- the checks of Envelope.from_dict, one field (or one rule) each --------------------
def _check_keys(data: Any) -> tuple[Any, bool]:
    """An object with a version we read, no unknown field (unless a newer minor version
    sent it) and every required one; returns the version and whether it is newer."""
    if not isinstance(data, dict):
        raise _fail("envelope.malformed", "an envelope must be a JSON object", "$")
    if "version" not in data:
        raise _fail("envelope.missing_field", "envelope needs version", "$.version")
    version = data["version"]
    _, minor = check_version(version)
    newer = minor > _OUR_MINOR
    if not newer and not _REPLACEABLE.issuperset(data):
        key = sorted(map(str, data.keys() - _REPLACEABLE))[0]
        raise _fail("envelope.unknown_field", f"unknown envelope field {key!r}", f"$.{key}")
    if not _REQUIRED_SET <= data.keys():
        key = next(k for k in REQUIRED_FIELDS if k not in data)
        raise _fail("envelope.missing_field", f"envelope needs {key}", f"$.{key}")
    return version, newer


def _check_type(kind: Any) -> str:
    """``<prefix>:<name>`` with a known prefix; returns the prefix."""
    if not isinstance(kind, str) or not _TYPE.fullmatch(kind):
        raise _fail("envelope.bad_type",
                    f"type must be <prefix>:<name> with prefix one of {', '.join(PREFIXES)}",
                    "$.type")
    return kind[:kind.index(":")]


def _check_ttl(ttl: Any) -> int | None:
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int)
                            or not 0 <= ttl <= _MAX_TTL):
        raise _fail("envelope.malformed", "ttl must be a non-negative integer of seconds",
                    "$.ttl")
    return ttl


def _check_flag(value: Any, path: str) -> bool | None:
    if value is not None and value is not True and value is not False:
        raise _fail("envelope.malformed", "must be true or false", path)
    return value


def _optional_id(value: Any, path: str) -> str | None:
    return None if value is None else _text(value, path, limit=_MAX_ID)


def _check_routing(prefix: str, receiver: Any, group_id: str | None,
                   broadcast: bool | None) -> None:
    """Group messages name their group; every other message one receiver, no broadcast."""
    if prefix in GROUP_PREFIXES:
        if group_id is None:
            raise _fail("envelope.missing_field", f"{prefix}: messages need group_id",
                        "$.group_id")
        return
    if receiver is None:
        raise _fail("envelope.missing_field",
                    f"{prefix}: messages need a receiver (only group messages may omit it)",
                    "$.receiver")
    if broadcast:
        raise _fail("envelope.malformed",
                    f"{prefix}: messages are point-to-point and cannot be broadcast",
                    "$.broadcast")


def _check_signing(signature: Any, algorithm: Any) -> tuple[str | None, str | None]:
    if signature is not None and not isinstance(signature, str):
        raise _fail("envelope.bad_signature", "signature must be a string", "$.signature")
    if algorithm is not None and (not isinstance(algorithm, str) or not algorithm):
        raise _fail("envelope.unknown_algorithm", "signature_algorithm must be a non-empty "
                    "string (leave it out for the default, HMAC-SHA256)",
                    "$.signature_algorithm")
    return signature, algorithm


def _canonical_payload(payload: dict[str, Any]) -> bytes:
    """Refuse payloads that have no canonical form (lone surrogates…).

    A sealed payload (exactly ``alg``, ``ciphertext`` and ``nonce``, all strings: what
    every ``encrypt: true`` envelope carries) is written out directly, as the
    encoder would write it (a test compares both).
    """
    try:
        if len(payload) == 3 and "alg" in payload and "ciphertext" in payload \
                and "nonce" in payload:
            alg, ciphertext, nonce = payload["alg"], payload["ciphertext"], payload["nonce"]
            if type(alg) is str and type(ciphertext) is str and type(nonce) is str:
                return b'{"alg":%s,"ciphertext":%s,"nonce":%s}' % (
                    _json_str(alg), _json_str(ciphertext), _json_str(nonce))
        return canonical_bytes(payload)
    except (ValueError, TypeError, RecursionError) as error:
        raise _fail("envelope.malformed", f"payload is not JSON-encodable: {error}",
                    "$.payload") from None
