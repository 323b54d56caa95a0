"""One working example per command, the last thing its ``--help`` shows (as its epilog).

Kept in one table, beside the commands' own modules, so every command gets one and a test
can run the ones that need nothing else running (``tests/cli/test_help_examples.py``).
A command with an entry here ends with it even when its docstring has an example of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the table is read by the fast root help, which never loads Click
    import click

EXAMPLES: dict[str, str] = {
    "": "lingxi protocol list",
    "browse": "lingxi browse --server http://127.0.0.1:8470",
    "demo": "lingxi demo --seed 1",
    "doctor": "lingxi doctor --server http://127.0.0.1:8470",
    "relay": "lingxi relay serve --listen 0.0.0.0:4222 --server http://127.0.0.1:8470",
    "relay serve": "lingxi relay serve --listen 0.0.0.0:4222 --server http://127.0.0.1:8470",
    "envelope": "echo '{\"action\":\"ping\"}' | lingxi envelope sign --key-file k.txt --to agent-b",
    "envelope sign": "echo '{\"action\":\"ping\"}' | lingxi envelope sign --key-file k.txt "
                     "--to agent-b > env.json",
    "envelope verify": "lingxi envelope verify --key-file k.txt < env.json",
    "guest": "lingxi guest --endpoint tcp://127.0.0.1:7400 --control-mode human",
    "host": "lingxi host --protocol-dir rock-paper-scissors --control-mode human "
            "--endpoint tcp://127.0.0.1:7400",
    "identity": "lingxi identity show",
    "identity init": "lingxi identity init",
    "identity show": "lingxi identity show --json",
    "join": "lingxi join inv-… --server http://127.0.0.1:8470 --control-mode human",
    "mcp": "lingxi mcp   (an assistant starts it: {\"command\": \"lingxi\", \"args\": "
           "[\"mcp\"]})",
    "play": "lingxi play examples/games/match3 --actor greedy-match3 --budget 20 --seed 1 "
            "--out /tmp/run",
    "protocol": "lingxi protocol test rock-paper-scissors --seed 7",
    "protocol create": "lingxi protocol create --template simultaneous-choice --output "
                       "my-game/spec.json",
    "protocol fetch": "lingxi protocol fetch <protocol_id> --server http://127.0.0.1:8470",
    "protocol hash": "lingxi protocol hash \"$(lingxi protocol path rock-paper-scissors)\"",
    "protocol list": "lingxi protocol list --json",
    "protocol path": "lingxi protocol path rock-paper-scissors",
    "protocol preflight": "lingxi protocol preflight my-game/spec.json",
    "protocol register": "lingxi protocol register my-game --server http://127.0.0.1:8470",
    "protocol search": "lingxi protocol search dice --server http://127.0.0.1:8470",
    "protocol skeleton": "lingxi protocol skeleton my-game",
    "protocol test": "lingxi protocol test rock-paper-scissors --adversarial --seed 7",
    "protocol validate": "lingxi protocol validate \"$(lingxi protocol path crazy-eights)\"",
    "register": "lingxi register --nickname alice --server http://127.0.0.1:8470",
    "registry": "lingxi registry verify --server http://127.0.0.1:8470",
    "registry verify": "lingxi registry verify --server http://127.0.0.1:8470",
    "registry rating": "lingxi registry rating lx-0123456789abcdef --server http://127.0.0.1:8470",
    "registry witness": "lingxi registry witness --server http://127.0.0.1:8470 --name w1 "
                        "--port 8471",
    "server": "lingxi server --host 0.0.0.0 --port 8470",
    "session": "lingxi session list",
    "session abort": "lingxi session abort --reason 'back later'",
    "session decide": "lingxi session decide rock",
    "session events": "lingxi session events --follow",
    "session list": "lingxi session list --json",
    "session skeleton": "lingxi session skeleton my-game  # moved: lingxi protocol skeleton",
    "session show": "lingxi session show ~/.lingxi/sessions/<id>-host",
    "skill": "lingxi skill install --target ~/.claude/skills",
    "skill install": "lingxi skill install --target ~/.claude/skills",
    "session ui": "lingxi session ui ~/.lingxi/sessions/<id>-guest --open",
    "session verify": "lingxi session verify ~/.lingxi/sessions/<id>-guest",
    "session compare": "lingxi session compare ~/.lingxi/sessions/<id>-host ./peer-folder",
    "serve": "lingxi serve --protocol-dir word-count --http 127.0.0.1:8088",
    "callers": "lingxi callers add alice --save-key alice.key",
    "callers add": "lingxi callers add alice --save-key alice.key",
    "callers list": "lingxi callers list --json",
    "callers remove": "lingxi callers remove alice",
    "call": "lingxi call http://127.0.0.1:8088/ '{\"action\": \"request\", \"text\": \"one two\"}' "
            "--protocol-dir word-count --from alice --key-file alice.key",
    "group": "lingxi group test group-vote --seats 5 --adversarial",
    "group test": "lingxi group test holdem --seats 4 --record table.json",
    "group verify": "lingxi group verify table.json",
    "group host": "lingxi group host holdem --seats 4 --listen tcp://127.0.0.1:7400",
    "group join": "lingxi group join tcp://127.0.0.1:7400 --protocol holdem --seat 1",
    "group relay-credentials": "lingxi group relay-credentials --relay-seeds "
                               "~/.lingxi/registry/server.key.relay.json --relay "
                               "nats://127.0.0.1:4222 --seats 4 --out table",
    "validate": "lingxi validate rock-paper-scissors '{\"action\":\"join\"}' --direction "
                "guest_to_host",
}


def example_line(path: str) -> str:
    """The epilog of the command at ``path`` ("" is the root)."""
    return f"Example: {EXAMPLES[path]}"


def with_example(command: click.Command, path: str) -> click.Command:
    """Give ``command`` (and the subcommands of a plain group) its example as the epilog."""
    import click

    if command.epilog is None and path in EXAMPLES:
        command.epilog = example_line(path)
    if isinstance(command, click.Group) and not hasattr(command, "_lazy"):
        for name, sub in command.commands.items():
            with_example(sub, f"{path} {name}".strip())
    return command
