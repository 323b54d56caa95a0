"""``import lingxi.wire`` stays free of network modules; the lazy namespace is complete."""

from __future__ import annotations

import subprocess
import sys

import lingxi.wire as wire

NETWORK = ("asyncio", "socket", "ssl")


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {NETWORK!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return set(out.stdout.split())


def test_importing_the_package_loads_no_network_module():
    assert _modules_after("import lingxi.wire") == set()


def test_the_envelope_level_api_loads_no_network_module():
    code = ("from lingxi.wire import (AgentEndpoint, Envelope, EnvelopeBuilder, ReceivePipeline,"
            " ReplayGuard, sign_envelope, seal_envelope, open_envelope, control_payload,"
            " EnvelopeError, TransportError, HandshakeError, Identity, format_rfc3339)")
    assert _modules_after(code) == set()


def test_the_probe_would_see_a_network_import():  # the check above can fail
    assert _modules_after("from lingxi.wire import SecureChannel") == set(NETWORK)


def test_every_exported_name_resolves_and_all_is_the_export_table():
    assert wire.__all__ == sorted(wire._EXPORTS)
    for name in wire.__all__:
        assert getattr(wire, name) is getattr(
            __import__(f"lingxi.wire.{wire._EXPORTS[name]}", fromlist=[name]), name)


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    try:
        wire.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("an unknown name resolved")
    from lingxi.wire import handshake
    assert handshake.HANDSHAKE_VERSION == 2


def test_an_in_memory_protocol_test_of_a_built_in_loads_no_network_module(tmp_path):
    # the whole `lingxi protocol test` run, in a fresh process with its own home
    import os
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('NET', *[m for m in ('asyncio', 'socket', 'ssl')"
             " if m in sys.modules]))\n"
             "from lingxi.cli import main\n"
             "sys.argv = ['lingxi', 'protocol', 'test', 'chat']\n"
             "main()\n")
    env = {**os.environ, "LINGXI_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "PASS" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "NET"  # nothing after the marker
