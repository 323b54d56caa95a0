"""Names people can trust (issue 18.8): ASCII nicknames, confusables refused, nicknames
beside keys, registry text escaped, endpoint policy, the page's headers and Host check."""

from __future__ import annotations

import httpx
import pytest

from lingxi.cli.registry import _row
from lingxi.errors import LingxiError
from lingxi.registry.models.records import check_endpoint, nickname_skeleton
from lingxi.registry.server.app import create_app
from lingxi.wire.identity import Identity

from .conftest import rps_spec


async def test_unicode_look_alikes_and_confusables_are_refused(api, alice, bob):
    assert (await api.register(alice, "alice")).status_code == 201
    cyrillic = await api.register(bob, "\u0430lice")  # Cyrillic a
    assert cyrillic.status_code == 422
    assert cyrillic.json()["error"]["code"] == "registry.bad_nickname"
    for lookalike in ("Alice", "a1ice", "aIice", "ALICE"):
        answer = await api.register(bob, lookalike)
        assert answer.status_code == 409, lookalike
        assert answer.json()["error"]["code"] == "registry.nickname_confusable"
    assert (await api.register(bob, "bob")).status_code == 201
    carol = Identity.from_seed(b"c" * 32)
    assert (await api.register(carol, "rnallory")).status_code == 201
    assert (await api.register(Identity.from_seed(b"d" * 32), "mallory")).json()["error"][
        "code"] == "registry.nickname_confusable"


def test_skeletons():
    assert nickname_skeleton("Alice") == nickname_skeleton("a1ice") == nickname_skeleton("alice")
    assert nickname_skeleton("bob") != nickname_skeleton("rob")


@pytest.mark.parametrize("endpoint,lan,public", [
    ("tcp://127.0.0.1:7001", True, True),
    ("tcp://[::1]:7001", True, True),
    ("tcp://localhost:7001", True, True),
    ("tcp://8.8.8.8:7001", True, True),
    ("tcp://10.1.0.2:7001", True, False),
    ("tcp://192.168.1.5:7001", True, False),
    ("tcp://169.254.169.254:80", False, False),
    ("tcp://[::ffff:169.254.169.254]:80", False, False),
    ("tcp://[fe80::1]:80", False, False),
    ("tcp://0.0.0.0:80", False, False),
    ("tcp://224.0.0.1:80", False, False),
    ("tcp://255.255.255.255:80", False, False),
])
def test_endpoint_policy(endpoint, lan, public):
    for policy, ok in (("lan", lan), ("public", public)):
        if ok:
            assert check_endpoint(endpoint, policy) == endpoint
        else:
            with pytest.raises(LingxiError) as caught:
                check_endpoint(endpoint, policy)
            assert caught.value.code == "registry.endpoint_refused"


async def test_a_metadata_endpoint_is_refused_at_post(api, alice, world):
    answer = await api.signed(alice, "POST", "/v1/invitations", {
        "protocol_id": world, "endpoint": "tcp://169.254.169.254:80", "options": {}})
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "registry.endpoint_refused"


async def test_browse_rows_name_the_host_beside_its_key_and_escape_registry_text(api, alice,
                                                                                 world):
    await api.signed(alice, "POST", "/v1/invitations", {
        "protocol_id": world, "endpoint": "tcp://127.0.0.1:7001", "options": {},
        "note": "\x1b]0;pwned\x07"})
    page = (await api.get("/v1/invitations")).json()
    row = page["items"][0]
    assert row["host_nickname"] == "alice"
    from lingxi.cli.common import safe_line

    line = safe_line(_row({**row, "protocol_name": "evil\x1b[2J"}))
    assert f"alice ({alice.agent_id})" in line
    assert "\x1b" not in line


async def test_pages_send_security_headers_and_check_host(store, alice):
    app = create_app(store, allowed_hosts=("127.0.0.1", "localhost", "::1"))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8470") as http:
        page = await http.get("/")
        assert page.status_code == 200
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["x-frame-options"] == "DENY"
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert (await http.get("/v1/info")).headers["x-content-type-options"] == "nosniff"
        rebound = await http.get("/", headers={"host": "evil.example:8470"})
        assert rebound.status_code == 400
        assert rebound.json()["error"]["code"] == "registry.bad_host"
        assert (await http.get("/", headers={"host": "[::1]:8470"})).status_code == 200
    assert rps_spec()  # the page itself is exercised in Chromium by test_page_browser
