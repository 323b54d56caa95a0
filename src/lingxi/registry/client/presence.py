"""The host's heartbeats: an open invitation stays served only while its host sends them.

The registry withdraws an open invitation whose host it has not heard from
for its presence timeout (``/v1/info`` says how long); :class:`Heartbeat`
sends one every third of it, so one lost beat costs nothing. It stops by
itself when the registry says the invitation is no longer the host's to keep
(claimed for good, cancelled, withdrawn, gone) and keeps trying through
network errors: the timeout is what ends a host that really went away.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from lingxi.errors import LingxiError
from lingxi.registry.models.records import DEFAULT_PRESENCE_TIMEOUT

FINAL = (  # answers after which no later heartbeat can succeed
    "registry.invitation_closed",
    "registry.host_absent",
    "registry.not_host",
    "registry.invitation_not_found",
    "registry.no_route",  # an older registry: no heartbeat route, and no presence timeout
)


async def heartbeat_interval(client: Any) -> float:
    """A third of the registry's presence timeout (the default when it names none)."""
    try:
        timeout = (await client.info()).get("presence_timeout_seconds")
    except LingxiError:
        timeout = None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        timeout = DEFAULT_PRESENCE_TIMEOUT
    return float(timeout) / 3


class Heartbeat:
    """Heartbeats for one invitation, from :meth:`start` until :meth:`stop` or a final
    answer (kept in :attr:`ended`)."""

    def __init__(
        self,
        client: Any,
        invitation_id: str,
        interval: float,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client, self.invitation_id, self.interval = client, invitation_id, interval
        self._sleep = sleep  # injected by tests, so they need not wait
        self.sent = 0
        self.ended: LingxiError | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            await self._sleep(self.interval)
            try:
                await self.client.heartbeat(self.invitation_id)
                self.sent += 1
            except LingxiError as error:
                if error.code in FINAL:
                    self.ended = error
                    return
                wait = error.details.get("retry_after_seconds")
                if isinstance(wait, int) and wait > self.interval:  # rate-limited: wait more
                    await self._sleep(wait - self.interval)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
