"""``lingxi envelope sign|verify``: Synapse envelopes on stdin/stdout."""

from __future__ import annotations

from typing import Any

import click

from lingxi.cli.common import (
    POSITIVE_SECONDS,
    handle_errors,
    json_option,
    parse_json_bytes,
    print_json,
    read_bytes,
    safe_line,
)
from lingxi.errors import InputError
from lingxi.wire import (
    Envelope,
    EnvelopeError,
    ReceivePipeline,
    format_rfc3339,
    parse_rfc3339,
    seal_envelope,
    sign_envelope,
    signature_content,
)
from lingxi.wire.agent_fields import lingxi_endpoint
from lingxi.wire.identity import Identity

ALGORITHM_CHOICE = click.Choice(["HMAC-SHA256", "HMAC-SHA512"])


@click.group("envelope")
def envelope() -> None:
    """Sign or verify a Synapse envelope.

    Keys are read from a file: its bytes, minus one trailing newline, are the
    HMAC key (the same text key both peers share).
    """


def _read_key(path: str) -> bytes:
    data = read_bytes(path, "key file")
    if data.endswith(b"\r\n"):
        data = data[:-2]
    elif data.endswith(b"\n"):
        data = data[:-1]
    if not data:
        raise InputError("input.empty_key", f"key file {path} is empty")
    return data


def _read_aead_key(path: str | None) -> bytes | None:
    if path is None:
        return None

    text = _read_key(path).strip()
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != 32:
        raise InputError("input.bad_key", f"{path} must hold 64 hex characters (32 bytes)")
    return key


def peer_text_id(agent_id: str) -> str:
    """A sender's self-chosen agent id, safe to print (it is the peer's text)."""
    return safe_line(agent_id, 120)


def _stdin_bytes() -> bytes:
    import sys

    return sys.stdin.buffer.read()


def _read_stdin_json(what: str):
    """The JSON document on stdin: UTF-8, no NaN, no repeated key, not nested too deep."""
    return parse_json_bytes(_stdin_bytes(), f"{what} on stdin", code="input.bad_json")


@envelope.command("sign")
@click.option("--key-file", "-k", required=True, metavar="FILE", help="File holding the HMAC key.")
@click.option("--type", "-t", "kind", metavar="TYPE",
              help="Envelope type (default p2p:<payload.action>).")
@click.option("--to", "to", metavar="AGENT_ID", help="Receiver's agent id (needed for p2p:/caller:).")
@click.option("--to-system", default="lingxi", show_default=True, help="Receiver's system_id.")
@click.option("--to-endpoint", metavar="URL", help="Receiver's endpoint (default lingxi://ID).")
@click.option("--from", "sender", metavar="AGENT_ID",
              help="Sender's agent id (default: this agent's identity).")
@click.option("--system-id", default="lingxi", show_default=True, help="Sender's system_id.")
@click.option("--endpoint", metavar="URL", help="Sender's endpoint (default lingxi://ID).")
@click.option("--algorithm", "-a", type=ALGORITHM_CHOICE, default="HMAC-SHA256",
              show_default=True)
@click.option("--ttl", type=click.IntRange(min=0), help="Seconds the message stays valid.")
@click.option("--reply-to", metavar="ID")
@click.option("--correlation-id", metavar="ID")
@click.option("--conversation-id", metavar="ID")
@click.option("--group-id", metavar="ID", help="Needed for group:/inter_group: types.")
@click.option("--timestamp", metavar="RFC3339", help="Use this timestamp instead of now.")
@click.option("--id", "env_id", metavar="UUID", help="Use this id instead of a random UUID.")
@click.option("--aead-key-file", metavar="FILE",
              help="Seal the payload (encrypt: true) with this 32-byte hex key.")
