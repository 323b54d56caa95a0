"""Fixtures for the P2A caller tests: a callers file, an in-process service, a real server."""

from __future__ import annotations

import time

import pytest
from callerhelpers import ALICE_KEY, BOB_KEY, ServerProcess, register, server_endpoint

from lingxi.serve.callers import CallerBook
from lingxi.serve.service import Service
from lingxi.session import load_protocol


@pytest.fixture
def callers_file(tmp_path):
    path = tmp_path / "callers.json"
    register(path, "alice", ALICE_KEY)
    register(path, "bob", BOB_KEY)
    return path


@pytest.fixture
def service(callers_file):
    return Service(load_protocol("word-count"), server_endpoint(),
                   CallerBook(callers_file, refuse=frozenset({"lx-server"})), clock=time.time,
                   started_at=time.time() - 3600)  # as if serving for an hour


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One real ``lingxi serve`` per test module (alice and bob registered)."""
    base = tmp_path_factory.mktemp("served")
    path = base / "callers.json"
    register(path, "alice", ALICE_KEY)
    register(path, "bob", BOB_KEY)
    proc = ServerProcess(base / "home", path)
    yield proc
    proc.stop()
