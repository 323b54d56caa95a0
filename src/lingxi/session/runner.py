"""Load protocols for the runtime and run both sides in one process.

``load_protocol`` finds a folder (path or built-in name) through the protocol
catalogue, refuses a flow mode this runtime does not run before any hooks
load, and checks the hooks against the mode's descriptor. ``run_pair`` and
``run_local`` are what ``lingxi protocol test`` and ``lingxi demo`` call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lingxi.protocols.catalogue import (
    LoadedProtocol,
    folder_for_id,
    load_folder,
    resolve_folder,
)
from lingxi.session.core.adversaries import Adversary
from lingxi.session.core.decisions import with_decider
from lingxi.session.core.entropy import Entropy, seeded
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.registry import flow_mode, make_machine
from lingxi.session.drivers.memory import LocalPair, PairResult

__all__ = ["LoadedProtocol", "find_protocol", "load_protocol", "run_local", "run_pair"]


def _load(folder: Path, allow_skeleton: bool | None, spec: Any = None) -> LoadedProtocol:
    from lingxi.contract import load_spec

    if spec is None:
        spec = load_spec(folder)
    mode = flow_mode(spec.flow.mode)  # not supported: before any hooks load
    return load_folder(folder, list(mode.hook_methods), allow_skeleton=allow_skeleton,
                       spec=spec)


def load_protocol(name_or_dir: str | Path, *, allow_skeleton: bool | None = None,
                  spec: Any = None) -> LoadedProtocol:
    """Spec + hooks class of a local protocol folder or built-in, refusing skeletons.

    ``spec``: the folder's spec (``lingxi.contract.load_spec``) when the caller has
    loaded it already, so the file is parsed and checked once.
    """
    return _load(resolve_folder(name_or_dir), allow_skeleton, spec)


def find_protocol(protocol_id: str, *, allow_skeleton: bool | None = None) -> LoadedProtocol:
    """The protocol with ``protocol_id``: a built-in or the local cache (id re-verified)."""
    return _load(folder_for_id(protocol_id), allow_skeleton)


def run_pair(protocol: LoadedProtocol, *, options: dict[str, Any] | None = None, seed: int = 0,
             state_dir: str | Path | None = None, config: SessionConfig | None = None,
             guest_config: SessionConfig | None = None,
             inputs: dict[str, list[str | None]] | None = None,
             deciders: dict[str, Any] | None = None,
             adversary: tuple[str, Adversary] | None = None,
             keep_events: bool = True,
             entropy: dict[str, Entropy] | None = None, carrier: str = "memory") -> PairResult:
    """Both sides of ``protocol`` in one process over the in-memory driver.

    ``deciders`` maps a role to a callback ``(RequestDecision) -> value`` (``None``:
    no answer now, the timeout decides; raise ``Decline`` to apply the timeout
    action at once). A role with a decider and no explicit control mode is
    played in ``human`` control, so the callback is asked at every point.

    A local self-play is reproducible: unless ``entropy`` is given, each side's
    nonces come from a source seeded with ``seed`` (there is no peer to hide
    them from). Sessions with a real peer never do this.

    ``carrier="tcp"`` plays the same schedule over a real loopback TCP
    connection (:mod:`lingxi.session.drivers.loopback`): the same bytes, for a seed.
    """
    entropy = entropy or {role: seeded(f"{seed}-{role}") for role in ("host", "guest")}
    deciders = deciders or {}
    configs = {"host": config or SessionConfig(), "guest": guest_config or config
               or SessionConfig()}
    configs = {role: with_decider(c, deciders.get(role)) for role, c in configs.items()}
    host = make_machine("host", protocol.spec, protocol.hooks("host", seed),
                        options=options or {}, config=configs["host"], entropy=entropy["host"])
    guest = make_machine("guest", protocol.spec, protocol.hooks("guest", seed),
                         config=configs["guest"], entropy=entropy["guest"])
    if inputs is None:
        inputs = protocol.default_inputs()
    options_ = {"state_dir": state_dir, "deciders": deciders, "inputs": inputs,
                "adversary": adversary, "keep_events": keep_events}
    if carrier == "tcp":
        import asyncio

        from lingxi.session.drivers.loopback import run_tcp_pair

        return asyncio.run(run_tcp_pair(host, guest, seed=seed, **options_))
    if carrier != "memory":
        raise ValueError(f"unknown carrier {carrier!r} (memory or tcp)")
    return LocalPair(host, guest, seed=seed, **options_).run()


def run_local(protocol_dir: str | Path, options: dict[str, Any] | None = None, seed: int = 0,
              *, state_dir: str | Path | None = None, allow_skeleton: bool | None = None,
              **kwargs: Any) -> PairResult:
    """Play a protocol folder (or built-in name) against itself; the demo's entry point.

    Returns a :class:`PairResult`: ``.host`` / ``.guest`` outcomes (``.outcome``
    is the host's), ``.receipt_hash``, ``.receipts_verified``, ``.events``.
    """
    protocol = load_protocol(protocol_dir, allow_skeleton=allow_skeleton)
    return run_pair(protocol, options=options, seed=seed, state_dir=state_dir, **kwargs)
