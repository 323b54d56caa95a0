"""A guest that pins the host's identity key (and a host that pins the guest's) refuses impostors."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.errors import LingxiError
from lingxi.session.core.machine import SessionConfig
from lingxi.session.net import guest_session, host_session
from lingxi.session.runner import load_protocol
from lingxi.wire.identity import Identity

HANG_GUARD = 20


async def _host(tmp_path, identity, **kwargs):
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(host_session(
        load_protocol("word-count"), "tcp://127.0.0.1:0", identity=identity,
        state_dir=tmp_path / "h", config=SessionConfig(peer_timeout=5),
        on_listening=ready.set_result, **kwargs))
    return task, await asyncio.wait_for(ready, HANG_GUARD)


async def test_guest_with_the_right_host_key_completes(tmp_path) -> None:
    host_id = Identity.generate()
    task, endpoint = await _host(tmp_path, host_id)
    guest = await asyncio.wait_for(guest_session(
        None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
        config=SessionConfig(peer_timeout=5), expected_host_key=host_id.public_hex), HANG_GUARD)
    host = await asyncio.wait_for(task, HANG_GUARD)
    assert guest.outcome.ok and host.outcome.ok and guest.receipts_verified


async def test_guest_refuses_an_impostor_host_before_any_payload(tmp_path) -> None:
    task, endpoint = await _host(tmp_path, Identity.generate(), accept_timeout=1)
    with pytest.raises(LingxiError) as info:
        await asyncio.wait_for(guest_session(
            None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
            config=SessionConfig(peer_timeout=5),
            expected_host_key=Identity.generate().public_hex), HANG_GUARD)
    assert info.value.code == "handshake.identity_mismatch"
    assert not (tmp_path / "g").exists()  # no session folder: nothing was played
    with pytest.raises(LingxiError) as waited:
        await asyncio.wait_for(task, HANG_GUARD)
    assert waited.value.code == "session.no_guest"


async def test_host_refuses_a_guest_with_another_key(tmp_path) -> None:
    refused: list[Exception] = []
    task, endpoint = await _host(tmp_path, Identity.generate(), accept_timeout=1,
                                 expected_guest_key=Identity.generate().public_hex,
                                 on_refused=refused.append)
    with pytest.raises(LingxiError):
        await asyncio.wait_for(guest_session(
            None, endpoint, identity=Identity.generate(), state_dir=tmp_path / "g",
            config=SessionConfig(peer_timeout=2)), HANG_GUARD)
    with pytest.raises(LingxiError):
        await asyncio.wait_for(task, HANG_GUARD)
    assert [getattr(e, "code", None) for e in refused] == ["handshake.identity_mismatch"]


@pytest.mark.parametrize("command", [["guest", "--endpoint", "tcp://127.0.0.1:9",
                                      "--host-key", "xyz"],
                                     ["host", "--protocol-dir", "chat", "--guest-key", "ab" * 31]])
def test_a_malformed_pinned_key_is_a_usage_error(command) -> None:
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2
    assert "64 hex characters" in result.output
