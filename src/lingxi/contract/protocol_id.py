"""protocol_id: SHA-256 of the canonical JSON of a spec's contract subset.

The rule is in docs/contract.md ("protocol_id"). It is applied to the
document as given, tolerating odd shapes, so that any JSON object hashes
(``protocol hash`` must print an id even for specs this runtime cannot run).
"""

from __future__ import annotations

import re
from typing import Any

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.contract.bounds import check_document_bounds
from lingxi.contract.model import DEFAULT_MODE
from lingxi.contract.source import MAX_DEPTH
from lingxi.errors import InputError

_COPIED = ("messages", "rules", "choices", "commit_reveal", "seats")
_MODE_EXTRA = {
    "simultaneous_round": "round",
    "authoritative_realtime": "realtime",
    "authoritative_group": "group",
}


def _flow_subset(flow: Any) -> dict[str, Any]:
    if not isinstance(flow, dict):
        return {}
    out: dict[str, Any] = {}
    if flow.get("phases"):
        out["phases"] = flow["phases"]
    mode = flow.get("mode")
    if "mode" in flow and mode != DEFAULT_MODE:
        out["mode"] = mode
    extra = _MODE_EXTRA.get(mode) if isinstance(mode, str) else None
    if extra and extra in flow:
        out[extra] = flow[extra]
    return out


def canonical_subset(spec_dict: dict[str, Any]) -> dict[str, Any]:
    """The part of ``spec_dict`` that identifies the protocol."""
    out: dict[str, Any] = {key: spec_dict[key] for key in _COPIED if key in spec_dict}
    flow = _flow_subset(spec_dict.get("flow"))
    if flow:
        out["flow"] = flow
    if "parameters" in spec_dict:
        params = spec_dict["parameters"]
        if isinstance(params, dict):
            out["parameters"] = {
                name: ({k: v for k, v in p.items() if k != "default"} if isinstance(p, dict) else p)
                for name, p in params.items()
            }
        else:
            out["parameters"] = params
    if "timing" in spec_dict:
        out["timing"] = spec_dict["timing"]
    return out


def protocol_id(spec_dict: dict[str, Any]) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of :func:`canonical_subset`.

    An oversized document is refused (``spec.too_large``) before it is
    canonicalised: a registry's answer is hashed before it is loaded.
    """
    check_document_bounds(spec_dict, "spec", depth_limit=MAX_DEPTH)
    return sha256_hex(canonical_bytes(canonical_subset(spec_dict)))


PROTOCOL_ID = re.compile(r"[0-9a-f]{64}")


def check_protocol_id(value: Any) -> str:
    """``value`` if it is a protocol_id (64 lowercase hex), else ``protocol.bad_id`` (exit 2).

    The one check for every place an id enters: an offer, the CLI, a registry,
    the cache. Anything else never reaches a file path.
    """
    if not isinstance(value, str) or PROTOCOL_ID.fullmatch(value) is None:
        shown = repr(value[:40] if isinstance(value, str) else value)[:48]
        raise InputError("protocol.bad_id",
                         f"a protocol_id is 64 lowercase hex characters, not {shown}")
    return value
