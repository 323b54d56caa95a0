"""Meeting through the registry: ``lingxi host --post`` and ``lingxi join``.

The registry only introduces the peers; the session itself runs peer to
peer. The host posts a signed invitation once it listens, accepts only a
guest whose hello carries a registry ticket for that invitation (checked
against the registry's key, single use, bound to the guest's proven key),
confirms the claim, plays, posts its signed receipt and withdraws the
invitation when it exits. Both sides sign the registry checkpoint they were shown
into the session's opening and check the peer's against their own view at the end,
so two agents shown different forks of the log notice (and keep the evidence); while it waits it sends the registry heartbeats, so
a host that dies without withdrawing (SIGKILL) stops being served within the
registry's presence timeout. The guest fetches the spec when it lacks it (the
id re-checked; hooks are never fetched: a skeleton is written and the join
stops), claims the invitation, checks the host's identity key against the
invitation in the handshake, plays, and posts its receipt.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from lingxi.contract.model import DEFAULT_MODE
from lingxi.errors import EXIT_FAILED, InputError, LingxiError


async def ensure_registered(client: Any, spec: Any, *, reason: str | None = None) -> None:
    """Register the protocol when the registry does not know it yet (idempotent).

    A near-duplicate of a known protocol is refused unless ``reason`` says why
    it must be a protocol of its own (the registry stores and shows it).
    """
    try:
        await client.protocol(spec.protocol_id)
    except LingxiError as error:
        if error.code not in ("registry.not_found", "registry.protocol_not_found"):
            raise
        await client.register_protocol(spec.raw, allow_new=reason is not None, reason=reason)


async def tell_nickname(client: Any, agent_id: Any, public_key: Any, live: Any) -> None:
    """Let the console and the page name the peer by its registry nickname — only when the
    registry's record for that agent holds the very key the handshake proved."""
    if live is None or not isinstance(agent_id, str):
        return
    try:
        record = await client.identity_record(agent_id)
    except LingxiError:
        return
    if record.get("public_key") == public_key and isinstance(record.get("nickname"), str):
        live.info["peer_nickname"] = record["nickname"]


async def _give_back(client: Any, invitation_id: str, session_id: str) -> None:
    """Release a claim whose connection failed, so the next guest need not wait for its
    deadline (best effort: the deadline still ends it if the registry is unreachable)."""
    try:
        await client.release(invitation_id, session_id)
    except LingxiError:
        pass


class TicketGate:
    """The host's handshake authoriser for one posted invitation."""

    def __init__(self, client: Any, identity: Any, live: Any = None) -> None:
        from lingxi.registry.models.ticket import UsedTickets

        self.client, self.identity, self.live = client, identity, live
        self.used = UsedTickets()
        self.invitation_id: str | None = None
        self.registry_session: str | None = None

    async def __call__(self, peer_key: str, ticket: str | None) -> None:
        from lingxi.registry.models.ticket import verify_ticket
        from lingxi.wire.errors import HandshakeError

        if self.invitation_id is None:
            raise HandshakeError("handshake.ticket_refused", "the invitation is not posted yet")
        if ticket is None:
            raise HandshakeError("handshake.ticket_refused",
                                 "this host takes guests through its registry invitation only: "
                                 f"lingxi join {self.invitation_id}")
        try:
            claims = verify_ticket(ticket, server_public_key=await self.client.server_key(),
                                   invitation_id=self.invitation_id,
                                   host_agent_id=self.identity.agent_id,
                                   guest_public_key=peer_key, now=time.time())
            self.used.spend(claims, time.time())
        except LingxiError as error:
            raise HandshakeError("handshake.ticket_refused", error.message) from None
        confirmed = await self.client.confirm(self.invitation_id, claims.session_id)
        self.registry_session = claims.session_id
        await tell_nickname(self.client, confirmed.get("guest_agent_id"), peer_key, self.live)


async def host_posted(loaded: Any, endpoint: str, *, server: str, advertise: str | None,
                      ttl: int | None, options: dict[str, Any], announce: Any,
                      via: str = "auto", **session_kwargs: Any) -> Any:
    """Host one session for whoever claims the invitation posted at ``server``."""
    from lingxi.cli.reach import RelayHost, concrete_endpoint
    from lingxi.cli.registry_common import make_client
    from lingxi.registry.client.presence import Heartbeat, heartbeat_interval
    from lingxi.session.net import host_session
    from lingxi.wire.identity import Identity

    if via == "relay" and advertise is None and endpoint.rstrip("/").endswith(":0"):
        raise InputError("input.relay_needs_endpoint", "with --via relay nothing listens on "
                         "TCP, but an invitation names an endpoint: give --endpoint with a "
                         "port, or --advertise")
    identity, _ = Identity.load_or_create()
    client = make_client(server, identity="create")
    async with client:
        await ensure_registered(client, loaded.spec)
        gate = TicketGate(client, identity, session_kwargs.get("live"))
        relay = RelayHost(client, lambda line: click.echo(line, err=True)) \
            if via != "direct" else None
        beats: list[Heartbeat] = []
        interval = await heartbeat_interval(client)
        view = await _view_to_share(client)

        async def listening(where: str) -> None:
            invitation = await client.post_invitation(
                loaded.spec.protocol_id, endpoint=advertise or concrete_endpoint(where, server),
                options=options, ttl_seconds=ttl)
            gate.invitation_id = invitation["invitation_id"]
            beats.append(Heartbeat(client, gate.invitation_id, interval))
            beats[0].start()  # ends by itself once the guest is confirmed (in session)
            if relay is not None:
                relay.watch(gate.invitation_id)
            announce(where, invitation)

        async def closed(result: Any) -> None:
            for beat in beats:
                await beat.stop()
            if relay is not None:
                await relay.close()
            if gate.registry_session is not None:  # a guest came: record, do not withdraw
                if result is not None:
                    await _post_receipt(client, gate.registry_session, result)
                    await compare_views(client, result, gate.registry_session)
            elif gate.invitation_id is not None:  # nobody came: withdraw the invitation
                try:
                    await client.cancel(gate.invitation_id)
                except LingxiError:
                    pass  # already expired or closed: nothing to withdraw

        try:
            return await host_session(loaded, endpoint, options=options, identity=identity,
                                      authorize=gate, on_listening=listening,
                                      advertised_endpoint=advertise, on_closed=closed,
                                      on_host=relay.attach if relay is not None else None,
                                      listen=via != "relay", registry_checkpoint=view,
                                      **session_kwargs)
        finally:
            for beat in beats:
                await beat.stop()


