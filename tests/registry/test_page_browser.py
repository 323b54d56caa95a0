"""The read-only page at `/` and a protocol's page, rendered by Chromium from a real server."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from lingxi.registry.client.api import RegistryClient
from lingxi.wire.identity import Identity

from .conftest import rps_spec
from .servers import ServerProcess

pytestmark = pytest.mark.browser
CHROMIUM = os.environ.get("LINGXI_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        message = f"Chromium not found at {CHROMIUM} (make browser installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("page")
    server = ServerProcess(f"sqlite:///{folder / 'registry.db'}", str(folder / "home"))
    server.wait_ready()

    async def fill():
        from lingxi.session.record.receipts import receipt_body, sign_receipt
        from lingxi.session.record.transcript import Transcript

        me, guest_key = Identity.from_seed(b"p" * 32), Identity.from_seed(b"q" * 32)
        host, guest = RegistryClient(server.url, me), RegistryClient(server.url, guest_key)
        await host.register("page-host")
        await guest.register("page-guest")
        pid = (await host.register_protocol(rps_spec()))["protocol_id"]
        played = await host.post_invitation(pid, endpoint="tcp://127.0.0.1:7000")
        claim = await guest.claim(played["invitation_id"])
        await host.confirm(played["invitation_id"], claim.session_id)
        transcript = Transcript()
        transcript.add("guest_to_host", {"payload": {"action": "join"}}, "sent")
        for who, role, client in ((me, "host", host), (guest_key, "guest", guest)):
            receipt = sign_receipt(receipt_body(transcript, session_id="wire", protocol_id=pid,
                                                role=role, public_key=who.public_hex,
                                                status="completed"), who)
            await client.post_receipt(claim.session_id, receipt)
        await host.post_invitation(pid, endpoint="tcp://127.0.0.1:7001",
                                   options={"best_of": 5}, note="<script>alert(1)</script>")
        await host.aclose()
        await guest.aclose()
        return pid, claim.session_id

    try:
        yield server, asyncio.run(fill())
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(populated):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.errors = errors
        yield page
        browser.close()


def test_home_lists_protocols_open_invitations_and_finished_sessions(populated, page):
    server, (pid, session_id) = populated
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server.url + "/")
    assert page.title() == "overview"
    assert page.locator("#protocols").inner_text().count("Rock-Paper-Scissors") == 1
    invitations = page.locator("#invitations").inner_text()
    assert "tcp://127.0.0.1:7001" in invitations and '"best_of": 5' in invitations
    assert "tcp://127.0.0.1:7000" not in invitations  # claimed and finished: not open
    assert "<script>alert(1)</script>" in invitations  # shown as text, never run
    sessions = page.locator("#sessions").inner_text()
    assert session_id in sessions and "verified" in sessions
    assert dialogs == [] and page.errors == []


def test_protocol_page_shows_its_id_and_spec(populated, page):
    server, (pid, _) = populated
    page.goto(server.url + "/")
    page.click("text=Rock-Paper-Scissors (Lingxi)")
    page.wait_for_url(f"**/protocols/{pid}")
    assert page.locator("#protocol-id").inner_text() == pid
    assert '"commit_reveal"' in page.locator("#spec").inner_text()
    assert page.errors == []


def test_docs_page_lists_operations_and_tries_a_get(populated, page):
    server = populated[0]
    page.goto(server.url + "/docs")
    page.wait_for_selector("section.op")
    assert page.locator("section.op").count() >= 20
    info = page.locator("section.op", has_text="GET /v1/info")
    info.locator("button").click()
    # A function, not a bare expression: Playwright evals a bare expression on every poll,
    # and this page's CSP (rightly) refuses eval after the first, CSP-exempt, check.
    page.wait_for_function("() => document.querySelector('section.op pre').textContent.length > 0")
    assert "server_public_key" in info.locator("pre").inner_text()
    assert page.errors == []
