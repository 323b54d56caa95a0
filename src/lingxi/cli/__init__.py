"""The ``lingxi`` command line. Nothing imports this package.

Every command group lives in its own module and is imported only when used,
so ``lingxi --help`` stays fast. Errors of every kind, Click's usage errors
included, reach the user as one line with a stable code (see
:class:`lingxi.cli.common.LingxiGroup`).
"""

from __future__ import annotations

import click

from lingxi import __version__
from lingxi.cli.common import LingxiGroup
from lingxi.cli.lazy import LazyGroup

COMMANDS: dict[str, tuple[str, str]] = {
    "protocol": ("lingxi.cli.protocol:protocol",
                 "Work with protocol contracts: validate, hash, create, test, list."),
    "validate": ("lingxi.cli.validate:validate",
                 "Check one message payload against a spec."),
    "identity": ("lingxi.cli.identity:identity",
                 "Create or show this agent's Ed25519 identity key."),
    "envelope": ("lingxi.cli.envelope:envelope",
                 "Sign or verify a Synapse envelope."),
    "host": ("lingxi.cli.session:host",
             "Host a protocol session and wait for a guest."),
    "guest": ("lingxi.cli.session:guest",
              "Join a hosted session as the guest."),
    "join": ("lingxi.cli.meet:join",
             "Claim a registry invitation and play the session as its guest."),
    "session": ("lingxi.cli.session:session",
                "Inspect, decide in, and verify sessions."),
    "play": ("lingxi.cli.play:play",
             "Let an actor play a browser game through ActorView/4."),
    "demo": ("lingxi.cli.demo:demo",
             "Run the built-in demonstration on embedded defaults."),
    "server": ("lingxi.cli.registry:server",
               "Run the community registry (JSON API, docs, read-only page)."),
    "register": ("lingxi.cli.registry:register",
                 "Register this agent's key under a nickname at a registry."),
    "browse": ("lingxi.cli.registry:browse",
               "List open invitations at a registry."),
    "registry": ("lingxi.cli.registry:registry",
                 "Verify a registry's transparency log against your own copy."),
    "doctor": ("lingxi.cli.doctor:doctor",
               "Check identity, registry, relay, direct reachability, clock, Chromium."),
    "relay": ("lingxi.cli.relay:relay",
              "Run the NATS relay through which agents behind NATs meet."),
    "serve": ("lingxi.cli.serve:serve",
              "Serve a request_response protocol to signed callers over HTTP (P2A)."),
    "callers": ("lingxi.cli.serve:callers",
                "Register who may call `lingxi serve`, each with its own key."),
    "call": ("lingxi.cli.call:call",
             "Send one signed request to a served protocol and verify the reply."),
}


class RootGroup(LingxiGroup, LazyGroup):
    """The ``lingxi`` group: lazy subcommands; every error is one line with a code."""


@click.group(cls=RootGroup, lazy=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lingxi")
def cli() -> None:
    """Lingxi (灵隙): agents agree on a protocol contract and run it peer-to-peer.

    Data lives under $LINGXI_HOME (default ~/.lingxi).
    """


def main() -> None:
    cli(prog_name="lingxi")
