"""Knowing cheaply whether the log may have grown since a list answer was computed.

A cached list answer is reused while nothing was written. Reading the log's size on
every request asks the database each time; on SQLite that is a local file read and
cheap, on PostgreSQL it is a round trip (and its parse and plan on the server) per
cached answer, which costs more than the answer. So on PostgreSQL a process counts
what it hears instead:

- its own writes: the count moves as soon as a write transaction commits, before its
  writer answers (a client reading through the same process sees its write at once);
- every other process's writes: each statement that moves the log head also sends
  ``NOTIFY lingxi_log`` (in the same transaction, so it is delivered at commit and only
  if the commit happens), and a thread here keeps a connection that ``LISTEN``\\ s and
  moves the count on each notification.

While that connection is not listening (not yet opened, lost, being reopened) the
token falls back to the log size read from the database, so a lost notification can
never hide a write; the count also moves whenever listening starts again, since
notifications may have been missed meanwhile. A token is only ever compared for
equality with an earlier one.
"""

from __future__ import annotations

import logging
import os
import select
import threading
from collections.abc import Callable, Hashable
from typing import Any

log = logging.getLogger("lingxi.registry")

CHANNEL = "lingxi_log"
RETRY_SECONDS = 1.0


class Changes:
    """The change token of one store: see the module's docstring."""

    def __init__(self, engine: Any, postgres: bool, read_size: Callable[[], int]) -> None:
        self.engine, self.postgres, self.read_size = engine, postgres, read_size
        self.count = 0  # moves on every commit of this process and every notification
        self.listening = False
        self._lock = threading.Lock()  # guards count and starting the thread
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe() if postgres else (-1, -1)

    def token(self) -> Hashable:
        """Equal to an earlier token only if no write committed in between (as far as
        this process can know without asking: otherwise it asks)."""
        if self.postgres:
            if self.listening:
                return ("heard", self.count)
            self._start()
        return ("size", self.read_size())

    def committed(self) -> None:
        """A write transaction of this process committed."""
        self._bump()

    def _bump(self) -> None:
        with self._lock:
            self.count += 1

    def close(self) -> None:
        if not self.postgres or self._stop.is_set():
            return
        self._stop.set()
        self.listening = False
        os.write(self._wake_w, b"x")
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5)
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="lingxi-log-listen",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except Exception as error:  # noqa: BLE001 - any failure: fall back, then retry
                if not self._stop.is_set():
                    log.warning("registry: not listening for log changes (%s); the cache "
                                "reads the log size until it listens again",
                                str(error).splitlines()[0] if str(error) else type(error).__name__)
            finally:
                self.listening = False
            self._stop.wait(RETRY_SECONDS)

    def _listen(self) -> None:
        raw = self.engine.raw_connection()
        try:
            pg = raw.driver_connection
            pg.autocommit = True
            pg.execute(f"LISTEN {CHANNEL}")
            # writes committed before LISTEN sent no notification this connection saw
            self._bump()
            self.listening = True
            fd = pg.fileno()
            while not self._stop.is_set():
                ready, _, _ = select.select([fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                for _ in pg.notifies(timeout=0):  # read what arrived (raises if the link broke)
                    pass
                self._bump()
        finally:
            self.listening = False
            raw.invalidate()
