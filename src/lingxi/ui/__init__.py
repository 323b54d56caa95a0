"""A person in the browser: a loopback web page and a small JSON/SSE API on a running
session (:class:`~lingxi.session.drivers.live.LiveSession`).

``start_ui(live, ui_dir)`` serves the protocol's ``ui/index.html`` (or a generic page)
and ``/api/state``, ``/api/events`` (SSE), ``/api/decide`` and ``/api/abort`` from the
session's own event loop; see docs/ui.md. Starlette and uvicorn are imported on first
use, so a session without ``--ui`` never loads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lingxi.errors import InputError

if TYPE_CHECKING:
    from lingxi.session.net import LiveSession
    from lingxi.ui.server import UiServer

__all__ = ["BUNDLE_META", "start_ui"]

# In a UI folder, the facts of a registry's bundle (bundle id, registry, publisher): written
# by `lingxi protocol fetch`, shown by the page's shell; a folder with it is served isolated.
BUNDLE_META = ".lingxi-bundle.json"


async def start_ui(live: LiveSession, ui_dir: Path | None, *, host: str = "127.0.0.1",
                   port: int = 0, page: str = "auto") -> UiServer:
    """Serve ``live`` on ``http://host:port/?token=…`` (loopback only) until ``close()``."""
    try:
        from lingxi.ui import server
    except ImportError as error:  # starlette/uvicorn are the [ui] extra
        raise InputError("ui.unavailable", "the browser UI needs starlette and uvicorn "
                         f"(pip install 'lingxi[ui]'): {error}") from None
    return await server.start_ui(live, ui_dir, host=host, port=port, page=page)
