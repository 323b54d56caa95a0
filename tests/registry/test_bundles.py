"""UI bundles: static files only, content-addressed, immutable, size-capped."""

from __future__ import annotations

import base64

import pytest

from lingxi.registry.models.bundle import MAX_BUNDLE_BYTES, MAX_FILE_BYTES, check_files

HTML = b"<!doctype html><p>board</p>"


def _body(files: dict[str, bytes]) -> dict:
    return {"files": [{"path": p, "content_base64": base64.b64encode(c).decode()}
                      for p, c in files.items()]}


async def test_publish_fetch_content_addressed_and_idempotent(api, world, alice, bob):
    files = {"index.html": HTML, "css/app.css": b"p{color:red}"}
    first = await api.signed(alice, "POST", f"/v1/protocols/{world}/bundles", _body(files))
    assert first.status_code == 201, first.text
    bid = first.json()["bundle_id"]
    assert bid == check_files(files)["bundle_id"]
    again = await api.signed(alice, "POST", f"/v1/protocols/{world}/bundles", _body(files))
    assert again.status_code == 200 and again.json()["bundle_id"] == bid
    fetched = (await api.get(f"/v1/protocols/{world}/bundles/{bid}")).json()
    assert {f["path"]: base64.b64decode(f["content_base64"]) for f in fetched["files"]} == files
    listed = (await api.get(f"/v1/protocols/{world}")).json()["bundles"]
    assert [b["bundle_id"] for b in listed] == [bid]
    changed = await api.signed(alice, "POST", f"/v1/protocols/{world}/bundles",
                               _body({**files, "index.html": HTML + b"!"}))
    assert changed.json()["bundle_id"] != bid  # a change is a new bundle, never an edit


@pytest.mark.parametrize("files", [
    {"hooks.py": b"print('x')"},
    {"run.sh": b"echo hi"},
    {"tool": b"data"},
    {"app.js": b"#!/usr/bin/env node\nconsole.log(1)"},
    {"logo.png": b"\x7fELF\x02\x01\x01"},
    {"setup.exe": b"MZ\x90\x00"},
    {"index.html": b"MZ pretend"},
    {"game.pyc": b"\x6f\x0d\x0d\x0a"},
    {"assets.zip": b"PK\x03\x04"},
    {"../escape.html": HTML},
    {"/abs.html": HTML},
    {"a//b.html": HTML},
    {".hidden.html": HTML},
])
async def test_executables_and_bad_paths_are_refused(api, world, alice, files):
    before = await api.log_size()
    answer = await api.signed(alice, "POST", f"/v1/protocols/{world}/bundles", _body(files))
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "registry.bundle_refused"
    assert await api.log_size() == before


async def test_size_caps(api, world, alice):
    big = {"a.txt": b"x" * (MAX_FILE_BYTES + 1)}
    answer = await api.signed(alice, "POST", f"/v1/protocols/{world}/bundles", _body(big))
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "registry.bundle_too_large"
    many = {f"f{i}.txt": b"y" * (MAX_FILE_BYTES - 1) for i in range(3)}
    assert sum(map(len, many.values())) > MAX_BUNDLE_BYTES
    answer = await api.signed(alice, "POST", f"/v1/protocols/{world}/bundles", _body(many))
    assert answer.status_code == 413


async def test_bundle_for_unknown_protocol(api, world, alice):
    answer = await api.signed(alice, "POST", f"/v1/protocols/{'e' * 64}/bundles",
                              _body({"index.html": HTML}))
    assert answer.status_code == 404


async def test_only_the_registrant_publishes_bundles(api, world, alice, bob):
    """A page runs beside the person's session: any agent could otherwise publish one for
    any protocol. Bob did not register the protocol, so his bundle is refused, and nothing
    of it is stored or listed."""
    files = {"index.html": HTML + b"<script>steal()</script>"}
    refused = await api.signed(bob, "POST", f"/v1/protocols/{world}/bundles", _body(files))
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "registry.not_registrant"
    listed = (await api.get(f"/v1/protocols/{world}")).json()["bundles"]
    assert listed == []
    bid = check_files(files)["bundle_id"]
    assert (await api.get(f"/v1/protocols/{world}/bundles/{bid}")).status_code == 404
