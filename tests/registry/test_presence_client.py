"""The host's heartbeat loop: every third of the registry's timeout, through network errors,
longer when rate-limited, and it stops for good at an answer no later beat can change."""

from __future__ import annotations

import asyncio

import pytest

from lingxi.registry.client import presence
from lingxi.registry.client.presence import Heartbeat, heartbeat_interval
from lingxi.registry.errors import RegistryError


class FakeRegistry:
    def __init__(self, answers=(), info=None) -> None:
        self.answers, self.calls, self._info = list(answers), [], info

    async def heartbeat(self, invitation_id):
        self.calls.append(invitation_id)
        answer = self.answers.pop(0) if self.answers else {"invitation": {}}
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def info(self):
        if isinstance(self._info, Exception):
            raise self._info
        return self._info or {}


class Sleeps(list):
    """Every sleep the loop asks for, answered at once (no waiting in the tests)."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def _error(code, **details):
    return RegistryError(code, "x", status=409, details=details or None)


async def test_it_beats_through_errors_and_stops_at_a_final_answer(sleeps):
    registry = FakeRegistry([{}, _error("registry.unreachable"), _error("registry.internal"),
                             {}, _error("registry.invitation_closed"), {}])
    beat = Heartbeat(registry, "inv-1", 20.0, sleep=sleeps)
    beat.start()
    await asyncio.wait_for(beat._task, 10)
    assert registry.calls == ["inv-1"] * 5 and beat.sent == 2
    assert beat.ended is not None and beat.ended.code == "registry.invitation_closed"
    assert sleeps == [20.0] * 5
    await beat.stop()  # stopping an ended loop is fine


@pytest.mark.parametrize("code", presence.FINAL)
async def test_every_final_answer_ends_it(sleeps, code):
    beat = Heartbeat(FakeRegistry([_error(code)]), "inv-1", 5.0, sleep=sleeps)
    beat.start()
    await asyncio.wait_for(beat._task, 10)
    assert beat.ended.code == code


async def test_rate_limited_it_waits_as_long_as_told(sleeps):
    registry = FakeRegistry([_error("registry.rate_limited", retry_after_seconds=50),
                             _error("registry.rate_limited", retry_after_seconds=3),
                             _error("registry.host_absent")])
    beat = Heartbeat(registry, "inv-1", 10.0, sleep=sleeps)
    beat.start()
    await asyncio.wait_for(beat._task, 10)
    assert sleeps == [10.0, 40.0, 10.0, 10.0]  # 50 s in all after the first; 3 s < interval


async def test_stop_cancels_a_waiting_loop():
    gate = asyncio.Event()

    async def forever(seconds: float) -> None:
        await gate.wait()

    registry = FakeRegistry()
    beat = Heartbeat(registry, "inv-1", 10.0, sleep=forever)
    beat.start()
    await asyncio.sleep(0)
    await beat.stop()
    assert registry.calls == [] and beat.ended is None and beat._task is None


@pytest.mark.parametrize("info,interval", [
    ({"presence_timeout_seconds": 30}, 10.0),
    ({"presence_timeout_seconds": 4.5}, 1.5),
    ({}, 20.0),  # an older registry: the default 60 s
    ({"presence_timeout_seconds": True}, 20.0),
    ({"presence_timeout_seconds": -3}, 20.0),
    ({"presence_timeout_seconds": "60"}, 20.0),
    (RegistryError("registry.unreachable", "x", status=503), 20.0),
])
async def test_the_interval_is_a_third_of_what_the_registry_says(info, interval):
    assert await heartbeat_interval(FakeRegistry(info=info)) == interval
