"""A served protocol's answer to every kind of request, in process (no HTTP yet).

Each refusal is one code with its status; an honest request gets a reply the
caller can verify. The signature content of the seed is
``sender.agent_id | receiver.agent_id | timestamp | payload_json`` (+ the
algorithm that computes it): every one of them, and the signature itself,
is tampered with here, each time after the honest envelope was accepted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from callerhelpers import (
    ALICE,
    ALICE_KEY,
    BOB_KEY,
    COUNTS,
    SERVER_ID,
    error_of,
    register,
    request,
    server_endpoint,
    verify_reply,
)

from lingxi.serve.callers import CallerBook, remove_caller
from lingxi.serve.errors import ServeError
from lingxi.serve.service import Service
from lingxi.session import load_protocol
from lingxi.wire import AgentEndpoint, Envelope, EnvelopeBuilder

WORD_COUNT = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "protocols" / "word-count"


def refused(service, body, code: str, status: int) -> dict:
    answer = service.answer(body)
    assert (answer.status, answer.code) == (status, code), answer.body
    error = error_of(answer.body)
    assert error["code"] == code
    return error


# ------------------------------------------------------------------ honest calls

@pytest.mark.parametrize("algorithm", ["HMAC-SHA256", "HMAC-SHA512"])
def test_an_honest_request_gets_a_signed_delivery(service, algorithm):
    sent = request(algorithm=algorithm)
    answer = service.answer(sent.to_bytes())
    assert answer.status == 200, answer.body
    reply = verify_reply(answer.body, sent)
    assert reply.type == "caller:delivery"
    assert reply.payload == {"action": "delivery", **COUNTS}
    assert reply.signature_algorithm == algorithm and len(reply.signature) == (
        64 if algorithm == "HMAC-SHA256" else 128)
    assert reply.sender == server_endpoint() and reply.receiver == ALICE
    assert reply.reply_to == sent.id and reply.correlation_id == sent.id


def test_the_callers_correlation_id_is_kept(service):
    sent = request(correlation_id="job-42")
    reply = verify_reply(service.answer(sent.to_bytes()).body, sent)
    assert reply.correlation_id == "job-42" and reply.reply_to == sent.id


def test_each_caller_is_answered_with_its_own_key(service):
    from callerhelpers import BOB

    sent = request(sender=BOB, key=BOB_KEY)
    answer = service.answer(sent.to_bytes())
    verify_reply(answer.body, sent, key=BOB_KEY)
    with pytest.raises(Exception) as info:
        verify_reply(answer.body, sent, key=ALICE_KEY)
    assert getattr(info.value, "code", None) == "envelope.bad_signature"


# ------------------------------------------------- tampering with the signed content

def _tamper(doc: dict, what: str) -> None:
    if what == "sender.agent_id":
        doc["sender"]["agent_id"] = "bob"  # registered: checked with bob's key, which fails
    elif what == "receiver.agent_id":
        doc["receiver"]["agent_id"] = "lx-other"
    elif what == "timestamp":
        doc["timestamp"] = doc["timestamp"].replace("Z", "+00:00")  # same instant, other text
    elif what == "payload":
        doc["payload"]["text"] = "one two three four"
    elif what == "signature":
        last = doc["signature"][-1]
        doc["signature"] = doc["signature"][:-1] + ("0" if last != "0" else "1")
    elif what == "algorithm":
        doc["signature_algorithm"] = "HMAC-SHA512"
    elif what == "algorithm-default":
        doc.pop("signature_algorithm")  # a SHA-512 signature read as the default SHA-256
    elif what == "unsigned":
        doc.pop("signature")


@pytest.mark.parametrize("what", ["sender.agent_id", "receiver.agent_id", "timestamp",
                                  "payload", "signature", "algorithm", "unsigned"])
def test_every_tamper_of_the_signature_content_is_refused(service, what):
    honest = request()
    doc = json.loads(honest.to_bytes())
    _tamper(doc, what)
    refused(service, json.dumps(doc).encode(), "envelope.bad_signature", 401)
    assert service.answer(honest.to_bytes()).status == 200  # the honest one still passes


def test_a_sha512_signature_relabelled_as_the_default_is_refused(service):
    doc = json.loads(request(algorithm="HMAC-SHA512").to_bytes())
    _tamper(doc, "algorithm-default")
    refused(service, json.dumps(doc).encode(), "envelope.bad_signature", 401)


def test_an_unknown_algorithm_is_refused(service):
    doc = json.loads(request().to_bytes())
    doc["signature_algorithm"] = "HMAC-MD5"
    refused(service, json.dumps(doc).encode(), "envelope.unknown_algorithm", 400)


def test_a_sender_renamed_to_an_unknown_caller_is_unknown(service):
    doc = json.loads(request().to_bytes())
    doc["sender"]["agent_id"] = "mallory"
    refused(service, json.dumps(doc).encode(), "envelope.bad_sender", 401)


def test_an_unregistered_caller_with_its_own_key_is_refused(service):
    mallory = AgentEndpoint("mallory", "lingxi", "lingxi://mallory")
    refused(service, request(sender=mallory, key="m" * 64).to_bytes(), "envelope.bad_sender",
            401)


def test_a_request_for_another_agent_is_refused(service):
    other = AgentEndpoint("lx-other", "lingxi", "http://127.0.0.1:8088/")
    refused(service, request(receiver=other).to_bytes(), "envelope.bad_receiver", 403)


def test_the_unsigned_fields_cannot_be_used_to_pass_a_replay(service):
    sent = request()
    assert service.answer(sent.to_bytes()).status == 200
    refused(service, sent.to_bytes(), "envelope.replay", 409)
    doc = json.loads(sent.to_bytes())
    doc["id"] = "00000000-0000-4000-8000-000000000001"
    doc["correlation_id"] = "fresh"
    doc["ttl"] = 60
    refused(service, json.dumps(doc).encode(), "envelope.replay", 409)


# ---------------------------------------------------------------------- time

def test_a_stale_or_future_timestamp_is_refused(service):
    refused(service, request(clock=lambda: time.time() - 600).to_bytes(), "envelope.stale", 401)
    refused(service, request(clock=lambda: time.time() + 600).to_bytes(), "envelope.stale", 401)


def test_a_request_signed_before_a_restart_is_not_replayable(callers_file):
    started = time.time()
    sent = request(clock=lambda: started - 2)
    before = Service(load_protocol("word-count"), server_endpoint(), CallerBook(callers_file),
                     clock=lambda: started - 1, started_at=started - 60)
    assert before.answer(sent.to_bytes()).status == 200  # accepted by the old process
    after = Service(load_protocol("word-count"), server_endpoint(), CallerBook(callers_file),
                    clock=lambda: started)  # a new process: an empty replay guard
    refused(after, sent.to_bytes(), "envelope.stale", 401)
    assert after.answer(request(clock=lambda: started).to_bytes()).status == 200


def test_ttl_only_shortens_the_window(service):
    refused(service, request(clock=lambda: time.time() - 30, ttl=10).to_bytes(),
            "envelope.expired", 401)
    refused(service, request(clock=lambda: time.time() - 600, ttl=10**6).to_bytes(),
            "envelope.stale", 401)
    assert service.answer(request(clock=lambda: time.time() - 5, ttl=60).to_bytes()).status == 200


# ------------------------------------------------------------ type and contract

def test_the_type_prefix_must_be_caller(service):
    refused(service, request(prefix="p2p").to_bytes(), "envelope.type_mismatch", 400)
    refused(service, request(type="caller:ask").to_bytes(), "envelope.type_mismatch", 400)


@pytest.mark.parametrize("payload, code", [
    ({"action": "request", "text": 5}, "message.wrong_type"),
    ({"action": "request"}, "message.missing_field"),
    ({"action": "request", "text": "x", "extra": 1}, "message.unknown_field"),
    ({"action": "request", "text": "x" * 100_001}, "message.too_long"),
    ({"action": "shout"}, "message.unknown_action"),
    ({"action": "delivery", "lines": 1, "words": 1, "characters": 1}, "message.wrong_direction"),
    ({"action": "ack", "accepted": True}, "session.out_of_phase"),
])
def test_a_payload_outside_the_contract_never_reaches_the_hooks(tmp_path, callers_file,
                                                                payload, code):
    seen = tmp_path / "seen.txt"
    svc = Service(_protocol_with(tmp_path, f"        open({str(seen)!r}, 'a').write('x')\n"
                                 "        return HookResult(response={'action': 'delivery', "
                                 "'lines': 0, 'words': 0, 'characters': 0})\n"),
                  server_endpoint(), CallerBook(callers_file), clock=time.time)
    refused(svc, request(payload).to_bytes(), code, 422)
    assert not seen.exists()
    assert svc.answer(request().to_bytes()).status == 200 and seen.read_text() == "x"


def test_encrypted_payloads_are_not_accepted(service):
    builder = EnvelopeBuilder(ALICE, server_endpoint(), ALICE_KEY, clock=time.time,
                              prefix="caller", aead_key=bytes(32))
    sent = builder.build({"action": "request", "text": "x"}, encrypt=True)
    refused(service, sent.to_bytes(), "envelope.decrypt_failed", 400)


# ------------------------------------------------------------------ malformed bodies

@pytest.mark.parametrize("body, code", [
    (b"", "envelope.malformed"), (b"not json", "envelope.malformed"), (b"[1,2]",
                                                                        "envelope.malformed"),
    (b"\xff\xfe", "envelope.malformed"), (b'{"a":1,"a":2}', "envelope.malformed"),
    (b"NaN", "envelope.malformed"), (b"{}", "envelope.missing_field"),
    (b"[" * 40 + b"]" * 40, "caller.too_deep"),
    (b'{"x":' * 33 + b"1" + b"}" * 33, "caller.too_deep"),
])
def test_malformed_bodies_are_one_coded_error(service, body, code):
    refused(service, body, code, 400)


def test_a_deep_payload_inside_a_signed_envelope_is_refused_before_parsing(service):
    sent = request()
    text = sent.to_bytes().replace(b'"text":"one two\\nthree"',
                                   b'"text":' + b"[" * 40 + b"]" * 40)
    refused(service, text, "caller.too_deep", 400)


HOSTILE = "\x1b[2J\x1b]0;owned\x07\u202eevil\r\nHTTP/1.1 200 OK"


def _no_raw_controls(answer) -> str:
    assert answer.body.isascii()
    assert not any(byte < 0x20 for byte in answer.body)
    message = error_of(answer.body)["message"]
    assert not any(ord(c) < 0x20 or c in "\x7f\u202e" for c in message), message
    return message


def test_a_hostile_agent_id_comes_back_escaped(service):
    doc = json.loads(request().to_bytes())
    doc["sender"]["agent_id"] = HOSTILE
    answer = service.answer(json.dumps(doc).encode())
    assert answer.status == 401
    assert "x1b[2J" in _no_raw_controls(answer)


def test_a_hostile_field_name_comes_back_escaped(service):
    sent = request({"action": "request", "text": "x", HOSTILE: 1})
    answer = service.answer(sent.to_bytes())
    assert (answer.status, answer.code) == (422, "message.unknown_field")
    assert "u202eevil" in _no_raw_controls(answer)


def test_a_hostile_signature_algorithm_comes_back_escaped(service):
    doc = json.loads(request().to_bytes())
    doc["signature_algorithm"] = HOSTILE
    answer = service.answer(json.dumps(doc).encode())
    assert answer.code == "envelope.unknown_algorithm"
    _no_raw_controls(answer)


def test_an_error_message_is_bounded(service):
    sent = request({"action": "request", "text": "x", "k" * 5000: 1})
    answer = service.answer(sent.to_bytes())
    assert answer.code == "message.unknown_field"
    assert len(error_of(answer.body)["message"]) <= 400


# ------------------------------------------------------------- replies and roles

def test_a_reply_cannot_be_posted_back_as_a_request(service):
    sent = request()
    reply = service.answer(sent.to_bytes()).body
    refused(service, reply, "envelope.bad_sender", 401)  # the server's own id never calls


def test_the_servers_own_id_cannot_be_registered_as_a_caller(tmp_path):
    path = tmp_path / "callers.json"
    register(path, SERVER_ID, ALICE_KEY)
    svc = Service(load_protocol("word-count"), server_endpoint(),
                  CallerBook(path, refuse=frozenset({SERVER_ID})), clock=time.time)
    me = server_endpoint()
    refused(svc, request(sender=me).to_bytes(), "envelope.bad_sender", 401)


def test_callers_added_or_removed_while_serving_count_at_once(service, callers_file):
    carol = AgentEndpoint("carol", "lingxi", "lingxi://carol")
    refused(service, request(sender=carol, key="c" * 64).to_bytes(), "envelope.bad_sender", 401)
    register(callers_file, "carol", "c" * 64)
    assert service.answer(request(sender=carol, key="c" * 64).to_bytes()).status == 200
    remove_caller(callers_file, "carol")
    refused(service, request(sender=carol, key="c" * 64).to_bytes(), "envelope.bad_sender", 401)


def test_a_callers_file_broken_while_serving_keeps_the_last_good_one(service, callers_file):
    callers_file.write_text("{not json")
    assert service.answer(request().to_bytes()).status == 200


def test_only_request_response_protocols_are_served(callers_file):
    with pytest.raises(ServeError) as info:
        Service(load_protocol("rock-paper-scissors"), server_endpoint(),
                CallerBook(callers_file), clock=time.time)
    assert info.value.code == "serve.not_request_response"


# ------------------------------------------------ hooks that break their own contract

def _protocol_with(tmp_path, hooks_body: str):
    folder = tmp_path / "bad-count"
    folder.mkdir()
    (folder / "spec.json").write_text((WORD_COUNT / "spec.json").read_text())
    (folder / "hooks.py").write_text(
        "from lingxi.hooks import HookResult, Hooks\n\n\n"
        "class BadHooks(Hooks):\n"
        "    def proto_next_message(self, allowed, decision=None):\n"
        "        return HookResult()\n\n"
        "    def proto_on_message(self, message):\n" + hooks_body)
    return load_protocol(folder)


@pytest.mark.parametrize("hooks_body, code", [
    ("        return HookResult(response={'action': 'delivery', 'lines': -1, 'words': 0,"
     " 'characters': 0})\n", "hooks.invalid_message"),
    ("        return HookResult(response={'action': 'ack', 'accepted': True})\n",
     "hooks.invalid_message"),
    ("        raise KeyError('/home/operator/secret.txt')\n", "hooks.error"),
])
def test_an_invalid_reply_is_never_signed(tmp_path, callers_file, hooks_body, code):
    svc = Service(_protocol_with(tmp_path, hooks_body), server_endpoint(),
                  CallerBook(callers_file), clock=time.time)
    answer = svc.answer(request().to_bytes())
    assert (answer.status, answer.code) == (422, code)
    assert b"signature" not in answer.body and b"secret" not in answer.body


def test_hooks_that_cannot_be_made_are_a_coded_refusal(tmp_path, callers_file):
    protocol = _protocol_with(tmp_path, "        return None\n")
    (protocol.folder / "hooks.py").write_text(
        (protocol.folder / "hooks.py").read_text()
        + "\n    def __init__(self, ctx):\n        raise RuntimeError('no database')\n")
    protocol = load_protocol(protocol.folder)
    svc = Service(protocol, server_endpoint(), CallerBook(callers_file), clock=time.time)
    answer = svc.answer(request().to_bytes())
    assert (answer.status, answer.code) == (422, "hooks.error")
    assert b"database" not in answer.body and "no database" in answer.log


def test_the_envelope_a_caller_gets_parses_as_sent(service):
    sent = request()
    body = service.answer(sent.to_bytes()).body
    assert Envelope.parse(body).to_bytes() == body
    assert json.loads(body)["receiver"]["agent_id"] == ALICE.agent_id
