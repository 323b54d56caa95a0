"""The HTTP edge of a served protocol: one Starlette app, one URL.

``POST /`` with ``Content-Type: application/json`` and one envelope as the
body is answered by :meth:`lingxi.serve.service.Service.answer` (run in the
thread pool, so slow hooks do not stall other callers). ``GET /`` says who
to address and what is served. Before the service sees a byte, the body is
capped: a ``Content-Length`` over the cap is refused unread, a body that
grows past it while streaming is refused at that point, and the whole body
must arrive within ``body_seconds`` (a caller trickling bytes holds a
connection at most that long). Every refusal, including unknown paths and
methods, is ``{"ok": false, "error": {"code", "message"}}`` with a 4xx; a
bug in the server is ``caller.internal`` with a 500 and no traceback in the
body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from lingxi.serve import errors as codes
from lingxi.serve.errors import CallerRefused
from lingxi.serve.limits import DEFAULT_BODY_SECONDS, DEFAULT_MAX_BODY
from lingxi.serve.service import Answer, Service, refusal
from lingxi.textsafe import terminal_safe

log = logging.getLogger("lingxi.serve")
_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def _response(answer: Answer) -> Response:
    return Response(answer.body, status_code=answer.status, media_type="application/json",
                    headers={**_HEADERS, **answer.headers})


def _refuse(code: str, message: str, **headers: str) -> Response:
    answer = refusal(code, message)
    return Response(answer.body, status_code=answer.status, media_type="application/json",
                    headers={**_HEADERS, **answer.headers, **headers})


async def read_body(request: Request, cap: int, seconds: float) -> bytes:
    """The whole body, at most ``cap`` bytes, within ``seconds``; CallerRefused otherwise."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise CallerRefused(codes.BODY_TOO_LARGE, f"the body is over {cap} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise CallerRefused(codes.BODY_TOO_LARGE, f"the body is over {cap} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise CallerRefused(codes.TIMEOUT, f"the body did not arrive within {seconds:g} s"
                            ) from None
    return b"".join(chunks)


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def create_app(service: Service, *, max_body: int = DEFAULT_MAX_BODY,
               body_seconds: float = DEFAULT_BODY_SECONDS,
               on_answer: Callable[[str], None] | None = None) -> Starlette:
    """The app serving ``service``; ``on_answer`` gets one terminal-safe line per request."""

    def note(request: Request, line: str, status: int) -> None:
        if on_answer is not None:
            peer = request.client.host if request.client else "?"
            on_answer(terminal_safe(f"{peer} {status} {line}", 400))

    async def root(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):
            info = json.dumps(service.describe(), ensure_ascii=True, separators=(",", ":"))
            return Response(info, media_type="application/json", headers=_HEADERS)
        if request.method != "POST":
            note(request, f"refused: {codes.BAD_METHOD}: {request.method}", 405)
            return _refuse(codes.BAD_METHOD, f"{request.method} is not served here; POST one "
                           "signed caller: envelope as JSON", Allow="GET, HEAD, POST")
        if not _is_json(request.headers.get("content-type", "")):
            note(request, f"refused: {codes.BAD_CONTENT_TYPE}", 415)
            return _refuse(codes.BAD_CONTENT_TYPE,
                           "send the envelope with Content-Type: application/json")
        try:
            body = await read_body(request, max_body, body_seconds)
        except CallerRefused as error:
            note(request, f"refused: {error.code}", error.status)
            return _refuse(error.code, error.message, Connection="close")
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is left to read it
        answer = await run_in_threadpool(service.answer, body)
        note(request, answer.log, answer.status)
        return _response(answer)

    async def on_http_error(request: Request, error: Exception) -> Response:
        status = getattr(error, "status_code", 404)
        if status == 405:
            return _refuse(codes.BAD_METHOD, "method not allowed", Allow="GET, HEAD, POST")
        return _refuse(codes.NOT_FOUND, "nothing is served here; POST to /")

    async def on_bug(request: Request, error: Exception) -> Response:
        log.error("unexpected %s while answering a caller: %s", type(error).__name__,
                  terminal_safe(error, 300))
        return Response(json.dumps({"ok": False, "error": {
            "code": codes.INTERNAL, "message": "the server failed (a bug); see its log"}}),
            status_code=500, media_type="application/json", headers=_HEADERS)

    handlers: dict[Any, Callable[[Request, Exception], Any]] = {
        HTTPException: on_http_error, Exception: on_bug}
    return Starlette(routes=[Route("/", root, methods=_METHODS)],
                     exception_handlers=handlers)
