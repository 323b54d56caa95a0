"""``lingxi protocol …``: the contract commands and the runtime ones, each lazy."""

from __future__ import annotations

import click

from lingxi.cli.lazy import LazyGroup

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("lingxi.cli.protocol_contract:validate_cmd",
                 "Check a spec.json and list every problem with its code and path."),
    "hash": ("lingxi.cli.protocol_contract:hash_cmd",
             "Print the protocol_id of a spec.json."),
    "create": ("lingxi.cli.protocol_contract:create_cmd",
               "Write a new spec.json from a template."),
    "test": ("lingxi.cli.protocol_runtime:test_cmd",
             "Play a protocol's hooks against each other (optionally against cheaters)."),
    "list": ("lingxi.cli.protocol_runtime:list_cmd",
             "List the built-in protocols."),
    "skeleton": ("lingxi.cli.protocol_runtime:skeleton_cmd",
                 "Write a hooks.py skeleton for a protocol folder's spec.json."),
    "path": ("lingxi.cli.protocol_runtime:path_cmd",
             "Print the folder of a built-in protocol."),
    "register": ("lingxi.cli.registry:protocol_register",
                 "Publish a spec.json at a registry (the registry computes its id)."),
    "fetch": ("lingxi.cli.registry:protocol_fetch",
              "Download a spec from a registry by protocol_id, re-checking the id."),
    "search": ("lingxi.cli.registry:protocol_search",
               "Search a registry's protocols by text, name and type."),
    "preflight": ("lingxi.cli.registry:protocol_preflight",
                  "Report registered protocols a draft spec converges with."),
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def protocol() -> None:
    """Work with protocol contracts (spec.json) and protocol folders."""
