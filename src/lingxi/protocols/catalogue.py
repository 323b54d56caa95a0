"""Finding, loading and caching protocols: built-ins, local folders, the id cache.

A protocol is named by a local folder, a built-in name, or its protocol_id.
The cache lives at ``$LINGXI_HOME/protocols/<first 8 of id>/<other 56>/``;
only ``[0-9a-f]{64}`` is accepted as an id anywhere one enters, every cache
path is resolved under the cache root, and the id of a cached spec is
recomputed on every load, so an edited cache folder is refused. Specs fetched
from elsewhere are written with :func:`install_spec`; hooks are never fetched:
a folder without ``hooks.py`` gets a skeleton the user must fill in.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingxi.contract.protocol_id import check_protocol_id
from lingxi.errors import LingxiError
from lingxi.home import lingxi_home
from lingxi.protocols import builtin_dir, builtin_names

TEST_INPUTS = "test-inputs.json"


class ProtocolError(LingxiError):
    """A protocol that cannot be found or trusted (exit 2, or 1 when a check failed)."""


def cache_root() -> Path:
    return lingxi_home() / "protocols"


def cache_dir(protocol_id: str) -> Path:
    """The cache folder of ``protocol_id``, guaranteed to lie under the cache root."""
    check_protocol_id(protocol_id)
    root = cache_root().resolve()
    folder = (root / protocol_id[:8] / protocol_id[8:]).resolve()
    if root not in folder.parents:
        raise ProtocolError("protocol.bad_id", "the cache folder escapes the cache root")
    return folder


def resolve_folder(name_or_dir: str | Path) -> Path:
    """A protocol folder from a path, a spec.json path or a built-in name."""
    path = Path(name_or_dir).expanduser()
    if path.is_dir():
        return path
    if path.is_file() and path.name == "spec.json":
        return path.parent
    builtin = builtin_dir(str(name_or_dir))
    if builtin is not None:
        return builtin
    raise ProtocolError("protocol.not_found",
                        f"{name_or_dir} is neither a protocol folder nor a built-in protocol "
                        "(see `lingxi protocol list`)")


def _unknown(protocol_id: str) -> ProtocolError:
    return ProtocolError("session.unknown_protocol",
                         f"protocol {protocol_id[:16]}… is neither built in nor in the local "
                         "protocol cache; pass --protocol-dir (or fetch it from a registry)")


def folder_for_id(protocol_id: str) -> Path:
    """The folder holding ``protocol_id``: a built-in, else the cache (id re-verified).

    Every id that is not found gets the same refusal, whatever exists on disk.
    """
    from lingxi.contract import load_spec

    check_protocol_id(protocol_id)
    for name in builtin_names():
        folder = builtin_dir(name)
        if folder is not None and load_spec(folder).protocol_id == protocol_id:
            return folder
    folder = cache_dir(protocol_id)
    if not (folder / "spec.json").is_file():
        raise _unknown(protocol_id)
    try:
        spec = load_spec(folder)
    except LingxiError:
        raise _unknown(protocol_id) from None
    if spec.protocol_id != protocol_id:
        raise ProtocolError("protocol.id_mismatch",
                            f"the cached spec in {folder} hashes to {spec.protocol_id[:16]}…, "
                            f"not {protocol_id[:16]}…; remove the folder and fetch it again",
                            exit_code=1)
    return folder


@dataclass(frozen=True)
class Installed:
    """What :func:`install_spec` wrote: the folder, its files, the skeleton if one was made."""

    protocol_id: str
    folder: Path
    files: tuple[str, ...]  # relative to ``folder``
    skeleton: Path | None  # the skeleton hooks.py written now, None when hooks already exist


def install_spec(document: dict[str, Any], methods: list[Any] | None,
                 folder: str | Path | None = None) -> Installed:
    """Write a spec that came from elsewhere (a registry) and, if needed, its skeleton.

    The document is loaded first (so an invalid or oversized spec writes
    nothing), then written to ``folder`` (default: the cache folder of the id
    computed here). When the folder has no ``hooks.py`` and ``methods`` (the
    flow mode's skeleton methods; None for a mode this runtime cannot run)
    are given, a skeleton is written beside it, as the seed requires of both
    ``protocol fetch`` and ``join``; host, guest and ``protocol test`` refuse
    it until the user writes the hooks. The spec's text (its name above all:
    a registry may serve a known protocol_id with any name) never becomes
    code; see :mod:`lingxi.hooks.skeleton`.
    """
    from lingxi.contract import load_spec
    from lingxi.files import write_private_text
    from lingxi.hooks.skeleton import HOOKS_FILE, SIDECAR, write_skeleton

    spec = load_spec(document)
    target = cache_dir(spec.protocol_id) if folder is None else Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    write_private_text(target / "spec.json",
                       json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    files: tuple[str, ...] = ("spec.json",)
    skeleton = None
    if methods is not None and not (target / HOOKS_FILE).exists():
        skeleton = write_skeleton(spec, target, methods, protocol_id=spec.protocol_id)
        files += (HOOKS_FILE, SIDECAR)
    return Installed(spec.protocol_id, target, files, skeleton)


def store_spec(document: dict[str, Any]) -> tuple[str, Path]:
    """Put a spec into the cache under the id computed here; return (id, folder)."""
    installed = install_spec(document, None)
    return installed.protocol_id, installed.folder


@dataclass
class LoadedProtocol:
    """A local protocol ready to run: its folder, spec and hooks class."""

    folder: Path
    spec: Any
    hooks_class: type

    def hooks(self, role: str, seed: int) -> Any:
        """Hooks for ``role``; ``seed`` seeds only their game randomness."""
        from lingxi.hooks.base import HookContext

        ctx = HookContext(role=role, spec=self.spec,
                          rng=random.Random(f"lingxi-hooks-{seed}-{role}"))
        return self.hooks_class(ctx)

    def default_inputs(self) -> dict[str, list[str | None]]:
        path = self.folder / TEST_INPUTS
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise ProtocolError("session.bad_inputs", f"{path}: {error}") from None
        if not isinstance(data, dict):
            raise ProtocolError("session.bad_inputs", f"{path}: expected an object of role lists")
        return {role: [str(x) for x in lines] for role, lines in data.items()
                if role in ("host", "guest") and isinstance(lines, list)}


def load_folder(folder: Path, methods: list[Any], *, allow_skeleton: bool | None = None,
                spec: Any = None) -> LoadedProtocol:
    """Spec and hooks class of a local folder; ``methods`` come from the flow mode.

    ``spec`` is the folder's spec when the caller has just loaded it (read once, not twice).
    """
    from lingxi.contract import load_spec
    from lingxi.hooks.loader import load_hooks_class

    if spec is None:
        spec = load_spec(folder)
    cls = load_hooks_class(folder, methods=methods, mode=spec.flow.mode,
                           allow_skeleton=allow_skeleton)
    return LoadedProtocol(folder, spec, cls)


def ensure_hooks(folder: Path, methods: list[Any]) -> Path | None:
    """Give a folder that arrived without hooks (a fetched spec) a skeleton ``hooks.py``.

    ``methods`` are the ones the flow mode's descriptor says to write. Returns
    the skeleton's path when one was written, None when hooks already exist.
    The skeleton is refused by host, guest and ``protocol test`` until written.
    """
    from lingxi.contract import load_spec
    from lingxi.hooks.skeleton import HOOKS_FILE, write_skeleton

    if (folder / HOOKS_FILE).exists():
        return None
    spec = load_spec(folder)
    return write_skeleton(spec, folder, methods, protocol_id=spec.protocol_id)
