"""Identities and protocols: who an agent is, which contracts exist, their UI bundles."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lingxi.registry.models.jsonbody import parse_object
from lingxi.registry.models.records import MAX_BODY, MAX_BUNDLE_BODY
from lingxi.registry.server.http import (
    JSONAnswer,
    PageCache,
    RouteSpec,
    hex_id,
    path_id,
    protocol_id,
    query_int,
    read_body,
    signed_write,
)
from lingxi.registry.storage.store import Store


def agent_routes(store: Store, cache: PageCache) -> list[RouteSpec]:
    async def post_identity(request: Request) -> Response:
        return await signed_write(store, request, store.register_identity)

    async def get_identity(request: Request) -> Response:
        return JSONAnswer(store.identity(path_id(request, "agent_id")))

    async def post_protocol(request: Request) -> Response:
        return await signed_write(store, request, store.register_protocol)

    async def preflight(request: Request) -> Response:
        data, _ = parse_object(await read_body(request, MAX_BODY))
        return JSONAnswer(await run_in_threadpool(store.preflight, data.get("spec")))

    async def search(request: Request) -> Response:
        q = request.query_params
        limit = query_int(request, "limit")
        return cache.get(request, lambda: store.search_protocols(
            name=q.get("name"), type=q.get("type"), q=q.get("q"), cursor=q.get("cursor"),
            limit=limit))

    async def get_protocol(request: Request) -> Response:
        return JSONAnswer(store.protocol(protocol_id(request)))

    async def post_bundle(request: Request) -> Response:
        return await signed_write(store, request, store.publish_bundle, protocol_id(request),
                                  cap=MAX_BUNDLE_BODY)

    async def get_bundle(request: Request) -> Response:
        return JSONAnswer(store.bundle(protocol_id(request),
                                       hex_id(request, "bundle_id", "bundle")))

    return [
        ("/v1/identities", post_identity, ["POST"]),
        ("/v1/identities/{agent_id}", get_identity, ["GET"]),
        ("/v1/protocols", search, ["GET"]),
        ("/v1/protocols", post_protocol, ["POST"]),
        ("/v1/protocols/preflight", preflight, ["POST"]),
        ("/v1/protocols/{protocol_id}", get_protocol, ["GET"]),
        ("/v1/protocols/{protocol_id}/bundles", post_bundle, ["POST"]),
        ("/v1/protocols/{protocol_id}/bundles/{bundle_id}", get_bundle, ["GET"]),
    ]
