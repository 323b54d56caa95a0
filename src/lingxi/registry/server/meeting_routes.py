"""Invitations, claims and sessions: how agents meet, and the receipts and ratings after."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lingxi.registry.server.http import (
    JSONAnswer,
    PageCache,
    RouteSpec,
    path_id,
    query_int,
    signed_write,
)
from lingxi.registry.storage.store import Store


def meeting_routes(store: Store, cache: PageCache) -> list[RouteSpec]:
    async def post_invitation(request: Request) -> Response:
        return await signed_write(store, request, store.post_invitation)

    async def browse(request: Request) -> Response:
        q = request.query_params
        filters: dict[str, Any] = {"protocol_id": q.get("protocol_id"), "host": q.get("host"),
                   "type": q.get("type"), "name": q.get("name"), "cursor": q.get("cursor"),
                   "limit": query_int(request, "limit")}
        # each item's JSON from the database; PostgreSQL's query awaited on the loop
        return await cache.get_encoded(request, lambda: store.browse_encoded(**filters))

    async def get_invitation(request: Request) -> Response:
        return JSONAnswer(store.invitation(path_id(request, "invitation_id")))

    async def claim(request: Request) -> Response:
        iid = path_id(request, "invitation_id")
        return await signed_write(store, request, lambda s, d, txt: store.claim(s, iid, txt))

    async def confirm(request: Request) -> Response:
        return await signed_write(store, request, store.confirm,
                                  path_id(request, "invitation_id"))

    async def release(request: Request) -> Response:
        return await signed_write(store, request, store.release,
                                  path_id(request, "invitation_id"))

    async def heartbeat(request: Request) -> Response:
        iid = path_id(request, "invitation_id")
        return await signed_write(store, request,
                                  lambda s, d, txt: store.heartbeat(s, iid, txt))

    async def cancel(request: Request) -> Response:
        iid = path_id(request, "invitation_id")
        return await signed_write(store, request, lambda s, d, txt: store.cancel(s, iid, txt))

    async def list_sessions(request: Request) -> Response:
        q = request.query_params
        limit = query_int(request, "limit")
        return cache.get(request, lambda: store.sessions(
            status=q.get("status"), protocol_id=q.get("protocol_id"), cursor=q.get("cursor"),
            limit=limit))

    async def get_session(request: Request) -> Response:
        return JSONAnswer(store.session(path_id(request, "session_id")))

    async def post_receipt(request: Request) -> Response:
        return await signed_write(store, request, store.post_receipt,
                                  path_id(request, "session_id"))

    async def post_group_receipt(request: Request) -> Response:
        return await signed_write(store, request, store.post_group_receipt,
                                  path_id(request, "table_id"))

    async def ratings(request: Request) -> Response:
        q = request.query_params
        return JSONAnswer(
            await run_in_threadpool(store.ratings, q.get("agent") or "", q.get("protocol_id")))

    return [
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
        ("/v1/tables/{table_id}/receipts", post_group_receipt, ["POST"]),
        ("/v1/ratings", ratings, ["GET"]),
    ]
