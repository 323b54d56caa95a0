"""The registry's HTTP API on Starlette: versioned JSON under ``/v1``, docs, the page.

The routes live by topic (:mod:`.agent_routes`, :mod:`.meeting_routes`,
:mod:`.log_routes`, :mod:`.relay_routes`) on what they share (:mod:`.http`:
bounded bodies, signed requests, the list cache); this module assembles them,
adds the pages, the security headers and the Host check, and turns every
refusal into ``{"error": {"code", "message", …}}`` with a 4xx status. An
unexpected failure is a 500 with ``registry.internal`` and no traceback in the body.
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lingxi.errors import LingxiError
from lingxi.registry.errors import RegistryError
from lingxi.registry.server import pages
from lingxi.registry.server.agent_routes import agent_routes
from lingxi.registry.server.http import (
    Handler,
    JSONAnswer,
    PageCache,
    RouteSpec,
    error_answer,
    protocol_id,
)
from lingxi.registry.server.log_routes import log_routes
from lingxi.registry.server.meeting_routes import meeting_routes
from lingxi.registry.server.openapi import openapi_document
from lingxi.registry.server.relay_routes import relay_routes
from lingxi.registry.storage.store import Store

log = logging.getLogger("lingxi.registry")


def _page_routes(store: Store) -> list[RouteSpec]:
    """The read-only page, the docs, the OpenAPI document and the server's facts."""

    async def info(request: Request) -> Response:
        return JSONAnswer(store.info())

    async def openapi(request: Request) -> Response:
        return JSONAnswer(openapi_document())

    async def docs(request: Request) -> Response:
        return HTMLResponse(pages.docs_page())

    async def home(request: Request) -> Response:
        return HTMLResponse(pages.home_page(store))

    async def protocol_page(request: Request) -> Response:
        return HTMLResponse(pages.protocol_page(store, protocol_id(request)))

    return [
        ("/", home, ["GET"]),
        ("/protocols/{protocol_id}", protocol_page, ["GET"]),
        ("/docs", docs, ["GET"]),
        ("/openapi.json", openapi, ["GET"]),
        ("/v1/info", info, ["GET"]),
    ]


async def _on_registry_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RegistryError)
    return error_answer(error, error.status)


async def _on_lingxi_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, LingxiError)
    return error_answer(error, 422)


async def _on_http(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    code = {404: "registry.no_route", 405: "registry.method_not_allowed"}.get(
        error.status_code, "registry.http_error"
    )
    return JSONAnswer(
        {"error": {"code": code, "message": str(error.detail)}},
        status_code=error.status_code,
        headers=error.headers,
    )


def create_app(
    store: Store, *, cache_ttl: float = 1.0, allowed_hosts: tuple[str, ...] | None = None
) -> Starlette:
    """The Starlette app serving ``store``; list reads are cached for ``cache_ttl`` s; with
    ``allowed_hosts`` a request naming another Host is refused (``registry.bad_host``)."""
    cache = PageCache(store, cache_ttl)
    routes = [*_page_routes(store), *agent_routes(store, cache), *meeting_routes(store, cache),
              *log_routes(store), *relay_routes(store)]
    app = Starlette(
        routes=by_path(routes),
        middleware=[Middleware(Guard, allowed_hosts=allowed_hosts), Middleware(NoCrash)],
        exception_handlers={
            RegistryError: _on_registry_error,
            LingxiError: _on_lingxi_error,
            HTTPException: _on_http,
        },
    )
    app.state.store = store
    return app


def by_path(routes: list[RouteSpec]) -> list[Route]:
    """One Starlette route per path, dispatching on the method, so a 405 names every
    method the path has in its ``Allow`` header (HEAD comes with GET)."""
    table: dict[str, dict[str, Handler]] = {}
    for path, fn, methods in routes:
        for method in methods:
            table.setdefault(path, {})[method] = fn
    out = []
    for path, handlers in table.items():
        if "GET" in handlers:
            handlers.setdefault("HEAD", handlers["GET"])

        async def dispatch(
            request: Request,
            handlers: dict[str, Handler] = handlers,
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
                answer = JSONAnswer(
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
                await JSONAnswer(
                    {
                        "error": {
                            "code": "registry.internal",
                            "message": "the registry failed to answer; see its log",
                        }
                    },
                    status_code=500,
                )(scope, receive, send)
