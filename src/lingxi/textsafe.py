"""Text from someone else, made safe for a terminal: one line, bounded, visibly escaped.

A peer's abort reason, a spec's field name, an agent id: any of them can carry
ANSI/OSC escape sequences, a carriage return that rewinds the line, BEL,
other C0/C1 controls, or bidi overrides that reorder what the reader sees, and
could then forge output such as a second "session completed" line.
:func:`terminal_safe` replaces every such character by a visible escape
(``\\x1b``, ``\\r``, ``\\u202e``), keeps the result on one line and cuts it to
a bounded length; :func:`peer_words` also marks it as the peer's words, so it
cannot pass for Lingxi's own output. Stdlib-only; sits below every layer.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

DEFAULT_LIMIT = 200

# Characters that are safe although their category is "format" (Cf): the
# zero-width joiner builds emoji sequences and cannot move the cursor.
_KEEP = frozenset({"\u200d"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn", "Co"})
# Fast check: printable ASCII (space to ~) except the backslash needs no work.
_PLAIN = re.compile(r"[ -\[\]-~]*")


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(char: str) -> bool:
    if char in _KEEP:
        return False
    if char == "\\":
        return True
    return unicodedata.category(char) in _UNSAFE_CATEGORIES


def terminal_safe(text: Any, limit: int = DEFAULT_LIMIT) -> str:
    """``text`` as one printable line of at most about ``limit`` characters.

    Controls (C0, DEL, C1), format characters (bidi overrides and isolates,
    zero-width marks other than the joiner), line and paragraph separators,
    lone surrogates, unassigned and private-use code points and the backslash
    itself become visible escapes, so the output can always be read back
    unambiguously. Longer text is cut and says how much was left out.
    """
    if not isinstance(text, str):
        text = str(text)
    if len(text) <= limit and _PLAIN.fullmatch(text):
        return text
    out: list[str] = []
    size = 0
    for index, char in enumerate(text):
        piece = _escape(char) if _unsafe(char) else char
        if size + len(piece) > limit:
            out.append(f"… (+{len(text) - index} more characters)")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def peer_words(text: Any, limit: int = DEFAULT_LIMIT) -> str:
    """Peer-supplied text, made safe and quoted so it reads as the peer's words: ``«…»``."""
    return f"«{terminal_safe(text, limit)}»"
