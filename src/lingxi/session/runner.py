"""Run a protocol folder's hooks against each other: ``run_local`` and friends.

This is what ``lingxi protocol test`` and ``lingxi demo`` call. A protocol is
named by a folder path or by a built-in name (``lingxi protocol list``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingxi.contract import load_spec
from lingxi.hooks import HookContext, load_hooks_class
from lingxi.protocols import builtin_dir
from lingxi.session.errors import SessionError
from lingxi.session.drivers.memory import Adversary, LocalPair, PairResult
from lingxi.session.core.machine import SessionConfig
from lingxi.session.core.registry import machine_class

TEST_INPUTS = "test-inputs.json"


def resolve_protocol(name_or_dir: str | Path) -> Path:
    """A protocol folder from a path or a built-in name."""
    path = Path(name_or_dir).expanduser()
    if path.is_dir():
        return path
    if path.is_file() and path.name == "spec.json":
        return path.parent
    builtin = builtin_dir(str(name_or_dir))
    if builtin is not None:
        return builtin
    raise SessionError("protocol.not_found",
                       f"{name_or_dir} is neither a protocol folder nor a built-in protocol "
                       "(see `lingxi protocol list`)")


@dataclass
class LoadedProtocol:
    folder: Path
    spec: Any
    hooks_class: type

    def hooks(self, role: str, seed: int) -> Any:
        ctx = HookContext(role=role, spec=self.spec,
                          rng=random.Random(f"lingxi-hooks-{seed}-{role}"))
        return self.hooks_class(ctx)

    def default_inputs(self) -> dict[str, list[str | None]]:
        path = self.folder / TEST_INPUTS
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise SessionError("session.bad_inputs", f"{path}: {error}") from None
        return {role: [str(x) for x in lines] for role, lines in data.items()
                if role in ("host", "guest") and isinstance(lines, list)}


def load_protocol(name_or_dir: str | Path, *, allow_skeleton: bool | None = None
                  ) -> LoadedProtocol:
    """Spec + hooks class of a local protocol folder, refusing skeletons and unknown modes."""
    folder = resolve_protocol(name_or_dir)
    spec = load_spec(folder)
    machine_class(spec.flow.mode)  # session.mode_not_supported before any hooks load
    cls = load_hooks_class(folder, mode=spec.flow.mode, allow_skeleton=allow_skeleton)
    return LoadedProtocol(folder, spec, cls)


def run_pair(protocol: LoadedProtocol, *, options: dict[str, Any] | None = None, seed: int = 0,
             state_dir: str | Path | None = None, config: SessionConfig | None = None,
             guest_config: SessionConfig | None = None,
             inputs: dict[str, list[str | None]] | None = None,
             deciders: dict[str, Any] | None = None,
             adversary: tuple[str, Adversary] | None = None,
             keep_events: bool = True) -> PairResult:
    """Both sides of ``protocol`` in one process over the in-memory driver."""
    cls = machine_class(protocol.spec.flow.mode)
    host = cls(role="host", spec=protocol.spec, hooks=protocol.hooks("host", seed),
               options=options or {}, config=config,
               rng=random.Random(f"lingxi-engine-{seed}-host"))
    guest = cls(role="guest", spec=protocol.spec, hooks=protocol.hooks("guest", seed),
                config=guest_config or config, rng=random.Random(f"lingxi-engine-{seed}-guest"))
    if inputs is None:
        inputs = protocol.default_inputs()
    return LocalPair(host, guest, seed=seed, state_dir=state_dir, deciders=deciders,
                     inputs=inputs, adversary=adversary, keep_events=keep_events).run()


def run_local(protocol_dir: str | Path, options: dict[str, Any] | None = None, seed: int = 0,
              *, state_dir: str | Path | None = None, allow_skeleton: bool | None = None,
              **kwargs: Any) -> PairResult:
    """Play a protocol folder (or built-in name) against itself; the lead's demo entry point.

    Returns a :class:`PairResult`: ``.host`` / ``.guest`` outcomes (``.outcome``
    is the host's), ``.receipt_hash``, ``.receipts_verified``, ``.events``.
    """
    protocol = load_protocol(protocol_dir, allow_skeleton=allow_skeleton)
    return run_pair(protocol, options=options, seed=seed, state_dir=state_dir, **kwargs)
