"""The caller's side against a lying server: every reply it should not trust is refused.

The server here is an in-process ``Service`` behind ``httpx.MockTransport``,
whose honest answer a test may bend before the client reads it.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
from callerhelpers import ALICE_KEY, SERVER_ID, TEXT, server_endpoint

from lingxi.serve.client import CallError, call, caller_endpoint
from lingxi.session import load_protocol
from lingxi.wire import Envelope, sign_envelope

URL = "http://127.0.0.1:8088/"
SPEC = load_protocol("word-count").spec


def client_for(service, bend=None) -> httpx.Client:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=service.describe())
        answer = service.answer(request.content)
        body = answer.body if bend is None else bend(answer.body)
        return httpx.Response(answer.status, content=body,
                              headers={"Content-Type": "application/json"})

    return httpx.Client(transport=httpx.MockTransport(handle))


def do_call(service, bend=None, **kwargs):
    with client_for(service, bend) as http:
        return call(URL, {"action": "request", "text": TEXT}, spec=SPEC,
                    sender=caller_endpoint("alice"), key=ALICE_KEY.encode(), client=http,
                    **kwargs)


def resigned(change):
    """A bend: change the reply's dict, then sign it again with alice's key."""
    def bend(body: bytes) -> bytes:
        doc = json.loads(body)
        change(doc)
        return sign_envelope(Envelope.from_dict(doc), ALICE_KEY).to_bytes()
    return bend


def refused_with(service, code, bend=None, **kwargs) -> CallError:
    with pytest.raises(CallError) as info:
        do_call(service, bend, **kwargs)
    assert info.value.code == code, info.value
    return info.value


def test_an_honest_server_is_believed(service):
    result = do_call(service)
    assert result.reply.payload == {"action": "delivery", "lines": 2, "words": 3,
                                    "characters": 13}
    assert result.reply.sender.agent_id == SERVER_ID  # learnt from GET


def test_a_reply_with_a_broken_signature(service):
    def bend(body):
        doc = json.loads(body)
        doc["payload"]["words"] = 99
        return json.dumps(doc).encode()
    refused_with(service, "envelope.bad_signature", bend)


def test_an_old_reply_served_again(service):
    old = []

    def bend(body):
        if not old:
            old.append(body)
        return old[0]

    do_call(service, bend)
    refused_with(service, "envelope.bad_reply_to", bend)


def test_a_reply_with_another_correlation(service):
    refused_with(service, "envelope.bad_correlation",
                 resigned(lambda d: d.update(correlation_id="someone-elses")))


def test_a_reply_from_another_agent(service):
    refused_with(service, "envelope.bad_sender",
                 resigned(lambda d: d["sender"].update(agent_id="lx-impostor")))


def test_a_reply_to_another_caller(service):
    refused_with(service, "envelope.bad_receiver",
                 resigned(lambda d: d["receiver"].update(agent_id="bob")))


def test_a_reply_outside_the_contract(service):
    refused_with(service, "message.out_of_range",
                 resigned(lambda d: d["payload"].update(lines=-1)))


def test_a_reply_of_another_prefix(service):
    refused_with(service, "envelope.type_mismatch",
                 resigned(lambda d: d.update(type="p2p:delivery")))


def test_a_stale_reply(service):
    def stale(d):
        d["timestamp"] = "2020-01-01T00:00:00Z"
    refused_with(service, "envelope.stale", resigned(stale))


def test_a_reflected_request_is_not_a_reply():
    """The caller's own request sent back, its unsigned reply_to set to look like a reply."""
    def reflect(request: httpx.Request) -> httpx.Response:
        doc = json.loads(request.content)
        doc["reply_to"] = doc["id"]
        doc["correlation_id"] = doc["id"]
        return httpx.Response(200, content=json.dumps(doc).encode())

    with pytest.raises(CallError) as info, httpx.Client(
            transport=httpx.MockTransport(reflect)) as http:
        call(URL, {"action": "request", "text": "x"}, spec=SPEC, sender=caller_endpoint("alice"),
             key=ALICE_KEY.encode(), receiver=server_endpoint(URL), client=http)
    assert info.value.code == "envelope.bad_sender"