@json_option
@handle_errors
def sign(key_file: str, kind: str | None, to: str | None, to_system: str,
         to_endpoint: str | None, sender: str | None, system_id: str, endpoint: str | None,
         algorithm: str, ttl: int | None, reply_to: str | None, correlation_id: str | None,
         conversation_id: str | None, group_id: str | None, timestamp: str | None,
         env_id: str | None, aead_key_file: str | None, as_json: bool) -> None:
    """Sign the JSON payload read from stdin and print the envelope.

    Exit 0 with the signed envelope on stdout; 2 when the payload, key or
    options cannot make a valid envelope.
    """
    import time
    import uuid

    key = _read_key(key_file)
    aead_key = _read_aead_key(aead_key_file)
    payload = _read_stdin_json("the payload")
    if not isinstance(payload, dict):
        raise InputError("input.bad_payload", "the payload must be a JSON object")
    if kind is None:
        action = payload.get("action")
        if not isinstance(action, str):
            raise InputError("input.bad_payload", "payload has no string 'action'; pass --type")
        kind = f"p2p:{action}"
    if sender is None:
        if not Identity.exists():
            raise InputError("identity.missing",
                             "no identity to sign as; run `lingxi identity init` or pass --from")
        sender = Identity.load().agent_id
    try:
        if timestamp is not None:
            parse_rfc3339(timestamp)
        raw: dict[str, Any] = {
            "id": env_id or str(uuid.uuid4()), "version": "1.0.0", "type": kind,
            "sender": {"agent_id": sender, "system_id": system_id,
                       "endpoint": endpoint or lingxi_endpoint(sender)},
            "payload": payload, "timestamp": timestamp or format_rfc3339(time.time()),
            "signature_algorithm": algorithm,
        }
        if to is not None:
            raw["receiver"] = {"agent_id": to, "system_id": to_system,
                               "endpoint": to_endpoint or lingxi_endpoint(to)}
        for name, value in (("ttl", ttl), ("reply_to", reply_to),
                            ("correlation_id", correlation_id),
                            ("conversation_id", conversation_id), ("group_id", group_id)):
            if value is not None:
                raw[name] = value
        env = Envelope.from_dict(raw)
        if aead_key is not None:
            env = seal_envelope(env, aead_key)
        env = sign_envelope(env, key, algorithm)
    except EnvelopeError as error:
        hint = " (pass --to)" if error.path == "$.receiver" else ""
        raise InputError(error.code, f"cannot build the envelope: {error.message}{hint}",
                         path=error.path) from None
    if as_json:
        print_json({"ok": True, "envelope": env.to_dict(),
                    "signature_content": signature_content(env).decode("utf-8")})
    else:
        print_json(env.to_dict())


@envelope.command("verify")
@click.option("--key-file", "-k", required=True, metavar="FILE",
              help="File holding the sender's HMAC key.")
@click.option("--prefix", type=click.Choice(["p2p", "group", "inter_group", "caller"]),
              help="Require this type prefix.")
@click.option("--window", type=POSITIVE_SECONDS, default=120.0, show_default=True,
              help="Accepted clock difference in seconds (finite, above 0).")
@click.option("--at", "at", metavar="RFC3339", help="Judge the timestamp as if now were this.")
@click.option("--ignore-time", is_flag=True,
              help="Skip the timestamp window and TTL (for stored envelopes).")
@click.option("--aead-key-file", metavar="FILE", help="Open encrypt: true payloads with this key.")
@json_option
@handle_errors
def verify(key_file: str, prefix: str | None, window: float, at: str | None, ignore_time: bool,
           aead_key_file: str | None, as_json: bool) -> None:
    """Check the envelope read from stdin: shape, version, signature, binding, time.

    Exit 0 valid; 1 rejected, with its code (envelope.bad_signature,
    envelope.stale, …); 2 when stdin is not JSON or the key is unreadable.
    """
    import time

    key = _read_key(key_file)
    aead_key = _read_aead_key(aead_key_file)
    data = _stdin_bytes()
    # not JSON at all: exit 2; everything else (repeated keys too) is the envelope's verdict
    parse_json_bytes(data, "the envelope on stdin", code="input.bad_json", unique_keys=False)
    if at is not None:
        try:
            now = parse_rfc3339(at)
        except EnvelopeError as error:
            raise InputError("input.bad_timestamp", f"--at: {error.message}") from None
    else:
        now = time.time()
    pipeline = ReceivePipeline(key, clock=lambda: now, window_seconds=window, aead_key=aead_key)
    try:
        # the bytes as sent, so the envelope parser applies every rule (repeated keys…)
        env = pipeline.accept(data.removeprefix(b"\xef\xbb\xbf"), expect_prefix=prefix,
                              check_clock=not ignore_time)
    except EnvelopeError as error:
        if as_json:
            print_json({"ok": False, "error": error.to_dict()})
        else:
            click.echo(f"rejected: {safe_line(error)}", err=True)
        raise SystemExit(1) from None
    summary = {"ok": True, "id": env.id, "type": env.type, "sender": env.sender.agent_id,
               "receiver": env.receiver.agent_id if env.receiver else None,
               "timestamp": env.timestamp,
               "signature_algorithm": env.signature_algorithm or "HMAC-SHA256",
               "time_checked": not ignore_time}
    if as_json:
        summary["payload"] = env.payload
        print_json(summary)
    else:
        click.echo(f"valid: {env.type} from {peer_text_id(env.sender.agent_id)} (id {env.id})")
