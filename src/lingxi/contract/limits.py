"""The field table's fixed facts: default limits and the machine-type patterns.

Kept apart from :mod:`lingxi.contract.fields` (which reports findings) and
:mod:`lingxi.contract.verdict` (which only says yes or no) so that both read
the same numbers and patterns: one fact in one place.
"""

from __future__ import annotations

import re

DEFAULT_TEXT_MAX = 2000
DEFAULT_CIPHERTEXT_MAX = 512
DEFAULT_OT_BLOB_MAX = 16384
DEFAULT_ARRAY_MAX_BYTES = 262144
DEFAULT_JSON_MAX_BYTES = 1048576
TICKET_MAX = 2048

HEX_DIGITS = "0123456789abcdef"
ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-"

# type -> (pattern a whole value must match, what it is in words, length bounds)
PATTERNS: dict[str, tuple[re.Pattern[str], str, int, int]] = {
    "hash": (re.compile(r"[0-9a-f]{64}"), "64 lowercase hex characters", 64, 64),
    "key": (re.compile(r"[0-9a-f]{64}"), "64 lowercase hex characters", 64, 64),
    "signature": (re.compile(r"[0-9a-f]{128}"), "128 lowercase hex characters", 128, 128),
    "nonce": (re.compile(r"[0-9a-f]{16,64}"), "16-64 lowercase hex characters", 16, 64),
    "id": (re.compile(r"[A-Za-z0-9_.:-]{1,128}"), "1-128 characters of A-Z a-z 0-9 _ . : -",
           1, 128),
}
# The characters each pattern type allows (for checking many items at once).
PATTERN_CHARS = {"hash": HEX_DIGITS, "key": HEX_DIGITS, "signature": HEX_DIGITS,
                 "nonce": HEX_DIGITS, "id": ID_CHARS}

# A ciphertext: at least one byte of lowercase hex (an empty one carries nothing).
HEX_PAIRS = re.compile(r"(?:[0-9a-f]{2})+")
