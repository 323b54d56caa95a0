"""Small doors of the UI server (issue 17, item 8): a served folder never follows a symbolic
link (the page as well as its assets), and --open-ui hands the browser a one-time launch
address instead of the token (a browser's command line is readable by any local user)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.session.drivers.live import LiveSession
from lingxi.ui import start_ui

SECRET = "outside the ui folder: private"


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    ui = tmp_path / "proto" / "ui"
    ui.mkdir(parents=True)
    outside = tmp_path / "private.html"
    outside.write_text(f"<p>{SECRET}</p>")
    return ui, outside


async def _get(server, path: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        return await client.get(path)


async def test_a_symlinked_index_is_not_followed(tmp_path) -> None:
    ui, outside = _folder(tmp_path)
    os.symlink(outside, ui / "index.html")
    server = await start_ui(LiveSession(), ui, page="trusted")
    try:
        page = await _get(server, "/")
    finally:
        await server.close()
    assert page.status_code == 200 and SECRET not in page.text
    assert page.headers["x-lingxi-page"] == "generic"


@pytest.mark.parametrize("layout", ["file", "inner-file", "folder"])
async def test_no_asset_is_served_through_a_symlink(tmp_path, layout) -> None:
    ui, outside = _folder(tmp_path)
    (ui / "index.html").write_text("<p>the page</p>")
    (ui / "real.css").write_text("b {}")
    if layout == "file":
        os.symlink(outside, ui / "leak.html")
        path = "/leak.html"
    elif layout == "inner-file":  # even a link to a file inside the folder is refused
        os.symlink(ui / "real.css", ui / "alias.css")
        path = "/alias.css"
    else:
        os.symlink(tmp_path, ui / "up")
        path = "/up/private.html"
    server = await start_ui(LiveSession(), ui, page="trusted")
    try:
        refused = await _get(server, path)
        fine = await _get(server, "/real.css")
    finally:
        await server.close()
    assert refused.status_code == 404 and SECRET not in refused.text
    assert fine.status_code == 200


async def test_a_launch_address_works_once_and_holds_no_token(tmp_path) -> None:
    server = await start_ui(LiveSession(), None)
    try:
        launch = server.launch_url()
        assert server.token not in launch and "/launch/" in launch
        path = launch[len(server.base_url):]
        first = await _get(server, path)
        again = await _get(server, path)
        other = await _get(server, "/launch/not-a-code")
    finally:
        await server.close()
    assert first.status_code == 200
    assert f'<meta name="lingxi-token" content="{server.token}">' in first.text
    assert "script-src 'self'" in first.headers["content-security-policy"]
    assert first.headers["referrer-policy"] == "no-referrer"
    assert again.status_code == other.status_code == 403
    assert again.json()["code"] == "ui.launch_used"


def test_open_ui_gives_the_browser_the_launch_address_not_the_token(tmp_path, monkeypatch
                                                                     ) -> None:
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    result = CliRunner().invoke(cli, ["host", "--protocol-dir", "rock-paper-scissors",
                                      "--endpoint", "tcp://127.0.0.1:0", "--open-ui",
                                      "--accept-timeout", "1"],
                                env={"LINGXI_HOME": str(tmp_path)})
    printed = next(line for line in result.stderr.splitlines() if line.startswith("ui: "))
    token = printed.split("token=", 1)[1]
    assert len(opened) == 1 and "/launch/" in opened[0] and token not in opened[0]
