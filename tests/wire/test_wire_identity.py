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
