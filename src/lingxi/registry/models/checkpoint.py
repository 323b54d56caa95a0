"""Signed checkpoints in the C2SP formats, so existing transparency tooling reads them.

A checkpoint (c2sp.org/tlog-checkpoint) is the text ``origin\\nsize\\nbase64(root)\\n``
plus extension lines; Lingxi adds one, ``lingxi-time <unix seconds>``, which
clients check for freshness. It travels as a signed note
(c2sp.org/signed-note): the text, a blank line, then one line per signature,
``— <name> base64(key id[4] || signature)``, where an Ed25519 key's id is the
first 4 bytes of SHA-256(name || "\\n" || 0x01 || public key) and the
signature covers the text. Witnesses add cosignatures
(c2sp.org/tlog-cosignature, ``cosignature/v1``): key id from type byte 0x04,
and ``key id || timestamp (8 bytes, big-endian) || Ed25519 signature`` over
``"cosignature/v1\\ntime <t>\\n"`` + the checkpoint text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from dataclasses import dataclass, field

from lingxi.errors import EXIT_FAILED
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import ServerKey, is_hex, verify

DASH = "\u2014"
TIME_PREFIX = "lingxi-time "
MAX_NOTE = 16 * 1024
_NAME = re.compile(r"^[^\s+]{1,200}$")


class CheckpointError(RegistryError):
    """A checkpoint or note that does not parse or verify (``registry.checkpoint_invalid``)."""

    def __init__(self, reason: str) -> None:
        super().__init__("registry.checkpoint_invalid", reason, status=502,
                         exit_code=EXIT_FAILED)


def key_id(name: str, public_hex: str, kind: int = 0x01) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind])
                          + bytes.fromhex(public_hex)).digest()[:4]


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    time: int
    text: str  # the signed body, ending in "\n"

    def to_dict(self) -> dict[str, object]:
        return {"origin": self.origin, "size": self.size, "root": self.root.hex(),
                "time": self.time}


@dataclass
class Note:
    """A signed note split into its text and signature lines ``(name, raw bytes)``."""

    text: str
    signatures: list[tuple[str, bytes]] = field(default_factory=list)

    def render(self) -> str:
        lines = "".join(f"{DASH} {name} {base64.b64encode(raw).decode()}\n"
                        for name, raw in self.signatures)
        return f"{self.text}\n{lines}"


def checkpoint_text(origin: str, size: int, root: bytes, time: int) -> str:
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n{TIME_PREFIX}{int(time)}\n"


def sign_checkpoint(key: ServerKey, origin: str, size: int, root: bytes, time: int) -> str:
    """The signed note of the checkpoint, signed by the log's key under ``origin``."""
    text = checkpoint_text(origin, size, root, time)
    raw = key_id(origin, key.public_hex) + key.sign(text.encode())
    return Note(text, [(origin, raw)]).render()


def parse_note(note: str) -> Note:
    if not isinstance(note, str) or len(note) > MAX_NOTE or "\n\n" not in note:
        raise CheckpointError("not a signed note (text, blank line, signatures)")
    text, _, rest = note.partition("\n\n")
    text += "\n"
    if not rest.endswith("\n"):
        raise CheckpointError("a signed note ends with a newline")
    signatures = []
    for line in rest[:-1].split("\n"):
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != DASH or not _NAME.match(parts[1]):
            raise CheckpointError("a signature line is not '— name base64'")
        try:
            raw = base64.b64decode(parts[2], validate=True)
        except (binascii.Error, ValueError):
            raise CheckpointError("a signature is not base64") from None
        if len(raw) < 5:
            raise CheckpointError("a signature is too short")
        signatures.append((parts[1], raw))
    return Note(text, signatures)


def parse_checkpoint(text: str) -> Checkpoint:
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "" or not lines[0] or not lines[1].isdigit() \
            or len(lines[1]) > 18 or (lines[1] != "0" and lines[1].startswith("0")):
        raise CheckpointError("not a checkpoint (origin, size, root hash)")
    try:
        root = base64.b64decode(lines[2], validate=True)
    except (binascii.Error, ValueError):
        raise CheckpointError("the checkpoint's root hash is not base64") from None
    if len(root) != 32:
        raise CheckpointError("the checkpoint's root hash is not 32 bytes")
    times = [line[len(TIME_PREFIX):] for line in lines[3:-1] if line.startswith(TIME_PREFIX)]
    if len(times) != 1 or not times[0].isdigit() or len(times[0]) > 12:
        raise CheckpointError("the checkpoint carries no lingxi-time line")
    return Checkpoint(lines[0], int(lines[1]), root, int(times[0]), text)


def open_checkpoint(note: str, public_hex: str, *, origin: str | None = None) -> Checkpoint:
    """The checkpoint inside ``note`` once the log key ``public_hex`` signature verifies."""
    parsed = parse_note(note)
    point = parse_checkpoint(parsed.text)
    if origin is not None and point.origin != origin:
        raise CheckpointError(f"the checkpoint is for another log ({point.origin[:80]!r})")
    wanted = key_id(point.origin, public_hex)
    for name, raw in parsed.signatures:
        if name == point.origin and raw[:4] == wanted and \
                verify(public_hex, raw[4:], parsed.text.encode()):
            return point
    raise CheckpointError("the checkpoint is not signed by the log's key")


def cosignature_message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {int(timestamp)}\n".encode() + text.encode()


def cosign(key: ServerKey, name: str, note: str, timestamp: int) -> str:
    """``note`` with this witness's cosignature added (C2SP tlog-cosignature)."""
    parsed = parse_note(note)
    raw = (key_id(name, key.public_hex, 0x04) + struct.pack(">Q", int(timestamp))
           + key.sign(cosignature_message(parsed.text, timestamp)))
    parsed.signatures = [s for s in parsed.signatures if s[0] != name] + [(name, raw)]
    return parsed.render()


def cosignatures(note: str, witnesses: dict[str, str]) -> dict[str, int]:
    """``{witness name: timestamp}`` of the valid cosignatures by ``witnesses``
    (name -> public hex) in ``note``; other lines are ignored."""
    parsed = parse_note(note)
    out: dict[str, int] = {}
    for name, raw in parsed.signatures:
        public = witnesses.get(name)
        if public is None or not is_hex(public, 64) or len(raw) != 4 + 8 + 64:
            continue
        if raw[:4] != key_id(name, public, 0x04):
            continue
        (timestamp,) = struct.unpack(">Q", raw[4:12])
        if verify(public, raw[12:], cosignature_message(parsed.text, timestamp)):
            out[name] = timestamp
    return out


def merge_signatures(note: str, other: str) -> str:
    """``note`` with every signature line of ``other`` (the same text) it lacks."""
    mine, theirs = parse_note(note), parse_note(other)
    if mine.text != theirs.text:
        raise CheckpointError("the two notes sign different checkpoints")
    for item in theirs.signatures:
        if item not in mine.signatures:
            mine.signatures.append(item)
    return mine.render()
