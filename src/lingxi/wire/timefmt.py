"""RFC 3339 timestamps: read ``Z`` and numeric offsets, write UTC with microseconds.

The signature covers the timestamp exactly as sent, so parsing never rewrites
the text; it only yields the instant (seconds since the epoch) for the window
and TTL checks.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from lingxi.wire.errors import EnvelopeError

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))",
    re.ASCII,
)


_WHOLE_SECONDS: dict[str, int] = {}  # "YYYY-MM-DDTHH:MM:SS" already checked → POSIX seconds
_WHOLE_SECONDS_SIZE = 4096


def parse_rfc3339(text: object) -> float:
    """The instant ``text`` names, as POSIX seconds; ``envelope.bad_timestamp`` otherwise.

    The form we emit (``YYYY-MM-DDTHH:MM:SS.ffffffZ``) takes a shortcut: the date-time
    part is looked up among the whole seconds already checked by the general parser,
    and only the six fraction digits are read. The result is the same float (a test
    compares both on generated input).
    """
    if type(text) is str and len(text) == 27 and text[26] == "Z" and text[19] == ".":
        whole = _WHOLE_SECONDS.get(text[:19])
        fraction = text[20:26]
        if whole is not None and fraction.isdigit() and fraction.isascii():
            return (whole * 1_000_000 + int(fraction)) / 1_000_000
        instant = _parse_general(text)
        if len(_WHOLE_SECONDS) >= _WHOLE_SECONDS_SIZE:
            _WHOLE_SECONDS.clear()
        _WHOLE_SECONDS[text[:19]] = int(_parse_general(text[:19] + "Z"))
        return instant
    return _parse_general(text)


def _parse_general(text: object) -> float:
    """Every RFC 3339 spelling (the reference for the shortcut in ``parse_rfc3339``)."""
    if not isinstance(text, str):
        raise EnvelopeError("envelope.bad_timestamp", "timestamp must be a string",
                            path="$.timestamp")
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise EnvelopeError("envelope.bad_timestamp",
                            f"timestamp {text[:40]!r} is not RFC 3339", path="$.timestamp")
    if text[10] == "T" and text[-1] != "z" and (match.group(7) is None or len(match.group(7)) <= 6):
        try:  # the common spellings: let the C parser do the arithmetic
            return datetime.fromisoformat(text).timestamp()
        except ValueError:
            pass  # fall through for the precise error message
    year, month, day, hour, minute, second, frac, zulu, sign, off_h, off_m = match.groups()
    try:
        if zulu:
            tz = UTC
        else:
            oh, om = int(off_h), int(off_m)
            if oh > 23 or om > 59:
                raise ValueError("offset out of range")
            delta = timedelta(hours=oh, minutes=om)
            tz = timezone(-delta if sign == "-" else delta)
        micro = int((frac or "0").ljust(6, "0")[:6])
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute),
                          int(second), micro, tzinfo=tz)
    except ValueError as error:
        raise EnvelopeError("envelope.bad_timestamp",
                            f"timestamp {text[:40]!r} is not a valid time: {error}",
                            path="$.timestamp") from None
    return moment.timestamp()


def format_rfc3339(instant: float) -> str:
    """``instant`` (POSIX seconds) as RFC 3339 UTC with microseconds, e.g. ``…T08:00:00.123456Z``."""
    seconds, micro = divmod(round(instant * 1_000_000), 1_000_000)
    last_seconds, prefix = _LAST_SECOND
    if seconds != last_seconds:
        t = time.gmtime(seconds)
        prefix = (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
                  f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}")
        _LAST_SECOND[:] = [seconds, prefix]
    return f"{prefix}.{micro:06d}Z"


_LAST_SECOND: list[Any] = [None, ""]  # the date-time text of the last whole second formatted
