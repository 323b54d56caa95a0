"""The session runtime's surface for the CLI and library callers, without the network.

- sans-IO machines in :mod:`lingxi.session.core` (one descriptor per flow mode);
- drivers in :mod:`lingxi.session.drivers` (in-memory pair, network channel);
- state folders in :mod:`lingxi.session.record` (events, transcript, receipts).

Plain imports, so the layer contracts see every edge. Sessions over a channel (host,
guest, live) are the network surface, :mod:`lingxi.session.net`: importing this one
never loads asyncio, socket or ssl, so an in-memory ``protocol test`` does not either.

Python runs this module before any ``lingxi.session.*`` module, so it holds only what
an in-memory self-play loads anyway (machines, the in-memory driver, the loader). What a
default ``protocol test`` never runs is imported from its own module where it is used:
the adversarial suite (:func:`lingxi.session.adversarial.run_adversarial`), offline
verification (:func:`lingxi.session.api.verify_session`,
:class:`lingxi.session.record.verify.Verification`) and the one-shot answerer
(:func:`lingxi.session.core.oneshot.answer_once`).
"""

from __future__ import annotations

from lingxi.session.core.decisions import DeciderContext, Decline
from lingxi.session.core.events import RequestDecision
from lingxi.session.core.machine import SessionConfig, SessionMachine
from lingxi.session.core.registry import (
    flow_mode,
    make_machine,
    runnable_modes,
    skeleton_methods_for,
)
from lingxi.session.core.registry import register as register_mode
from lingxi.session.drivers.memory import PairResult
from lingxi.session.errors import SessionError, SessionFailed
from lingxi.session.record.recorder import is_running
from lingxi.session.runner import LoadedProtocol, find_protocol, load_protocol, run_local, run_pair

__all__ = [
    "DeciderContext", "Decline", "LoadedProtocol", "PairResult", "RequestDecision",
    "SessionConfig", "SessionError", "SessionFailed", "SessionMachine", "find_protocol",
    "flow_mode", "is_running", "load_protocol", "make_machine", "register_mode", "run_local",
    "run_pair", "runnable_modes", "skeleton_methods_for",
]
