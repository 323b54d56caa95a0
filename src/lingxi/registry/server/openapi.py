"""The OpenAPI 3.1 document of the registry API, written out by hand.

It is data, built once; ``/openapi.json`` serves it and ``/docs`` renders it.
Schemathesis reads it in the tests, so every route, parameter and body here
must match what :mod:`lingxi.registry.server.app` accepts.
"""

from __future__ import annotations

import functools
from typing import Any

HEX64 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
ID = {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$"}
ERROR = {"$ref": "#/components/schemas/Error"}
OBJECT = {"type": "object"}


def _signed_headers() -> list[dict[str, Any]]:
    return [
        {"$ref": f"#/components/parameters/{name}"}
        for name in ("Agent", "Timestamp", "Nonce", "Signature")
    ]


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _responses(ok: str, *errors: int, created: bool = False) -> dict[str, Any]:
    """200 (201), the route's refusals, and 500 ``registry.internal``, which any route
    can answer and no input should cause (schemathesis checks both)."""
    out: dict[str, Any] = {"200": {"description": ok, **_json(OBJECT)}}
    if created:
        out["201"] = {"description": ok + " (created)", **_json(OBJECT)}
    for status in sorted({*errors, 400, 500}):  # 400: a bad Host or query, on any route
        text = (
            "unexpected failure (registry.internal); a bug"
            if status == 500
            else "refused; see error.code"
        )
        out[str(status)] = {"description": text, **_json(ERROR)}
        if status == 429:
            out["429"]["headers"] = {
                "Retry-After": {
                    "description": "seconds until a rate-limited request may go",
                    "schema": {"type": "integer", "minimum": 1},
                }
            }
    return out


def _query(name: str, schema: dict[str, Any], text: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": text}


def _path(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema}


PAGING = [
    _query("cursor", {"type": "string"}, "next_cursor of the previous page"),
    _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "page size"),
]


def _write(
    summary: str,
    body: dict[str, Any],
    *errors: int,
    params: list | None = None,
    created: bool = True,
) -> dict[str, Any]:
    idem = {
        "name": "Idempotency-Key",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{16,128}$"},
        "description": "a retry with the same key and request gets the first answer",
    }
    return {
        "post": {
            "summary": summary,
            "parameters": [*(params or []), *_signed_headers(), idem],
            "requestBody": {"required": True, **_json(body)},
            # 429: registry.rate_limited (per agent, with Retry-After) on every signed write
            "responses": _responses(summary, 400, 401, 413, 422, 429, *errors, created=created),
        }
    }


@functools.cache
def openapi_document() -> dict[str, Any]:
    spec_body = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": {"type": "object", "description": "the spec.json document"},
            "allow_new": {"type": "boolean"},
            "reason": {"type": "string", "maxLength": 2000},
        },
    }
    invitation_body = {
        "type": "object",
        "required": ["protocol_id", "endpoint"],
        "properties": {
            "protocol_id": HEX64,
            "options": {"type": "object"},
            "endpoint": {"type": "string", "description": "tcp://HOST:PORT"},
            "ttl_seconds": {"type": "integer", "minimum": 60, "maximum": 259200},
            "note": {"type": "string", "maxLength": 500},
        },
    }
    inv_id = [_path("invitation_id", ID)]
    paths: dict[str, Any] = {
        "/v1/info": {
            "get": {
                "summary": "Server identity, its Ed25519 public key and limits",
                "responses": _responses("server info"),
            }
        },
        "/v1/identities": _write(
            "Register a nickname and Ed25519 key (signed with that key)",
            {
                "type": "object",
                "required": ["nickname", "public_key"],
                "properties": {"nickname": {"type": "string"}, "public_key": HEX64},
            },
            409,
            422,
        ),
        "/v1/identities/{agent_id}": {
            "get": {
                "summary": "One identity",
                "parameters": [_path("agent_id", ID)],
                "responses": _responses("identity", 404),
            }
        },
        "/v1/protocols": {
            "get": {
                "summary": "Search protocols by name, type and text",
                "parameters": [
                    _query("name", {"type": "string"}, "name contains"),
                    _query("type", {"type": "string"}, "type equals"),
                    _query("q", {"type": "string"}, "name or description contains"),
                    *PAGING,
                ],
                "responses": _responses("a page of protocols", 400),
            },
            **_write(
                "Register a spec (the server computes its protocol_id)",
                spec_body,
                404,
                409,
                413,
                422,
            ),
        },
        "/v1/protocols/preflight": {
            "post": {
                "summary": "Report known protocols a draft converges with (no signature, no write)",
                "requestBody": {
                    "required": True,
                    **_json(
                        {"type": "object", "required": ["spec"], "properties": {"spec": OBJECT}}
                    ),
                },
                "responses": _responses("the preflight report", 400, 413, 422),
            }
        },
        "/v1/protocols/{protocol_id}": {
            "get": {
                "summary": "One protocol with its spec",
                "parameters": [_path("protocol_id", HEX64)],
                "responses": _responses("protocol", 404),
            }
        },
        "/v1/protocols/{protocol_id}/bundles": _write(
            "Publish an immutable UI bundle of static files",
            {
                "type": "object",
                "required": ["files"],
                "properties": {
                    "files": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["path", "content_base64"],
                            "properties": {
                                "path": {"type": "string"},
                                "content_base64": {"type": "string"},
                            },
                        },
                    }
                },
            },
            403,
            404,
            413,
            422,
            params=[_path("protocol_id", HEX64)],
        ),
        "/v1/protocols/{protocol_id}/bundles/{bundle_id}": {
            "get": {
                "summary": "One UI bundle with its files",
                "parameters": [_path("protocol_id", HEX64), _path("bundle_id", HEX64)],
                "responses": _responses("bundle", 404),
            }
        },
        "/v1/invitations": {
            "get": {
                "summary": "Browse open invitations, newest first",
                "parameters": [
                    _query("protocol_id", {"type": "string"}, "protocol"),
                    _query("host", {"type": "string"}, "host agent id"),
                    _query("type", {"type": "string"}, "protocol type"),
                    _query("name", {"type": "string"}, "protocol name contains"),
                    *PAGING,
                ],
                "responses": _responses("a page of open invitations", 400),
            },
            **_write(
                "Post an invitation (options checked against the spec)",
                invitation_body,
                404,
                413,
                422,
                429,
            ),
        },
        "/v1/invitations/{invitation_id}": {
            "get": {
                "summary": "One invitation",
                "parameters": inv_id,
                "responses": _responses("invitation", 404),
            }
        },
        "/v1/invitations/{invitation_id}/claim": _write(
            "Claim an invitation: exactly one guest wins and gets a single-use ticket",
            OBJECT,
            403,
            404,
            409,
            429,
            params=inv_id,
        ),
        "/v1/invitations/{invitation_id}/confirm": _write(
            "Host: the claimed guest completed its handshake (the claim stays)",
            {
                "type": "object",
                "required": ["session_id"],
                "properties": {"session_id": {"type": "string"}},
            },
            403,
            404,
            409,
            422,
            params=inv_id,
            created=False,
        ),
        "/v1/invitations/{invitation_id}/release": _write(
            "End the live claim now (its guest, or the host; refuse: bar that guest)",
            {
                "type": "object",
                "required": ["session_id"],
                "properties": {"session_id": {"type": "string"}, "refuse": {"type": "boolean"}},
            },
            403,
            404,
            409,
            params=inv_id,
            created=False,
        ),
        "/v1/invitations/{invitation_id}/heartbeat": _write(
            "Host: still here; an open invitation whose host is silent for the presence "
            "timeout is withdrawn (registry.host_absent)",
            OBJECT,
            403,
            404,
            409,
            params=inv_id,
            created=False,
        ),
        "/v1/invitations/{invitation_id}/cancel": _write(
            "Host: withdraw the invitation", OBJECT, 403, 404, 409, params=inv_id, created=False
        ),
        "/v1/sessions": {
            "get": {
                "summary": "Sessions, newest first",
                "parameters": [
                    _query("status", {"type": "string"}, "status"),
                    _query("protocol_id", {"type": "string"}, "protocol"),
                    *PAGING,
                ],
                "responses": _responses("a page of sessions", 400),
            }
        },
        "/v1/sessions/{session_id}": {
            "get": {
                "summary": "One session: status, receipts, outcome",
                "parameters": [_path("session_id", ID)],
                "responses": _responses("session", 404),
            }
        },
        "/v1/sessions/{session_id}/receipts": _write(
            "Post this party's signed session receipt",
            {"type": "object", "required": ["receipt"], "properties": {"receipt": OBJECT}},
            403,
            404,
            409,
            422,
            params=[_path("session_id", ID)],
        ),
        "/v1/tables/{table_id}/receipts": _write(
            "A posted table's final head: its close entry and every seated member's group "
            "receipt (the host, or a member of the table); settles every seat's session",
            {
                "type": "object",
                "required": ["close", "receipts"],
                "properties": {"close": OBJECT, "receipts": {"type": "array", "items": OBJECT}},
            },
            403,
            404,
            409,
            413,
            422,
            params=[_path("table_id", ID)],
        ),
        "/v1/ratings": {
            "get": {
                "summary": "An agent's Elo ratings (per protocol) from verified sessions and its "
                "posted tables' outcome counts, with the log records and their inclusion "
                "proofs",
                "parameters": [
                    {
                        **_query(
                            "agent", {"type": "string", "minLength": 1, "maxLength": 32}, "agent id"
                        ),
                        "required": True,
                    },
                    _query("protocol_id", HEX64, "only this protocol"),
                ],
                "responses": _responses("ratings", 400),
            }
        },
        "/v1/log/head": {
            "get": {
                "summary": "The transparency log's signed head (JSON, with "
                "its C2SP checkpoint note)",
                "responses": _responses("signed head"),
            }
        },
        "/v1/log/checkpoint": {
            "get": {
                "summary": "The signed checkpoint as a C2SP signed note (text/plain)",
                "responses": {
                    "200": {
                        "description": "signed note",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    "500": {"description": "unexpected failure", **_json(ERROR)},
                },
            }
        },
        "/v1/log/proof/inclusion": {
            "get": {
                "summary": "RFC 9162 inclusion proof of entry seq in the tree of size entries",
                "parameters": [
                    {**_query("seq", {"type": "integer", "minimum": 1}, "entry"), "required": True},
                    {
                        **_query("size", {"type": "integer", "minimum": 1}, "tree size"),
                        "required": True,
                    },
                ],
                "responses": _responses("inclusion proof", 400),
            }
        },
        "/v1/log/proof/consistency": {
            "get": {
                "summary": "RFC 9162 consistency proof from the tree of `from` to that of `to`",
                "parameters": [
                    {
                        **_query("from", {"type": "integer", "minimum": 0}, "old size"),
                        "required": True,
                    },
                    {
                        **_query("to", {"type": "integer", "minimum": 0}, "new size"),
                        "required": True,
                    },
                ],
                "responses": _responses("consistency proof", 400),
            }
        },
        "/v1/log": {
            "get": {
                "summary": "Log entries after a sequence number",
                "parameters": [
                    _query("after", {"type": "integer", "minimum": 0}, "last seq already held"),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "entries"),
                    _query(
                        "records",
                        {"type": "string", "enum": ["0", "1"]},
                        "1: each entry with its record",
                    ),
                ],
                "responses": _responses("log entries", 400),
            }
        },
        "/v1/relay": {
            "get": {
                "summary": "The relay's servers and the trust a nats-server needs",
                "responses": _responses("relay info", 404),
            }
        },
        "/v1/relay/credentials": _write(
            "A short-lived relay user JWT for one session's subjects (host or guest)",
            {
                "type": "object",
                "required": ["session_id", "user_key"],
                "properties": {"session_id": {"type": "string"}, "user_key": {"type": "string"}},
            },
            403,
            404,
            409,
            created=False,
        ),
        "/v1/relay/probe": _write(
            "A one-minute relay JWT for a probe subject (lingxi doctor)",
            {
                "type": "object",
                "required": ["user_key", "nonce"],
                "properties": {"user_key": {"type": "string"}, "nonce": {"type": "string"}},
            },
            404,
            created=False,
        ),
        "/v1/reach": _write(
            "Connect back to the caller's own address on a port: can guests reach it?",
            {
                "type": "object",
                "required": ["port", "nonce"],
                "properties": {"port": {"type": "integer"}, "nonce": {"type": "string"}},
            },
            created=False,
        ),
        "/v1/log/{seq}": {
            "get": {
                "summary": "The record behind one log entry",
                "parameters": [_path("seq", {"type": "integer", "minimum": 1})],
                "responses": _responses("record", 404),
            }
        },
    }
    header = {"in": "header", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Lingxi registry",
            "version": "1",
            "description": "Publish protocols, find each other, join by invitation. "
            "Mutating requests are signed with Ed25519 over method, path, "
            "timestamp, nonce and body hash.",
        },
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["code", "message"],
                            "properties": {
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                            },
                        }
                    },
                }
            },
            "parameters": {
                "Agent": {"name": "X-Lingxi-Agent", **header, "description": "signer's agent id"},
                "Timestamp": {
                    "name": "X-Lingxi-Timestamp",
                    **header,
                    "description": "Unix seconds",
                },
                "Nonce": {"name": "X-Lingxi-Nonce", **header, "description": "32-64 hex, fresh"},
                "Signature": {
                    "name": "X-Lingxi-Signature",
                    **header,
                    "description": "Ed25519, 128 hex",
                },
            },
        },
    }
