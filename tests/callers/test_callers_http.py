"""A real ``lingxi serve`` on a free loopback port, called from httpx and from curl.

The server runs in its own process (module fixture ``server``); every answer
is read as a caller sees it: status, JSON body, and for a 200 the reply
envelope checked with the caller's key.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time

import httpx
import pytest
from callerhelpers import (
    ALICE_KEY,
    COUNTS,
    SERVER_ID,
    TEXT,
    error_of,
    request,
    server_endpoint,
    verify_reply,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

JSON = {"Content-Type": "application/json"}
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


_CLIENT = httpx.Client(timeout=30)  # one connection pool for the module (fast generated runs)


@pytest.fixture(scope="module", autouse=True)
def _close_client():
    yield
    _CLIENT.close()


def post(server, body: bytes, headers=None) -> httpx.Response:
    return _CLIENT.post(server.url, content=body, headers=headers or JSON)


def signed(server, **kwargs):
    return request(receiver=server_endpoint(server.url), **kwargs)


# ------------------------------------------------------------------------- httpx

def test_httpx_caller_gets_a_verified_reply(server):
    sent = signed(server)
    response = post(server, sent.to_bytes())
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    reply = verify_reply(response.content, sent)
    assert reply.payload == {"action": "delivery", **COUNTS}
    assert reply.sender.endpoint == server.url


def test_the_library_client_signs_posts_and_verifies(server):
    from lingxi.serve.client import call, caller_endpoint
    from lingxi.session import load_protocol

    spec = load_protocol("word-count").spec
    result = call(server.url, {"action": "request", "text": TEXT}, spec=spec,
                  sender=caller_endpoint("alice"), key=ALICE_KEY.encode(),
                  algorithm="HMAC-SHA512")
    assert result.reply.payload["words"] == 3 and result.reply.receiver.agent_id == "alice"
    assert result.reply.signature_algorithm == "HMAC-SHA512"


def test_get_describes_who_to_address(server):
    info = httpx.get(server.url, timeout=30).json()
    assert info["agent"] == {"agent_id": SERVER_ID, "system_id": "lingxi",
                             "endpoint": server.url, "agent_name": "Word Count Service (Lingxi)"}
    assert info["protocol"]["protocol_id"] == server.info["protocol_id"]
    assert info["protocol"]["mode"] == "request_response"


@pytest.mark.parametrize("what", ["sender", "receiver", "timestamp", "payload", "signature",
                                  "algorithm"])
def test_over_http_every_tamper_is_a_401(server, what):
    doc = json.loads(signed(server).to_bytes())
    if what == "sender":
        doc["sender"]["agent_id"] = "bob"
    elif what == "receiver":
        doc["receiver"]["agent_id"] = "lx-elsewhere"
    elif what == "timestamp":
        doc["timestamp"] = doc["timestamp"][:-2] + ("1Z" if doc["timestamp"][-2] != "1" else "2Z")
    elif what == "payload":
        doc["payload"]["text"] = "tampered"
    elif what == "signature":
        doc["signature"] = "0" * 64
    else:
        doc["signature_algorithm"] = "HMAC-SHA512"
    response = post(server, json.dumps(doc).encode())
    assert response.status_code == 401
    assert error_of(response.content)["code"] == "envelope.bad_signature"
    assert response.headers["www-authenticate"].startswith("Synapse-HMAC")


def test_over_http_replay_stale_and_ttl(server):
    sent = signed(server)
    assert post(server, sent.to_bytes()).status_code == 200
    again = post(server, sent.to_bytes())
    assert (again.status_code, error_of(again.content)["code"]) == (409, "envelope.replay")
    stale = post(server, signed(server, clock=lambda: time.time() - 3600).to_bytes())
    assert (stale.status_code, error_of(stale.content)["code"]) == (401, "envelope.stale")
    expired = post(server, signed(server, clock=lambda: time.time() - 20, ttl=5).to_bytes())
    assert (expired.status_code, error_of(expired.content)["code"]) == (401, "envelope.expired")


def test_over_http_wrong_prefix_and_payload(server):
    wrong = post(server, signed(server, prefix="p2p").to_bytes())
    assert (wrong.status_code, error_of(wrong.content)["code"]) == (400, "envelope.type_mismatch")
    bad = post(server, signed(server, payload={"action": "request", "text": 7}).to_bytes())
    assert (bad.status_code, error_of(bad.content)["code"]) == (422, "message.wrong_type")


def _raw(url: str, data: bytes) -> tuple[bytes, bytes]:
    """Send ``data`` on a fresh connection and read the whole answer (head, body)."""
    host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(data)
        answer = b""
        while True:
            head, _, body = answer.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), None)
            if length is not None and len(body) >= length:
                return head, body[:length]
            chunk = sock.recv(65536)
            if not chunk:
                return head, body
            answer += chunk


def test_an_announced_oversized_body_is_refused_unread(server):
    """Only the headers are sent: the refusal comes without a byte of the body."""
    head, body = _raw(server.url, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      b"application/json\r\nContent-Length: 1048577\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert error_of(body)["code"] == "caller.body_too_large"


@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    """A server whose body cap is 1024 bytes (so an oversized body fits one read)."""
    from callerhelpers import ALICE_KEY, ServerProcess, register

    base = tmp_path_factory.mktemp("small")
    register(base / "callers.json", "alice", ALICE_KEY)
    proc = ServerProcess(base / "home", base / "callers.json", "--max-body", "1024")
    yield proc
    proc.stop()


def test_a_streamed_oversized_body_is_refused(small_server):
    chunks = b"".join(b"%x\r\n%s\r\n" % (300, b" " * 300) for _ in range(5))
    head, body = _raw(small_server.url, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
    assert head.startswith(b"HTTP/1.1 413")
    assert error_of(body)["code"] == "caller.body_too_large"


def test_a_body_under_the_cap_is_read_whole(small_server):
    sent = request(receiver=server_endpoint(small_server.url), payload={
        "action": "request", "text": "x" * 200})
    response = httpx.post(small_server.url, content=sent.to_bytes(), headers=JSON, timeout=30)
    assert response.status_code == 200 and verify_reply(response.content, sent)


def test_a_deeply_nested_body_is_refused(server):
    response = post(server, b"[" * 5000 + b"]" * 5000)
    assert (response.status_code, error_of(response.content)["code"]) == (400, "caller.too_deep")


@pytest.mark.parametrize("headers, code, status", [
    ({"Content-Type": "text/plain"}, "caller.bad_content_type", 415),
    ({"Content-Type": "application/x-www-form-urlencoded"}, "caller.bad_content_type", 415),
    ({}, "caller.bad_content_type", 415),
])
def test_the_body_must_be_json(server, headers, code, status):
    response = httpx.post(server.url, content=signed(server).to_bytes(), headers=headers,
                          timeout=30)
    assert (response.status_code, error_of(response.content)["code"]) == (status, code)


def test_other_paths_and_methods_are_coded_too(server):
    missing = httpx.post(server.url + "nope", content=b"{}", headers=JSON, timeout=30)
    assert (missing.status_code, error_of(missing.content)["code"]) == (404, "caller.not_found")
    put = httpx.put(server.url, content=b"{}", headers=JSON, timeout=30)
    assert (put.status_code, error_of(put.content)["code"]) == (405, "caller.bad_method")
    assert put.headers["allow"] == "GET, HEAD, POST"


def test_a_trickling_body_is_cut_off(tmp_path, callers_file):
    from callerhelpers import ServerProcess

    slow = ServerProcess(tmp_path / "home", callers_file, "--body-timeout", "0.5")
    try:
        host, port = slow.url.removeprefix("http://").rstrip("/").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=20) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{")
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = sock.recv(65536)  # the server answers without the rest of the body
                if not chunk:
                    break
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408")
        assert error_of(body)["code"] == "caller.timeout"
    finally:
        slow.stop()


def test_broken_http_gets_no_traceback(server):
    host, port = server.url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 4") and b"Traceback" not in answer


# ------------------------------------------------------------------------- curl

def _curl(server, body_file, *extra):
    return subprocess.run(["curl", "-sS", "--max-time", "30", "-w", "\n%{http_code}",
                           "-H", "Content-Type: application/json", "--data-binary",
                           f"@{body_file}", *extra, server.url],
                          capture_output=True, timeout=60, check=False)


def _split(proc) -> tuple[bytes, int]:
    body, _, status = proc.stdout.rpartition(b"\n")
    return body, int(status)


@needs_curl
def test_curl_caller_gets_a_verified_reply(server, tmp_path):
    sent = signed(server)
    (tmp_path / "env.json").write_bytes(sent.to_bytes())
    body, status = _split(_curl(server, tmp_path / "env.json"))
    assert status == 200, body
    assert verify_reply(body, sent).payload["lines"] == 2


@needs_curl
def test_curl_with_an_envelope_signed_by_lingxi_envelope_sign(server, tmp_path):
    """The documented shell-only path: `lingxi envelope sign` | curl."""
    key = tmp_path / "alice.key"
    key.write_text(ALICE_KEY + "\n")
    signed_env = subprocess.run(
        [sys.executable, "-m", "lingxi", "envelope", "sign", "--key-file", str(key),
         "--type", "caller:request", "--from", "alice", "--to", SERVER_ID,
         "--to-endpoint", server.url],
        input=json.dumps({"action": "request", "text": TEXT}).encode(), capture_output=True,
        timeout=60, check=True).stdout
    (tmp_path / "env.json").write_bytes(signed_env)
    body, status = _split(_curl(server, tmp_path / "env.json"))
    assert status == 200, body
    sent = request()  # only its sender id matters for the check below
    reply = json.loads(body)
    assert reply["payload"] == {"action": "delivery", **COUNTS}
    assert reply["reply_to"] == json.loads(signed_env)["id"] and reply["receiver"]["agent_id"] \
        == sent.sender.agent_id


@needs_curl
def test_curl_unsigned_and_tampered_envelopes_are_refused(server, tmp_path):
    doc = json.loads(signed(server).to_bytes())
    doc.pop("signature")
    (tmp_path / "unsigned.json").write_text(json.dumps(doc))
    body, status = _split(_curl(server, tmp_path / "unsigned.json"))
    assert (status, error_of(body)["code"]) == (401, "envelope.bad_signature")
    doc = json.loads(signed(server).to_bytes())
    doc["payload"]["text"] = "not what was signed"
    (tmp_path / "tampered.json").write_text(json.dumps(doc))
    body, status = _split(_curl(server, tmp_path / "tampered.json"))
    assert (status, error_of(body)["code"]) == (401, "envelope.bad_signature")


@needs_curl
def test_curl_oversized_and_malformed(server, tmp_path):
    (tmp_path / "big.json").write_bytes(b"[" + b"1," * 600_000 + b"1]")
    body, status = _split(_curl(server, tmp_path / "big.json", "-H", "Expect: 100-continue"))
    assert (status, error_of(body)["code"]) == (413, "caller.body_too_large")
    (tmp_path / "bad.json").write_bytes(b'{"version": "1.0.0",')
    body, status = _split(_curl(server, tmp_path / "bad.json"))
    assert (status, error_of(body)["code"]) == (400, "envelope.malformed")


# -------------------------------------------------- generated bodies: never a 5xx

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20)
_endpoint = st.fixed_dictionaries({"agent_id": st.sampled_from(["alice", "bob", SERVER_ID, ""])
                                   | st.text(max_size=10),
                                   "system_id": st.text(max_size=5),
                                   "endpoint": st.sampled_from(["lingxi://a", "x"])})
_field_values = {
    "id": st.uuids().map(str) | st.text(max_size=5), "version": st.sampled_from(["1.0.0",
                                                                                 "1.9.0", "2.0"]),
    "type": st.sampled_from(["caller:request", "p2p:request", "caller:ack"]) | st.text(
        max_size=12),
    "sender": _endpoint | _json, "receiver": _endpoint | _json,
    "payload": st.fixed_dictionaries({"action": st.sampled_from(["request", "ack", "x"]),
                                      "text": st.text(max_size=20) | _json}) | _json,
    "timestamp": st.sampled_from(["2026-06-27T15:30:00Z"]) | st.text(max_size=25),
    "signature": st.text(alphabet="0123456789abcdef", min_size=64, max_size=64) | _json,
    "signature_algorithm": st.sampled_from(["HMAC-SHA256", "HMAC-SHA512", ""]) | _json,
    "ttl": st.integers(-5, 10**12) | _json, "correlation_id": _json, "encrypt": _json,
}
_envelope_like = st.fixed_dictionaries({}, optional=_field_values)


def _check_answer(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    assert response.headers["content-type"] == "application/json"
    doc = json.loads(response.content)
    if response.status_code != 200:
        error_of(response.content)
    else:
        assert doc["type"].startswith("caller:")


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=_envelope_like | _json)
def test_generated_envelopes_never_get_a_5xx(server, doc):
    _check_answer(post(server, json.dumps(doc).encode()))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=400))
def test_generated_bytes_never_get_a_5xx(server, data):
    _check_answer(post(server, data))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=_json, correlation=st.none() | st.text(min_size=1, max_size=20),
       ttl=st.none() | st.integers(0, 10**6))
def test_generated_payloads_signed_by_alice_never_get_a_5xx(server, payload, correlation, ttl):
    body = payload if isinstance(payload, dict) else {"value": payload}
    action = body.get("action")
    kind = f"caller:{action}" if isinstance(action, str) and action.isalnum() else "caller:x"
    try:
        sent = signed(server, payload=body, type=kind, correlation_id=correlation, ttl=ttl)
    except Exception:  # noqa: BLE001 - the builder refuses it: nothing to send
        return
    _check_answer(post(server, sent.to_bytes()))
