"""How a session reaches its peer: ``--via auto|direct|relay`` and ``--unsealed``.

One decorator gives ``lingxi host``, ``guest`` and ``join`` the same two options
as one ``reach`` argument, so the commands stay small and agree on the words.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

VIAS = ("auto", "direct", "relay")


@dataclass(frozen=True)
class Reach:
    via: str = "auto"
    unsealed: bool = False
    direct_timeout: float = 3.0

    @property
    def seal(self) -> bool:
        return not self.unsealed


def reach_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--via, --direct-timeout and --unsealed → one ``reach`` argument."""

    @functools.wraps(command)
    def wrapper(*args: Any, via: str, direct_timeout: float, unsealed: bool,
                **kwargs: Any) -> Any:
        return command(*args, reach=Reach(via, unsealed, direct_timeout), **kwargs)

    for option in (
        click.option("--unsealed", is_flag=True,
                     help="Debug only: send payloads in clear. The peer must choose it too, "
                          "or the handshake is refused (handshake.sealing_refused); the "
                          "choice is recorded in the session's events."),
        click.option("--direct-timeout", type=click.FloatRange(0.1, 60.0), default=3.0,
                     show_default=True, metavar="SECONDS",
                     help="With --via auto: how long the direct path may take before the "
                          "relay is tried."),
        click.option("--via", type=click.Choice(VIAS), default="auto", show_default=True,
                     help="The path to the peer: direct TCP, the registry's NATS relay, or "
                          "auto (direct first, then the relay)."),
    ):
        wrapper = option(wrapper)
    return wrapper