async def _view_to_share(client: Any) -> str | None:
    """This side's registry checkpoint for the session's opening (none if it cannot tell)."""
    from lingxi.registry.client.ledger import checkpoint_to_share

    if client.ledger is None:
        return None
    try:
        return await checkpoint_to_share(client, client.ledger)
    except LingxiError:
        return None


async def compare_views(client: Any, result: Any, registry_session: str) -> None:
    """The peer's signed checkpoint against this side's view: a fork is told at once, with
    both checkpoints, and kept, so ``lingxi registry verify`` fails until someone looks."""
    from lingxi.registry.client.ledger import compare_peer_checkpoint
    from lingxi.textsafe import terminal_safe

    note = getattr(result, "peer_checkpoint", None)
    if not note or client.ledger is None:
        return
    try:
        seen = await compare_peer_checkpoint(client, client.ledger, note,
                                             session=registry_session)
    except LingxiError as error:
        click.echo(f"warning: the peer's view of the registry was not compared: {error}",
                   err=True)
        return
    if seen["ok"]:
        return
    for problem in seen["problems"]:
        click.echo(f"warning: registry.fork: {terminal_safe(problem)}", err=True)
    for evidence in seen["evidence"]:
        for line in str(evidence).splitlines():
            click.echo(f"  {terminal_safe(line)}", err=True)


async def _post_receipt(client: Any, registry_session: str, result: Any) -> None:
    local = result.receipts.get("local")
    if not local:
        return
    try:
        await client.post_receipt(registry_session, local)
    except LingxiError as error:
        click.echo(f"warning: the registry did not take this side's receipt: {error}", err=True)


async def protocol_for_join(client: Any, protocol_id: str, protocol_dir: str | None,
                            allow_skeleton: bool) -> Any:
    """The local protocol to join with; fetches a missing spec, never its hooks."""
    from lingxi.session import find_protocol, flow_mode, load_protocol

    if protocol_dir is not None:
        loaded = load_protocol(protocol_dir, allow_skeleton=allow_skeleton)
        if loaded.spec.protocol_id != protocol_id:
            raise LingxiError("session.protocol_mismatch",
                              f"{protocol_dir} is protocol {loaded.spec.protocol_id[:16]}…, the "
                              f"invitation is for {protocol_id[:16]}…", exit_code=EXIT_FAILED)
        return loaded
    try:
        return find_protocol(protocol_id, allow_skeleton=allow_skeleton)
    except LingxiError as error:
        if error.code != "session.unknown_protocol":
            raise
    from lingxi.protocols.catalogue import ensure_hooks, store_spec

    document = await client.fetch_spec(protocol_id)  # the client re-checks the id
    _, folder = store_spec(document)
    written = ensure_hooks(folder, flow_mode(document.get("flow", {}).get("mode")
                                             or DEFAULT_MODE).skeleton_methods(document))
    raise LingxiError("hooks.skeleton",
                      f"fetched the spec into {folder}; no hooks exist for it, so a skeleton "
                      f"was written at {written or Path(folder) / 'hooks.py'}: write the hooks "
                      f"(or pass --protocol-dir), then run `lingxi join` again",
                      exit_code=EXIT_FAILED)


async def join_invitation(client: Any, invitation_id: str, *, protocol_dir: str | None,
                          allow_skeleton: bool, reach: Any = None,
                          **session_kwargs: Any) -> Any:
    """Claim ``invitation_id`` and play the guest's side; post the receipt at the end."""
    from lingxi.session.net import guest_session
    from lingxi.wire.identity import Identity

    identity, _ = Identity.load_or_create()
    invitation = await client.invitation(invitation_id)
    loaded = await protocol_for_join(client, invitation["protocol_id"], protocol_dir,
                                     allow_skeleton)
    await tell_nickname(client, invitation.get("host_agent_id"),
                        invitation.get("host_public_key"), session_kwargs.get("live"))
    claim = await client.claim(invitation_id)
    from lingxi.cli.reach import Reach, guest_reach

    connector = guest_reach(client, claim.session_id, reach or Reach(),
                            lambda line: click.echo(line, err=True))
    view = await _view_to_share(client)
    try:
        result = await guest_session(loaded, invitation["endpoint"], identity=identity,
                                     expected_host_key=invitation["host_public_key"],
                                     expected_protocol_id=invitation["protocol_id"],
                                     ticket=claim.ticket, reach=connector,
                                     registry_checkpoint=view, **session_kwargs)
    except LingxiError as error:
        if error.code.startswith(("transport.", "handshake.")):  # never connected: give the
            await _give_back(client, invitation_id, claim.session_id)  # claim back at once
        raise
    await _post_receipt(client, claim.session_id, result)
    await compare_views(client, result, claim.session_id)
    return result
