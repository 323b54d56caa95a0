"""llm actor against a local fake OpenAI-compatible endpoint (127.0.0.1, stdlib http.server)."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lingxi.actor.actors import ActorError, create_actor
from lingxi.actor.actors.llm import endpoint, extract_selection

from .views import make_view

FRAME = b"\x89PNG\r\n\x1a\n-fake-frame-bytes"
VIEW = make_view(FRAME)

REPLIES = {
    "/fenced/v1/chat/completions": 'Sure!\n```json\n{"type": "swap_pair", "candidateId": "ms007"}\n```',
    "/bare/v1/chat/completions": 'I will wait. {"type":"wait","ms":250,"reason":"let it settle"} ok',
    "/garbage/v1/chat/completions": "I think tapping the red one would be fun.",
    "/invalid/v1/chat/completions": '{"type": "teleport"}',
}


class FakeEndpoint(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def log_message(self, *args):   # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):   # the client timed out first
            pass

    def do_POST(self):  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEndpoint.seen.append({"path": self.path, "body": body,
                                  "auth": self.headers.get("Authorization")})
        if self.path.startswith("/slow"):
            time.sleep(1.0)
        if self.path.startswith("/error"):
            return self._send(500, b'{"error": "model overloaded"}')
        if self.path.startswith("/html"):
            return self._send(200, b"<html>hello</html>", "text/html")
        if self.path.startswith("/nochoices"):
            return self._send(200, b'{"id": "x"}')
        # The only check the fake makes: the view JSON and the frame image were both sent.
        user = next(m for m in body["messages"] if m["role"] == "user")
        texts = [p["text"] for p in user["content"] if p["type"] == "text"]
        images = [p["image_url"]["url"] for p in user["content"] if p["type"] == "image_url"]
        sent_view = json.loads(texts[0].split("\n", 1)[1])
        prefix = "data:image/png;base64,"
        if sent_view != VIEW or len(images) != 1 or not images[0].startswith(prefix) \
                or base64.b64decode(images[0][len(prefix):]) != FRAME:
            return self._send(400, b'{"error": "view or image missing"}')
        reply = REPLIES.get(self.path, '{"type":"wait","ms":100}')
        answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}]}
        return self._send(200, json.dumps(answer).encode())


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeEndpoint)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _actor(base: str, route: str, **extra):
    options = {"url": f"{base}/{route}/v1", "model": "fake-vision-1", **extra}
    return create_actor("llm", seed=5, options=options)


def test_sends_view_and_frame_and_parses_a_fenced_reply(server):
    FakeEndpoint.seen.clear()
    with _actor(server, "fenced") as actor:
        assert actor.select(VIEW, FRAME) == {"type": "swap_pair", "candidateId": "ms007"}
    request = FakeEndpoint.seen[-1]
    assert request["path"] == "/fenced/v1/chat/completions"
    assert request["body"]["model"] == "fake-vision-1"
    assert request["auth"] is None


def test_parses_json_inside_prose(server):
    with _actor(server, "bare") as actor:
        assert actor.select(VIEW, FRAME) == {"type": "wait", "ms": 250, "reason": "let it settle"}


def test_schema_invalid_json_is_returned_for_the_harness_to_reject(server):
    with _actor(server, "invalid") as actor:
        assert actor.select(VIEW, FRAME) == {"type": "teleport"}


@pytest.mark.parametrize(("route", "code"), [
    ("garbage", "actor.llm_unparseable"),
    ("error", "actor.llm_http"),
    ("html", "actor.llm_bad_response"),
    ("nochoices", "actor.llm_bad_response"),
])
def test_failures_are_typed_errors(server, route, code):
    with _actor(server, route) as actor, pytest.raises(ActorError) as err:
        actor.select(VIEW, FRAME)
    assert err.value.code == code


def test_timeout_is_a_typed_error(server):
    with _actor(server, "slow", timeout="0.2") as actor, pytest.raises(ActorError) as err:
        actor.select(VIEW, FRAME)
    assert err.value.code == "actor.llm_timeout"


def test_unreachable_endpoint_is_a_typed_error():
    with create_actor("llm", seed=1, options={"url": "http://127.0.0.1:9/v1", "model": "m",
                                              "timeout": "2"}) as actor, pytest.raises(ActorError) as err:
        actor.select(VIEW, FRAME)
    assert err.value.code in ("actor.llm_http", "actor.llm_timeout")


def test_api_key_comes_from_the_named_env_var(server, monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-123")
    FakeEndpoint.seen.clear()
    with _actor(server, "fenced", api_key_env="FAKE_LLM_KEY") as actor:
        actor.select(VIEW, FRAME)
    assert FakeEndpoint.seen[-1]["auth"] == "Bearer sk-test-123"
    # The key never travels in the body.
    assert "sk-test-123" not in json.dumps(FakeEndpoint.seen[-1]["body"])
    monkeypatch.delenv("FAKE_LLM_KEY")
    with pytest.raises(ActorError) as err:
        _actor(server, "fenced", api_key_env="FAKE_LLM_KEY")
    assert err.value.code == "actor.llm_no_key"


@pytest.mark.parametrize(("url", "want"), [
    ("http://h:1/v1", "http://h:1/v1/chat/completions"),
    ("http://h:1/v1/", "http://h:1/v1/chat/completions"),
    ("http://h:1", "http://h:1/v1/chat/completions"),
    ("https://h/api/v1/chat/completions", "https://h/api/v1/chat/completions"),
])
def test_endpoint_url_forms(url, want):
    assert endpoint(url) == want


def test_bad_options():
    for options in ({"url": "ftp://h/v1", "model": "m"}, {"url": "http://h/v1", "model": "m", "timeout": "soon"}):
        with pytest.raises(ActorError) as err:
            create_actor("llm", seed=1, options=options)
        assert err.value.code == "actor.bad_option"


def test_extract_selection_takes_the_first_object():
    assert extract_selection('```\n{"type":"key","key":"Enter"}\n```\n{"type":"wait","ms":100}') == \
        {"type": "key", "key": "Enter"}
    with pytest.raises(ActorError):
        extract_selection("[1, 2, 3]")
