"""The registry's HTTP API on Starlette: versioned JSON under ``/v1``, docs, the page.

Bodies are read with a hard cap before anything parses them; mutating routes
check the request signature (headers in :mod:`lingxi.registry.models.signing`)
and run their database transaction in the thread pool so the event loop keeps
serving reads. Every refusal is ``{"error": {"code", "message", …}}`` with a
4xx status; an unexpected failure is a 500 with ``registry.internal`` and no
traceback in the body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lingxi.errors import LingxiError
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.jsonbody import parse_object
from lingxi.registry.models.records import MAX_BODY, MAX_BUNDLE_BODY, RECORD_ID
from lingxi.registry.models.signing import parse_signed
from lingxi.registry.server import pages
from lingxi.registry.server.openapi import openapi_document
from lingxi.registry.storage.store import Store

log = logging.getLogger("lingxi.registry")


class _JSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _error(error: LingxiError, status: int) -> _JSON:
    wait = error.details.get("retry_after_seconds")  # registry.rate_limited says how long
    headers = {"retry-after": str(wait)} if status == 429 and isinstance(wait, int) else None
    return _JSON({"error": error.to_dict()}, status_code=status, headers=headers)


async def _read_body(request: Request, cap: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise RegistryError("registry.body_too_large", f"the body is over {cap} bytes", status=413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise RegistryError(
                "registry.body_too_large", f"the body is over {cap} bytes", status=413
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(body: bytes) -> tuple[dict[str, Any], str]:
    return parse_object(body)


def _signed_path(request: Request) -> str:
    path = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string") or b""
    text = path.decode("latin-1")
    return text + ("?" + query.decode("latin-1") if query else "")


def _int(request: Request, name: str, default: int | None = None) -> int | None:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    if not value.isdigit() or len(value) > 12:
        raise RegistryError("registry.bad_request", f"{name} must be a non-negative integer")
    return int(value)


def _path_id(request: Request, name: str) -> str:
    value = request.path_params[name]
    if not RECORD_ID.match(value):
        raise RegistryError(
            f"registry.{name.removesuffix('_id')}_not_found",
            f"no {name.removesuffix('_id')} {value[:80]!r}",
            status=404,
        )
    return value


class PageCache:
    """Encoded answers of list reads, reused while no write happened anywhere.

    An entry holds the log size it was computed at and is reused only while
    the log has that size (one indexed one-row read, seen by every process on
    the database) and for at most ``ttl`` seconds, which bounds how late a
    purely time-driven change (an invitation expiring, a claim lapsing)
    shows in a list. Writes show at once.
    """

    def __init__(self, store: Store, ttl: float = 1.0, size: int = 512) -> None:
        self.store, self.ttl, self.size = store, ttl, size
        self._entries: dict[str, tuple[int, float, bytes]] = {}

    def get(self, request: Request, compute: Callable[[], dict[str, Any]]) -> Response:
        key = request.url.path + "?" + request.url.query
        version = self.store.version()
        now = self.store.clock()
        hit = self._entries.get(key)
        if hit is not None and hit[0] == version and hit[1] > now:
            return Response(hit[2], media_type="application/json")
        body = bytes(_JSON(compute()).body)
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key] = (version, now + self.ttl, body)
        return Response(body, media_type="application/json")


def create_app(
    store: Store, *, cache_ttl: float = 1.0, allowed_hosts: tuple[str, ...] | None = None
) -> Starlette:
    """The Starlette app serving ``store``; list reads are cached for ``cache_ttl`` s; with
    ``allowed_hosts`` a request naming another Host is refused (``registry.bad_host``)."""
    cache = PageCache(store, cache_ttl)

    async def signed_write(
        request: Request, action: Callable[..., dict[str, Any]], *args: Any, cap: int = MAX_BODY
    ) -> Response:
        body = await _read_body(request, cap)
        data, text = _parse(body)  # bounded before anything else looks at the body
        signed = parse_signed(
            request.headers,
            request.method,
            _signed_path(request),
            body,
            now=store.clock(),
            window=store.window,
        )
        key = request.headers.get("idempotency-key")
        result = await run_in_threadpool(store.idempotent(key, action), signed, *args, data, text)
        return _JSON(result, status_code=201 if result.get("created") else 200)

    async def info(request: Request) -> Response:
        return _JSON(store.info())

    async def post_identity(request: Request) -> Response:
        return await signed_write(request, store.register_identity)

    async def get_identity(request: Request) -> Response:
        return _JSON(store.identity(_path_id(request, "agent_id")))

    async def post_protocol(request: Request) -> Response:
        return await signed_write(request, store.register_protocol)

    async def preflight(request: Request) -> Response:
        data, _ = _parse(await _read_body(request, MAX_BODY))
        return _JSON(await run_in_threadpool(store.preflight, data.get("spec")))

    async def search(request: Request) -> Response:
        q = request.query_params
        limit = _int(request, "limit")
        return cache.get(
            request,
            lambda: store.search_protocols(
                name=q.get("name"),
                type=q.get("type"),
                q=q.get("q"),
                cursor=q.get("cursor"),
                limit=limit,
            ),
        )

    async def get_protocol(request: Request) -> Response:
        return _JSON(store.protocol(_protocol_id(request)))

    async def post_bundle(request: Request) -> Response:
        return await signed_write(
            request, store.publish_bundle, _protocol_id(request), cap=MAX_BUNDLE_BODY
        )

    async def get_bundle(request: Request) -> Response:
        return _JSON(store.bundle(_protocol_id(request), _hex_id(request, "bundle_id", "bundle")))

    async def post_invitation(request: Request) -> Response:
        return await signed_write(request, store.post_invitation)

    async def browse(request: Request) -> Response:
        q = request.query_params
        limit = _int(request, "limit")
        return cache.get(
            request,
            lambda: store.browse(
                protocol_id=q.get("protocol_id"),
                host=q.get("host"),
                type=q.get("type"),
                name=q.get("name"),
                cursor=q.get("cursor"),
                limit=limit,
            ),
        )

    async def get_invitation(request: Request) -> Response:
        return _JSON(store.invitation(_path_id(request, "invitation_id")))

    async def claim(request: Request) -> Response:
        iid = _path_id(request, "invitation_id")
        return await signed_write(request, lambda s, d, txt: store.claim(s, iid, txt))

    async def confirm(request: Request) -> Response:
        return await signed_write(request, store.confirm, _path_id(request, "invitation_id"))

    async def release(request: Request) -> Response:
        return await signed_write(request, store.release, _path_id(request, "invitation_id"))

    async def heartbeat(request: Request) -> Response:
        iid = _path_id(request, "invitation_id")
        return await signed_write(request, lambda s, d, txt: store.heartbeat(s, iid, txt))

    async def cancel(request: Request) -> Response:
        iid = _path_id(request, "invitation_id")
        return await signed_write(request, lambda s, d, txt: store.cancel(s, iid, txt))

    async def list_sessions(request: Request) -> Response:
        q = request.query_params
        limit = _int(request, "limit")
        return cache.get(
            request,
            lambda: store.sessions(
                status=q.get("status"),
                protocol_id=q.get("protocol_id"),
                cursor=q.get("cursor"),
                limit=limit,
            ),
        )

    async def get_session(request: Request) -> Response:
        return _JSON(store.session(_path_id(request, "session_id")))

    async def post_receipt(request: Request) -> Response:
        return await signed_write(request, store.post_receipt, _path_id(request, "session_id"))

    async def ratings(request: Request) -> Response:
        q = request.query_params
        return _JSON(
            await run_in_threadpool(store.ratings, q.get("agent") or "", q.get("protocol_id"))
        )

    async def log_head(request: Request) -> Response:
        return _JSON(await run_in_threadpool(store.head))

    async def log_checkpoint(request: Request) -> Response:
        head = await run_in_threadpool(store.head)
        return Response(head["checkpoint"], media_type="text/plain; charset=utf-8")

    async def log_entries(request: Request) -> Response:
        records = request.query_params.get("records") in ("1", "true")
        return _JSON(
            await run_in_threadpool(
                lambda: store.log_entries(
                    _int(request, "after", 0) or 0,
                    _int(request, "limit", 1000) or 1000,
                    records=records,
                )
            )
        )

    async def inclusion(request: Request) -> Response:
        seq, size = _int(request, "seq"), _int(request, "size")
        if seq is None or size is None:
            raise RegistryError("registry.bad_request", "seq and size are required")
        return _JSON(await run_in_threadpool(store.inclusion_proof, seq, size))

    async def consistency(request: Request) -> Response:
        old, new = _int(request, "from"), _int(request, "to")
        if old is None or new is None:
            raise RegistryError("registry.bad_request", "from and to are required")
        return _JSON(await run_in_threadpool(store.consistency_proof, old, new))

    async def log_record(request: Request) -> Response:
        seq = request.path_params["seq"]
        if not seq.isdigit() or len(seq) > 12:
            raise RegistryError("registry.log_entry_not_found", "no such log entry", status=404)
        return _JSON(store.log_record(int(seq)))

    async def openapi(request: Request) -> Response:
        return _JSON(openapi_document())

    async def docs(request: Request) -> Response:
        return HTMLResponse(pages.docs_page())

    async def home(request: Request) -> Response:
        return HTMLResponse(pages.home_page(store))

    async def protocol_page(request: Request) -> Response:
        return HTMLResponse(pages.protocol_page(store, _protocol_id(request)))

    async def on_registry_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, RegistryError)
        return _error(error, error.status)

    async def on_lingxi_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, LingxiError)
        return _error(error, 422)

    async def on_http(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        code = {404: "registry.no_route", 405: "registry.method_not_allowed"}.get(
            error.status_code, "registry.http_error"
        )
        return _JSON(
            {"error": {"code": code, "message": str(error.detail)}},
            status_code=error.status_code,
            headers=error.headers,
        )

    handler = Callable[[Request], Awaitable[Response]]
    routes: list[tuple[str, handler, list[str]]] = [
        ("/", home, ["GET"]),
        ("/protocols/{protocol_id}", protocol_page, ["GET"]),
        ("/docs", docs, ["GET"]),
        ("/openapi.json", openapi, ["GET"]),
        ("/v1/info", info, ["GET"]),
        ("/v1/identities", post_identity, ["POST"]),
        ("/v1/identities/{agent_id}", get_identity, ["GET"]),
        ("/v1/protocols", search, ["GET"]),
        ("/v1/protocols", post_protocol, ["POST"]),
        ("/v1/protocols/preflight", preflight, ["POST"]),
        ("/v1/protocols/{protocol_id}", get_protocol, ["GET"]),
        ("/v1/protocols/{protocol_id}/bundles", post_bundle, ["POST"]),
        ("/v1/protocols/{protocol_id}/bundles/{bundle_id}", get_bundle, ["GET"]),
        ("/v1/invitations", browse, ["GET"]),
        ("/v1/invitations", post_invitation, ["POST"]),
        ("/v1/invitations/{invitation_id}", get_invitation, ["GET"]),
        ("/v1/invitations/{invitation_id}/claim", claim, ["POST"]),
        ("/v1/invitations/{invitation_id}/confirm", confirm, ["POST"]),
        ("/v1/invitations/{invitation_id}/cancel", cancel, ["POST"]),
        ("/v1/invitations/{invitation_id}/release", release, ["POST"]),
        ("/v1/invitations/{invitation_id}/heartbeat", heartbeat, ["POST"]),
        ("/v1/sessions", list_sessions, ["GET"]),
        ("/v1/sessions/{session_id}", get_session, ["GET"]),
        ("/v1/sessions/{session_id}/receipts", post_receipt, ["POST"]),
        ("/v1/ratings", ratings, ["GET"]),
        ("/v1/log/head", log_head, ["GET"]),
        ("/v1/log/checkpoint", log_checkpoint, ["GET"]),
        ("/v1/log/proof/inclusion", inclusion, ["GET"]),
        ("/v1/log/proof/consistency", consistency, ["GET"]),
        ("/v1/log", log_entries, ["GET"]),
        ("/v1/log/{seq}", log_record, ["GET"]),
    ]
    from lingxi.registry.server.relay_routes import relay_routes

    routes += relay_routes(store, _read_body, _parse, _signed_path)
    app = Starlette(
        routes=by_path(routes),
        middleware=[Middleware(Guard, allowed_hosts=allowed_hosts), Middleware(NoCrash)],
        exception_handlers={
            RegistryError: on_registry_error,
            LingxiError: on_lingxi_error,
            HTTPException: on_http,
        },
    )
    app.state.store = store
    return app


def by_path(
    routes: list[tuple[str, Callable[[Request], Awaitable[Response]], list[str]]],
) -> list[Route]:
    """One Starlette route per path, dispatching on the method, so a 405 names every
    method the path has in its ``Allow`` header (HEAD comes with GET)."""
    table: dict[str, dict[str, Callable[[Request], Awaitable[Response]]]] = {}
    for path, fn, methods in routes:
        for method in methods:
            table.setdefault(path, {})[method] = fn
    out = []
    for path, handlers in table.items():
        if "GET" in handlers:
            handlers.setdefault("HEAD", handlers["GET"])

        async def dispatch(
            request: Request,
            handlers: dict[str, Callable[[Request], Awaitable[Response]]] = handlers,
        ) -> Response:
            return await handlers[request.method](request)

        out.append(Route(path, dispatch, methods=sorted(handlers)))
    return out


SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", pages.CSP.encode()),
]


class Guard:
    """Security headers on every answer, and the Host check (DNS rebinding) when the
    server knows its names: a page the browser fetched under another name is refused."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...] | None = None) -> None:
        self.app, self.allowed = app, allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.allowed is not None:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name.strip("[]").lower() not in self.allowed:
                answer = _JSON(
                    {
                        "error": {
                            "code": "registry.bad_host",
                            "message": "this registry does not answer to that host name",
                        }
                    },
                    status_code=400,
                )
                await answer(scope, receive, send)
                return

        async def add_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, add_headers)


class NoCrash:
    """Answer an unexpected failure with a 500 ``registry.internal`` and swallow it.

    Starlette's own last-resort handler re-raises after answering, and the
    server then closes the keep-alive connection under the client's next
    request; here the exception is logged once and the connection stays usable.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            log.exception("registry request failed: %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _JSON(
                    {
                        "error": {
                            "code": "registry.internal",
                            "message": "the registry failed to answer; see its log",
                        }
                    },
                    status_code=500,
                )(scope, receive, send)


def _hex_id(request: Request, name: str, what: str) -> str:
    value = request.path_params[name]
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise RegistryError(f"registry.{what}_not_found", f"no {what} {value[:80]!r}", status=404)
    return value


def _protocol_id(request: Request) -> str:
    return _hex_id(request, "protocol_id", "protocol")
