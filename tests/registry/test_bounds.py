"""No 500s: bodies are depth-bounded before anything parses them, a crash keeps the
connection usable, 405 names the allowed methods (issue 18.5)."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.registry.models.jsonbody import MAX_DEPTH, depth, parse_object
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store

from .conftest import rps_spec
from .servers import free_port

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{}:, \u00e9'), max_size=6)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                    lambda inner: st.lists(inner, max_size=6)
                    | st.dictionaries(TEXT, inner, max_size=6), max_leaves=60)


def nesting(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    return 0


@SETTINGS
@given(value=JSON)
def test_depth_counts_nesting_on_the_bytes_whatever_the_strings_hold(value):
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert depth(text.encode()) == nesting(value)


@SETTINGS
@given(levels=st.integers(MAX_DEPTH + 1, 5000), width=st.integers(0, 50),
       opener=st.sampled_from(["[", '{"k":']))
def test_deep_and_wide_bodies_are_refused_with_a_code(levels, width, opener):
    closer = "]" if opener == "[" else "}"
    body = (opener * levels + ",".join(["1"] * width if opener == "[" else []) + closer * levels)
    with pytest.raises(Exception) as caught:
        parse_object(body.encode())
    assert getattr(caught.value, "code", None) == "registry.too_deep"


def test_wide_but_shallow_bodies_still_parse():
    data, _ = parse_object(json.dumps({"a": list(range(20000)), "b": [[1]] * 5000}).encode())
    assert len(data["a"]) == 20000


def deep(levels: int) -> bytes:
    return b'{"spec":' + b"[" * levels + b"]" * levels + b"}"


async def test_deep_bodies_get_400_before_and_after_the_signature(api, alice, world):
    for path in ("/v1/protocols/preflight", "/v1/protocols", "/v1/invitations"):
        unsigned = await api.http.post(path, content=deep(1000),
                                       headers={"content-type": "application/json"})
        assert unsigned.status_code == 400, unsigned.text
        assert unsigned.json()["error"]["code"] == "registry.too_deep"
        signed = await api.signed(alice, "POST", path, raw=deep(1000))
        assert signed.status_code == 400, signed.text
        assert signed.json()["error"]["code"] == "registry.too_deep"
    assert (await api.signed(alice, "POST", "/v1/protocols", {"spec": rps_spec()})
            ).status_code == 200  # the registry still answers normally


async def test_405_carries_allow_with_every_method_of_the_path(api):
    answer = await api.http.delete("/v1/protocols")
    assert answer.status_code == 405
    assert answer.json()["error"]["code"] == "registry.method_not_allowed"
    assert set(answer.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "POST"}
    answer = await api.http.put("/v1/log/head")
    assert answer.status_code == 405
    assert set(answer.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}


class _Uvicorn:
    """A registry app served by uvicorn in a thread, on a free port."""

    def __init__(self, app) -> None:
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, port=self.port, log_level="critical",
                                                    lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def test_after_a_500_the_same_keep_alive_connection_keeps_working(sqlite_url, monkeypatch):
    store = Store(sqlite_url)
    try:
        def broken() -> dict:
            raise RuntimeError("a bug")

        monkeypatch.setattr(store, "info", broken)
        with _Uvicorn(create_app(store)) as url, httpx.Client(base_url=url) as http:
            ports = set()
            for _ in range(15):
                crash = http.get("/v1/info")
                assert crash.status_code == 500
                assert crash.json()["error"]["code"] == "registry.internal"
                assert "Traceback" not in crash.text and "a bug" not in crash.text
                fine = http.get("/v1/log/head", extensions={"trace": None})
                assert fine.status_code == 200
                ports.add(fine.extensions["network_stream"].get_extra_info("socket")
                          .getsockname()[1])
            assert len(ports) == 1  # one connection throughout: never closed under us
    finally:
        store.close()