@pytest.mark.parametrize("status, body, code", [
    (401, b'{"ok":false,"error":{"code":"envelope.bad_signature","message":"no"}}',
     "envelope.bad_signature"),
    (400, b'{"ok":false,"error":{"code":"NOT A CODE \\u001b[2J","message":"x"}}',
     "call.bad_answer"),
    (500, b"<html>oops</html>", "call.bad_answer"),
    (200, b"not json", "envelope.malformed"),
    (200, b"{}", "envelope.missing_field"),
])
def test_refusals_and_junk_answers(status, body, code):
    def handle(request):
        if request.method == "GET":
            return httpx.Response(200, json={"agent": server_endpoint(URL).to_dict(),
                                             "protocol": {"protocol_id": SPEC.protocol_id}})
        return httpx.Response(status, content=body)

    with pytest.raises(CallError) as info, httpx.Client(
            transport=httpx.MockTransport(handle)) as http:
        call(URL, {"action": "request", "text": "x"}, spec=SPEC, sender=caller_endpoint("alice"),
             key=ALICE_KEY.encode(), client=http)
    assert info.value.code == code


def test_a_hostile_refusal_message_is_marked_and_escaped():
    body = json.dumps({"ok": False, "error": {"code": "envelope.stale",
                                              "message": "\x1b[2Jall good\r\n\u202e"}})

    def handle(request):
        return httpx.Response(401, content=body.encode())

    with pytest.raises(CallError) as info, httpx.Client(
            transport=httpx.MockTransport(handle)) as http:
        call(URL, {"action": "request", "text": "x"}, spec=SPEC, sender=caller_endpoint("alice"),
             key=ALICE_KEY.encode(), receiver=server_endpoint(URL), client=http)
    text = str(info.value)
    assert "«" in text and "\x1b" not in text and "\r" not in text and "\u202e" not in text


def test_an_endless_answer_is_cut_off():
    def handle(request):
        return httpx.Response(200, content=b"x" * (5 << 20))

    with pytest.raises(CallError) as info, httpx.Client(
            transport=httpx.MockTransport(handle)) as http:
        call(URL, {"action": "request", "text": "x"}, spec=SPEC, sender=caller_endpoint("alice"),
             key=ALICE_KEY.encode(), receiver=server_endpoint(URL), client=http)
    assert info.value.code == "call.bad_answer"


@pytest.mark.parametrize("info, code", [
    ({"agent": server_endpoint(URL).to_dict(), "protocol": {"protocol_id": "0" * 64}},
     "call.protocol_mismatch"),
    ({"agent": {"agent_id": SERVER_ID, "system_id": "", "endpoint": URL},
      "protocol": {"protocol_id": SPEC.protocol_id}}, "call.bad_answer"),
    ({"nothing": True}, "call.bad_answer"),
])
def test_discovery_is_checked(info, code):
    def handle(request):
        return httpx.Response(200, json=info)

    with pytest.raises(CallError) as raised, httpx.Client(
            transport=httpx.MockTransport(handle)) as http:
        call(URL, {"action": "request", "text": "x"}, spec=SPEC, sender=caller_endpoint("alice"),
             key=ALICE_KEY.encode(), client=http)
    assert raised.value.code == code


def test_a_request_outside_the_contract_is_not_sent():
    def handle(request):  # pragma: no cover - must not be reached
        raise AssertionError("sent")

    with pytest.raises(Exception) as info, httpx.Client(
            transport=httpx.MockTransport(handle)) as http:
        call(URL, {"action": "request", "text": 1}, spec=SPEC, sender=caller_endpoint("alice"),
             key=ALICE_KEY.encode(), client=http, clock=time.time)
    assert getattr(info.value, "code", "") == "message.wrong_type"
