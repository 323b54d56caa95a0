"""The registry client on httpx: every route, signed where the server wants a signature.

Async, so ``lingxi host --post`` and ``lingxi join`` can call it from their
event loop; the CLI wraps each call in ``asyncio.run``. The transport is
injectable: the CLI passes an in-process ASGI transport for the embedded
registry, tests pass one for an app they built. Whatever the server answers,
the client checks what it can itself: a fetched spec must hash to the id it
was asked for, a bundle's files to its id, a ticket must carry the server's
signature, and every record a write returns is kept in the local
:class:`~lingxi.registry.client.ledger.Ledger` for ``lingxi registry verify``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from lingxi.contract import load_spec, protocol_id
from lingxi.contract.bounds import check_document_bounds
from lingxi.contract.source import MAX_DEPTH
from lingxi.errors import EXIT_FAILED
from lingxi.registry.client.ledger import Ledger
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.bundle import check_files
from lingxi.registry.models.proofs import (
    Proven,
    check_identity,
    check_invitation,
    check_protocol,
    check_session,
    unproven,
)
from lingxi.registry.models.signing import Signer, sign_request
from lingxi.registry.models.ticket import TicketClaims, verify_ticket
from lingxi.textsafe import terminal_safe

_SEGMENT = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
RETRIES = 2  # a signed write whose answer was lost is sent again, under its idempotency key


@dataclass(frozen=True)
class Claim:
    """A won claim: the session record's id and the ticket for the host's handshake."""

    session_id: str
    ticket: str
    claim_deadline: str
    invitation: dict[str, Any]
    claims: TicketClaims


def _check_segments(path: str) -> None:
    """Ids a user typed become path segments: each must look like a registry id."""
    for segment in path.split("/")[2:]:
        if not _SEGMENT.fullmatch(segment):
            raise RegistryError(
                "registry.bad_id",
                f"{terminal_safe(segment, 60)!r} is not a registry id "
                "(letters, digits and _ . : -, at most 128)",
                status=400,
            )


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON object the registry answered, or its coded error as a RegistryError."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code >= 400:
        answer = (data or {}).get("error") if isinstance(data, dict) else None
        if not isinstance(answer, dict):
            raise RegistryError(
                "registry.bad_response",
                f"the registry answered {response.status_code}",
                status=response.status_code,
                exit_code=EXIT_FAILED,
            )
        raise RegistryError(
            str(answer.get("code")),
            str(answer.get("message")),
            status=response.status_code,
            details=answer.get("details"),
        )
    if not isinstance(data, dict):
        raise RegistryError(
            "registry.bad_response",
            "the registry did not answer JSON",
            status=502,
            exit_code=EXIT_FAILED,
        )
    return data


class RegistryClient:
    """One registry at ``base_url``, acting as ``identity`` for signed calls."""

    def __init__(
        self,
        base_url: str,
        identity: Signer | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 15.0,
        ledger: Ledger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.clock = clock
        self.identity = identity
        self.ledger = ledger
        self._http = httpx.AsyncClient(base_url=self.base_url, transport=transport, timeout=timeout)
        self._server_key: str | None = None

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------------ plumbing
    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        signed: bool = False,
        params: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        _check_segments(path)
        query = {k: v for k, v in (params or {}).items() if v is not None}
        content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"content-type": "application/json"} if body is not None else {}
        if signed and self.identity is None:
            raise RegistryError(
                "registry.no_identity", "this call needs an identity; run `lingxi identity init`"
            )
        target = path + ("?" + str(httpx.QueryParams(query)) if query else "")
        if signed:  # a lost answer is retried with the same key: the registry answers as before
            headers["idempotency-key"] = secrets.token_hex(16)
        response = await self._send(method, path, target, content, headers, query, signed)
        data = _answer(response)
        if self.ledger is not None and isinstance(data.get("log"), dict):
            self.ledger.keep(data["log"])
        return data

    async def _send(
        self,
        method: str,
        path: str,
        target: str,
        content: bytes,
        headers: dict[str, str],
        query: dict[str, Any],
        signed: bool,
    ) -> httpx.Response:
        """One request; a signed write whose connection failed is signed anew and retried
        (same idempotency key), a read is not."""
        for attempt in range(RETRIES + 1 if signed else 1):
            if signed:
                assert self.identity is not None
                headers.update(sign_request(self.identity, method, target, content))
            try:
                return await self._http.request(
                    method, path, content=content or None, headers=headers, params=query or None
                )
            except httpx.InvalidURL as error:
                raise RegistryError(
                    "registry.bad_request", f"cannot build the request: {error}", status=400
                ) from None
            except httpx.HTTPError as error:
                if attempt < RETRIES and signed and isinstance(error, httpx.TransportError):
                    await asyncio.sleep(0.2 * (attempt + 1))
                    continue
                raise RegistryError(
                    "registry.unreachable",
                    f"cannot reach the registry at {self.base_url}: {error}",
                    status=503,
                    exit_code=EXIT_FAILED,
                ) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def server_key(self) -> str:
        if self._server_key is None:
            key = (await self.info()).get("server_public_key")
            if not isinstance(key, str) or re.fullmatch(r"[0-9a-f]{64}", key) is None:
                raise RegistryError(
                    "registry.bad_response",
                    "the registry's /v1/info names no server key",
                    status=502,
                    exit_code=EXIT_FAILED,
                )
            self._server_key = key
            if self.ledger is not None:
                self.ledger.pin(self._server_key)
        return self._server_key

    # ------------------------------------------------------------------ reads
    async def info(self) -> dict[str, Any]:
        return await self._call("GET", "/v1/info")

    async def _proven(
        self, answer: dict[str, Any], check: Callable[[dict[str, Any], Proven], None]
    ) -> dict[str, Any]:
        """``answer`` once its proof holds against the pinned server key (else
        ``registry.unproven``): nothing the client acts on is taken from a mere row."""
        check(answer, Proven(answer, pinned_key=await self.server_key(), now=self.clock()))
        return answer

    async def identity_record(self, agent_id: str) -> dict[str, Any]:
        """An agent's nickname and key, proven from its self-signed identity record."""
        return await self._proven(
            await self._call("GET", f"/v1/identities/{agent_id}"), check_identity
        )

    async def search(
        self,
        *,
        name: str | None = None,
        type: str | None = None,
        q: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return await self._call(
            "GET",
            "/v1/protocols",
            params={"name": name, "type": type, "q": q, "cursor": cursor, "limit": limit},
        )

    async def protocol(self, protocol_id_: str) -> dict[str, Any]:
        """A protocol's spec and metadata, proven from its registration record; an oversized
        spec is refused (``spec.too_large``) before the proof hashes it."""
        answer = await self._call("GET", f"/v1/protocols/{protocol_id_}")
        if isinstance(answer.get("spec"), dict):
            check_document_bounds(answer["spec"], "spec", depth_limit=MAX_DEPTH)
        return await self._proven(answer, check_protocol)

    async def fetch_spec(
        self, protocol_id_: str, record: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The spec behind ``protocol_id_``, refused unless it hashes to that id and loads;
        ``record`` is the proven answer of :meth:`protocol` when the caller already has it."""
        if record is None:
            record = await self.protocol(protocol_id_)
        spec = record.get("spec")
        if not isinstance(spec, dict) or protocol_id(spec) != protocol_id_:
            raise RegistryError(
                "registry.spec_mismatch",
                f"the registry served a spec that does not hash to {protocol_id_}",
                status=502,
                exit_code=EXIT_FAILED,
            )
        load_spec(spec)
        return spec

    async def bundle(self, protocol_id_: str, bundle_id: str) -> dict[str, bytes]:
        """A UI bundle's files, refused unless they are static and hash to ``bundle_id``."""
        record = await self._call("GET", f"/v1/protocols/{protocol_id_}/bundles/{bundle_id}")
        files = {f["path"]: base64.b64decode(f["content_base64"]) for f in record["files"]}
        if check_files(files)["bundle_id"] != bundle_id:
            raise RegistryError(
                "registry.bundle_mismatch",
                f"the registry served files that do not hash to {bundle_id}",
                status=502,
                exit_code=EXIT_FAILED,
            )
        return files

    async def browse(
        self,
        *,
        protocol_id: str | None = None,
        host: str | None = None,
        type: str | None = None,
        name: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return await self._call(
            "GET",
            "/v1/invitations",
            params={
                "protocol_id": protocol_id,
                "host": host,
                "type": type,
                "name": name,
                "cursor": cursor,
                "limit": limit,
            },
        )

    async def invitation(self, invitation_id: str) -> dict[str, Any]:
        """An invitation; its endpoint, host, host key, protocol and options proven from the
        host's signed invitation record and identity (its status is the registry's word)."""
        return await self._proven(
            await self._call("GET", f"/v1/invitations/{invitation_id}"), check_invitation
        )

    async def session(self, session_id: str) -> dict[str, Any]:
        """A session; every receipt in it proven to be the one its party posted."""
        return await self._proven(
            await self._call("GET", f"/v1/sessions/{session_id}"), check_session
        )

    async def sessions(
        self, *, status: str | None = None, cursor: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        return await self._call(
            "GET", "/v1/sessions", params={"status": status, "cursor": cursor, "limit": limit}
        )

    async def ratings(self, agent_id: str, protocol_id: str | None = None) -> dict[str, Any]:
        """An agent's ratings, each proven by the logged rating record of its last game."""
        answer = await self._call(
            "GET", "/v1/ratings", params={"agent": agent_id, "protocol_id": protocol_id}
        )
        return await self._proven(answer, lambda a, p: _check_ratings(a, p, agent_id))

    async def head(self) -> dict[str, Any]:
        return await self._call("GET", "/v1/log/head")

    async def log_entries(self, *, records: bool = False) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        while True:
            page = (
                await self._call(
                    "GET",
                    "/v1/log",
                    params={
                        "after": len(entries),
                        "limit": 1000,
                        "records": "1" if records else None,
                    },
                )
            )["entries"]
            entries.extend(page)
            if len(page) < 1000:
                return entries

    async def log_record(self, seq: int) -> dict[str, Any]:
        return (await self._call("GET", f"/v1/log/{seq}"))["record"]

    async def inclusion(self, seq: int, size: int) -> dict[str, Any]:
        return await self._call("GET", "/v1/log/proof/inclusion", params={"seq": seq, "size": size})

    async def consistency(self, old: int, new: int) -> dict[str, Any]:
        return await self._call("GET", "/v1/log/proof/consistency", params={"from": old, "to": new})

    async def preflight(self, spec: dict[str, Any]) -> dict[str, Any]:
        return await self._call("POST", "/v1/protocols/preflight", body={"spec": spec})

    # ------------------------------------------------------------------ writes
    def _me(self) -> Signer:
        if self.identity is None:
            raise RegistryError(
                "registry.no_identity", "this call needs an identity; run `lingxi identity init`"
            )
        return self.identity

    async def register(self, nickname: str) -> dict[str, Any]:
        me = self._me()
        return await self._call(
            "POST",
            "/v1/identities",
            signed=True,
            body={"nickname": nickname, "public_key": me.public_hex},
        )

    async def register_protocol(
        self, spec: dict[str, Any], *, allow_new: bool = False, reason: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"spec": spec}
        if allow_new:
            body["allow_new"] = True
        if reason is not None:
            body["reason"] = reason
        return await self._call("POST", "/v1/protocols", signed=True, body=body)

    async def publish_bundle(self, protocol_id_: str, files: dict[str, bytes]) -> dict[str, Any]:
        body = {
            "files": [
                {"path": p, "content_base64": base64.b64encode(c).decode()}
                for p, c in sorted(files.items())
            ]
        }
        return await self._call(
            "POST", f"/v1/protocols/{protocol_id_}/bundles", signed=True, body=body
        )

    async def post_invitation(
        self,
        protocol_id_: str,
        *,
        endpoint: str,
        options: dict[str, Any] | None = None,
        ttl_seconds: int | None = None,
        note: str = "",
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "protocol_id": protocol_id_,
            "endpoint": endpoint,
            "options": options or {},
            "note": note,
        }
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        return (await self._call("POST", "/v1/invitations", signed=True, body=body))["invitation"]

    async def claim(self, invitation_id: str) -> Claim:
        """Claim ``invitation_id``; the ticket is checked against the server's key here."""
        me = self._me()
        answer = await self._call(
            "POST", f"/v1/invitations/{invitation_id}/claim", signed=True, body={}
        )
        invitation = answer["invitation"]
        claims = verify_ticket(
            answer["ticket"],
            server_public_key=await self.server_key(),
            invitation_id=invitation_id,
            host_agent_id=invitation["host_agent_id"],
            guest_public_key=me.public_hex,
            now=time.time(),
        )
        return Claim(
            answer["session_id"], answer["ticket"], answer["claim_deadline"], invitation, claims
        )

    async def confirm(self, invitation_id: str, session_id: str) -> dict[str, Any]:
        return (
            await self._call(
                "POST",
                f"/v1/invitations/{invitation_id}/confirm",
                signed=True,
                body={"session_id": session_id},
            )
        )["invitation"]

    async def release(
        self, invitation_id: str, session_id: str, *, refuse: bool = False
    ) -> dict[str, Any]:
        """End a live claim now: the guest's own (its connection failed), or, as the host,
        anyone's (``refuse`` bars that guest from the invitation)."""
        return (
            await self._call(
                "POST",
                f"/v1/invitations/{invitation_id}/release",
                signed=True,
                body={"session_id": session_id, "refuse": refuse},
            )
        )["invitation"]

    async def heartbeat(self, invitation_id: str) -> dict[str, Any]:
        """Host: still here, so the open invitation stays served. The answer carries the
        invitation and the registry's ``presence_timeout_seconds``."""
        return await self._call(
            "POST", f"/v1/invitations/{invitation_id}/heartbeat", signed=True, body={}
        )

    async def cancel(self, invitation_id: str) -> dict[str, Any]:
        return (
            await self._call(
                "POST", f"/v1/invitations/{invitation_id}/cancel", signed=True, body={}
            )
        )["invitation"]

    async def post_receipt(self, session_id: str, receipt: dict[str, Any]) -> dict[str, Any]:
        return (
            await self._call(
                "POST",
                f"/v1/sessions/{session_id}/receipts",
                signed=True,
                body={"receipt": receipt},
            )
        )["session"]

    async def post_group_receipt(
        self, table: str, close: dict[str, Any], receipts: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """A posted table's final head: its close entry and every seated member's receipt
        (the host's, or a member's whose host vanished); the logged facts."""
        return (
            await self._call(
                "POST",
                f"/v1/tables/{table}/receipts",
                signed=True,
                body={"close": close, "receipts": receipts},
            )
        )["table"]


def _check_ratings(answer: dict[str, Any], proven: Proven, agent_id: str) -> None:
    """Every served rating is the ``after`` of the agent's newest logged rating record, and
    every served table count the ``after`` of its newest logged group receipt."""
    for item in answer.get("items", []):
        if item.get("rating") is None:
            continue
        last = _last_rating_side(proven, agent_id, item.get("protocol_id"))
        if (last.get("after"), last.get("games")) != (item["rating"], item["games"]):
            raise unproven(
                f"the rating in {item.get('protocol_id')} is not the one its "
                "last rating record gives"
            )
    for item in answer.get("tables", []):
        counts = {k: item.get(k) for k in ("completed", "left", "timed_out")}
        if _last_table_counts(proven, agent_id, item.get("protocol_id")) != counts:
            raise unproven(
                f"the table counts in {item.get('protocol_id')} are not the ones its "
                "last group receipt record gives"
            )


def _last_rating_side(proven: Proven, agent_id: str, protocol_id: Any) -> dict[str, Any]:
    """The agent's side (host or guest) of its newest logged rating record in a protocol."""
    sides = [
        facts[k]
        for r in proven.records
        if r.get("kind") == "rating"
        for facts in [r.get("server") or {}]
        for k in ("host", "guest")
        if facts.get("protocol_id") == protocol_id
        and isinstance(facts.get(k), dict)
        and facts[k].get("agent_id") == agent_id
    ]
    return max(sides, key=lambda side: side.get("games", 0), default={})


def _last_table_counts(proven: Proven, agent_id: str, protocol_id: Any) -> dict[str, Any] | None:
    """The ``after`` counts of the agent's seat in its newest logged group receipt."""
    afters: list[dict[str, Any]] = [
        seat["after"]
        for r in proven.records
        if r.get("kind") == "group_receipt"
        for facts in [r.get("server") or {}]
        if facts.get("protocol_id") == protocol_id
        for seat in facts.get("seats") or []
        if isinstance(seat, dict) and seat.get("agent_id") == agent_id
        and isinstance(seat.get("after"), dict)
    ]
    return max(afters, key=lambda after: sum(v for v in after.values() if isinstance(v, int)),
               default=None)
