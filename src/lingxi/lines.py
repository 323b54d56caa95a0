"""Lines from the person at this terminal (stdin, or a file such as /dev/tty), read
by one thread for the whole run and handed to the event loop.

``os.read`` rather than the buffered ``sys.stdin``: a thread blocked in a
buffered read makes the interpreter abort at exit when a session ends while
the person is still typing. Both the free-mode ``--input -`` of a session and
the terminal decider read through :class:`LineReader`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from typing import Any

LINE_BYTES = 65536  # one line at most; a longer one is cut into pieces


def read_lines(fd: int) -> Any:
    """Lines (bytes) read from ``fd`` with ``os.read``: unlike a buffered reader, a thread
    blocked here cannot stop the interpreter from exiting once the session is over."""
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from complete
        while len(pending) > LINE_BYTES:  # no newline in sight: a line is bounded anyway
            yield pending[:LINE_BYTES]
            pending = pending[LINE_BYTES:]
    if pending:
        yield pending


class LineReader:
    """One reader thread for a whole run, feeding lines (``None`` at the end) to the loop."""

    def __init__(self, source: str | None = None) -> None:
        self.source = source  # a path, or None for stdin
        self.queue: asyncio.Queue[str | None] | None = None
        self.ended = False
        self.interactive = False

    def start(self) -> asyncio.Queue[str | None]:
        if self.queue is not None:
            return self.queue
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.queue = queue
        fd: int | None = None
        if self.source is None:
            try:
                fd = sys.stdin.fileno()
                self.interactive = os.isatty(fd)
            except (AttributeError, ValueError, OSError):  # an in-memory stdin (tests)
                fd = None

        def put(line: str | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, line)

        def pump() -> None:
            opened = None
            try:
                if self.source is not None:
                    opened = os.open(self.source, os.O_RDONLY)
                    self.interactive = os.isatty(opened)
                where = opened if opened is not None else fd
                lines = read_lines(where) if where is not None else \
                    (raw for raw in getattr(sys.stdin, "buffer", sys.stdin))
                for raw in lines:
                    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
                    put(text.rstrip("\r\n"))
            except RuntimeError:  # the loop is closed: the run is over
                return
            except (OSError, ValueError):  # unreadable input ends it like end of file
                pass
            finally:
                if opened is not None:
                    os.close(opened)
            with contextlib.suppress(RuntimeError):
                put(None)

        threading.Thread(target=pump, name="lingxi-terminal", daemon=True).start()
        return queue

    async def line(self) -> str | None:
        if self.ended:
            return None
        line = await self.start().get()
        if line is None:
            self.ended = True
        return line

    def discard_typed_ahead(self) -> None:
        """At a terminal, lines typed while nothing was asked do not answer the next point
        (a pipe's lines are answers written ahead, and are kept)."""
        if self.queue is None or not self.interactive:
            return
        while not self.queue.empty():
            if self.queue.get_nowait() is None:
                self.ended = True
