"""``lingxi call``: one signed ``caller:`` request to a served protocol, the reply verified."""

from __future__ import annotations

import click

from lingxi.cli.common import (
    POSITIVE_SECONDS,
    handle_errors,
    json_option,
    print_json,
    read_json_source,
    safe_line,
)
from lingxi.cli.envelope import ALGORITHM_CHOICE, _read_key
from lingxi.errors import InputError
from lingxi.wire import AgentEndpoint
from lingxi.wire.agent_fields import endpoint_url_problem


@click.command("call")
@click.argument("url")
@click.argument("payload")
@click.option("--protocol-dir", "protocol", required=True, metavar="DIR|NAME",
              help="The served protocol (its spec checks the request and the reply).")
@click.option("--from", "sender", required=True, metavar="AGENT_ID",
              help="Your caller id, as registered with `lingxi callers add`.")
@click.option("--key-file", "-k", required=True, metavar="FILE",
              help="File holding your HMAC key (as printed by `lingxi callers add`).")
@click.option("--to", "to", metavar="AGENT_ID",
              help="The served agent's id (default: asked from the URL with GET).")
@click.option("--algorithm", "-a", type=ALGORITHM_CHOICE, default="HMAC-SHA256",
              show_default=True)
@click.option("--ttl", type=click.IntRange(min=0), help="Seconds the request stays valid.")
@click.option("--correlation-id", metavar="ID", help="Correlation id (default: the request id).")
@click.option("--timeout", type=POSITIVE_SECONDS, default=30.0, show_default=True,
              help="Seconds to wait for the server.")
@json_option
@handle_errors
def call(url: str, payload: str, protocol: str, sender: str, key_file: str, to: str | None,
         algorithm: str, ttl: int | None, correlation_id: str | None, timeout: float,
         as_json: bool) -> None:
    """Sign PAYLOAD (JSON text, - for stdin, or @FILE) as caller:<action>, POST it to
    URL, verify the reply's signature, sender, correlation and contract, print it.

    Exit 0 with a verified reply; 1 when the server refused the request (its
    code is printed), cannot be reached, or its reply fails a check; 2 for
    usage errors (bad JSON, unreadable key, a payload outside the contract).
    """
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise InputError("serve.missing_dependency",
                         "lingxi call needs httpx: pip install 'lingxi[serve]'") from None
    from lingxi.serve.callers import check_caller_id
    from lingxi.serve.client import call as do_call
    from lingxi.serve.client import caller_endpoint
    from lingxi.session import load_protocol

    if endpoint_url_problem(url) is not None or not url.lower().startswith(("http://",
                                                                             "https://")):
        raise InputError("call.bad_url", f"URL must be http(s)://HOST:PORT/…, not "
                         f"{safe_line(url, 80)!r}")
    check_caller_id(sender)
    key = _read_key(key_file)
    body = read_json_source(payload, what="payload", expect="object",
                            shape_code="input.bad_payload")
    loaded = load_protocol(protocol)
    try:
        loaded.spec.check_message(body, "guest_to_host")
    except Exception as error:  # a LingxiError: the user's payload, before any request
        code = getattr(error, "code", "input.bad_payload")
        raise InputError(code, f"the payload is not a request of {loaded.spec.name}: "
                         f"{getattr(error, 'message', error)}") from None
    receiver = None
    if to is not None:
        check_caller_id(to)
        receiver = AgentEndpoint(to, "lingxi", url)
    result = do_call(url, body, spec=loaded.spec, sender=caller_endpoint(sender), key=key,
                     receiver=receiver, algorithm=algorithm, ttl=ttl,
                     correlation_id=correlation_id, timeout=timeout)
    reply = result.reply
    if as_json:
        print_json({"ok": True, "request": result.request.to_dict(), "reply": reply.to_dict()})
        return
    click.echo(safe_line(f"reply from {reply.sender.agent_id}: {reply.type}, signature "
                         f"{reply.signature_algorithm or 'HMAC-SHA256'} verified, reply_to "
                         f"{reply.reply_to}", 400))
    print_json(reply.payload)
