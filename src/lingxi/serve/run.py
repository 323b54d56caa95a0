"""Run a served protocol on uvicorn: bind the address, announce it, serve until stopped.

The socket is bound here, before uvicorn starts, so port 0 works (the real
port is known before the announcement) and a port in use is one coded error
(``serve.port_unavailable``) instead of a log line. uvicorn's own logging is
silenced: the operator sees the announcement and one line per request from
:mod:`lingxi.serve.app`, and SIGINT/SIGTERM stop it gracefully.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections.abc import Callable
from typing import Any

from lingxi.serve.errors import ServeError

_ADDRESS = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9.-]+)):(?P<port>\d{1,5})")
_SHUTDOWN_GRACE = 5


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[V6]:PORT`` → ``(host, port)``; ``serve.bad_address`` otherwise."""
    match = _ADDRESS.fullmatch(text.strip())
    port = int(match["port"]) if match else -1
    if match is None or not 0 <= port <= 65535:
        raise ServeError("serve.bad_address",
                         f"--http takes HOST:PORT (e.g. 127.0.0.1:8088), not {text[:80]!r}")
    return (match["v6"] or match["host"]), port


def url_for(host: str, port: int) -> str:
    """The URL callers POST to for a bound ``host:port``."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port); ``serve.port_unavailable``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ServeError("serve.bad_address", f"cannot resolve {host}: {error}") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(infos[0][4])
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise ServeError("serve.port_unavailable",
                         f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.setblocking(False)
    return sock


def _quiet_uvicorn() -> None:
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = [logging.NullHandler()]
        logger.propagate = False


async def _serve(app: Any, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    import uvicorn

    config = uvicorn.Config(app, lifespan="off", log_config=None, log_level="warning",
                            access_log=False, server_header=False, http="h11", ws="none",
                            timeout_keep_alive=5, h11_max_incomplete_event_size=16 * 1024,
                            timeout_graceful_shutdown=_SHUTDOWN_GRACE)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        on_ready()
    await task


def serve_forever(app: Any, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    """Serve ``app`` on ``sock`` until SIGINT/SIGTERM; ``on_ready()`` once it accepts."""
    _quiet_uvicorn()
    try:
        asyncio.run(_serve(app, sock, on_ready))
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
