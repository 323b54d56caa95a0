"""``import lingxi.wire`` stays free of network modules; the surface names every export."""

from __future__ import annotations

import subprocess
import sys
import types

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
    assert _modules_after("from lingxi.wire.channel import SecureChannel") == set(NETWORK)


def test_all_is_sorted_and_every_name_is_defined_on_the_surface():
    assert wire.__all__ == sorted(wire.__all__)
    public = {name for name, value in vars(wire).items() if not name.startswith("_")
              and not isinstance(value, types.ModuleType) and name != "annotations"}
    assert public == set(wire.__all__)


def test_the_network_names_live_in_their_own_modules_not_on_the_surface():
    from lingxi.wire import channel, connection, handshake, transport
    assert handshake.HANDSHAKE_VERSION == 2
    for module, name in ((channel, "SecureChannel"), (connection, "serve_one"),
                         (transport, "connect_tcp"), (handshake, "client_handshake")):
        assert hasattr(module, name) and not hasattr(wire, name)


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
