"""Identity keys: created once under $LINGXI_HOME/identity with 0600, reloaded, guarded."""

from __future__ import annotations

import stat

import pytest

from lingxi.home import identity_dir
from lingxi.wire import IdentityError
from lingxi.wire.identity import KEY_FILE, Identity, agent_id_for, verify_ed25519


def test_first_use_creates_a_private_key_file_with_mode_0600(lingxi_home):
    identity, created = Identity.load_or_create()
    assert created
    key_file = identity_dir() / KEY_FILE
    assert key_file.is_relative_to(lingxi_home)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(identity_dir().stat().st_mode) == 0o700
    assert identity.agent_id == agent_id_for(identity.public_hex)
    assert identity.agent_id.startswith("lx-") and len(identity.public_hex) == 64


def test_second_use_loads_the_same_key():
    first, _ = Identity.load_or_create()
    second, created = Identity.load_or_create()
    assert not created
    assert second.public_hex == first.public_hex and second.created == first.created


def test_signatures_verify_against_the_public_key():
    identity, _ = Identity.load_or_create()
    signature = identity.sign(b"hello")
    assert verify_ed25519(identity.public_hex, signature, b"hello")
    assert not verify_ed25519(identity.public_hex, signature, b"hellO")
    assert not verify_ed25519("00" * 32, signature, b"hello")


def test_a_key_readable_by_others_is_refused():
    Identity.load_or_create()
    (identity_dir() / KEY_FILE).chmod(0o644)
    with pytest.raises(IdentityError) as info:
        Identity.load()
    assert info.value.code == "identity.insecure_permissions"


def test_missing_and_corrupt_identities_have_codes():
    with pytest.raises(IdentityError) as info:
        Identity.load()
    assert info.value.code == "identity.missing"
    identity_dir().mkdir(parents=True)
    key_file = identity_dir() / KEY_FILE
    key_file.write_text("not a key")
    key_file.chmod(0o600)
    with pytest.raises(IdentityError) as info:
        Identity.load()
    assert info.value.code == "identity.corrupt"


def test_an_existing_key_is_never_overwritten():
    identity, _ = Identity.load_or_create()
    with pytest.raises(FileExistsError):
        Identity.generate().save()
    assert Identity.load().public_hex == identity.public_hex


# ---- local state survives the machine (issue 9.9) ---------------------------------

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

# Runs `lingxi identity <command>` with a file-size limit: every write beyond
# LIMIT bytes fails with EFBIG, as on a full disk (the PEM key is 119 bytes).
_LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
from lingxi.cli import main
sys.argv = ["lingxi", "identity", *sys.argv[2:]]
main()
"""


def _lingxi_limited(limit: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _LIMITED, str(limit), *args],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))


def test_a_full_disk_leaves_no_key_and_reports_write_failed(lingxi_home):
    result = _lingxi_limited(60, "init")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "io.write_failed" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    folder = identity_dir()
    assert not (folder / KEY_FILE).exists()
    assert [p.name for p in folder.iterdir() if p.name != ".lock"] == []  # no temp file left
    # once there is room again, the next run simply works
    again = _lingxi_limited(1 << 20, "init", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["new"] is True
    assert Identity.load().public_hex == json.loads(again.stdout)["public_key"]


def test_a_zero_byte_key_counts_as_absent_and_is_replaced():
    folder = identity_dir()
    folder.mkdir(parents=True, mode=0o700)
    (folder / KEY_FILE).write_bytes(b"")
    (folder / KEY_FILE).chmod(0o600)
    assert not Identity.exists()
    with pytest.raises(IdentityError) as info:
        Identity.load()
    assert info.value.code == "identity.missing"
    identity, created = Identity.load_or_create()
    assert created and Identity.load().public_hex == identity.public_hex
    assert stat.S_IMODE((folder / KEY_FILE).stat().st_mode) == 0o600


def test_save_never_replaces_a_key_and_leaves_no_temp_file():
    first, _ = Identity.load_or_create()
    with pytest.raises(FileExistsError):
        Identity.generate().save()
    assert Identity.load().public_hex == first.public_hex
    assert sorted(p.name for p in identity_dir().iterdir()) == sorted(
        [".lock", "identity.json", KEY_FILE])  # no temporary file left behind


_RACE = """
import json, sys, time
from lingxi.wire.identity import Identity
while time.time() < float(sys.argv[1]):
    time.sleep(0.001)
identity, created = Identity.load_or_create()
print(json.dumps([identity.public_hex, created]))
"""


def test_concurrent_first_runs_agree_on_one_whole_key():
    import time

    for attempt in range(3):  # each attempt in a fresh home
        home = identity_dir().parent / f"race-{attempt}"
        env = {**os.environ, "LINGXI_HOME": str(home)}
        start = str(time.time() + 1.5)
        procs = [subprocess.Popen([sys.executable, "-c", _RACE, start], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(6)]
        results = [p.communicate(timeout=60) for p in procs]
        assert all(p.returncode == 0 for p in procs), [err for _, err in results]
        keys = [json.loads(out) for out, _ in results]
        assert len({key for key, _ in keys}) == 1
        assert sum(created for _, created in keys) == 1
