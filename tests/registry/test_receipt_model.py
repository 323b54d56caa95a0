"""The registry's check of a posted receipt: every malformed or lying field is named."""

from __future__ import annotations

import pytest

from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.registry.models.receipt import DOMAIN, KIND, pair_problems, receipt_problems
from lingxi.wire.identity import Identity

HOST = Identity.from_seed(b"h" * 32)
CHAINS = {"host_to_guest": {"count": 2, "head": "a" * 64},
          "guest_to_host": {"count": 1, "head": "b" * 64}}


def signed(**over):
    body = {"kind": KIND, "session_id": "s-1", "protocol_id": "p" * 64, "role": "host",
            "public_key": HOST.public_hex, "status": "completed", "chains": CHAINS,
            "head": sha256_hex(canonical_bytes(CHAINS)), "handshake": "h1", **over}
    return {**body, "signature": HOST.sign(DOMAIN + canonical_bytes(body)).hex()}


def problems(receipt):
    return receipt_problems(receipt, role="host", public_key=HOST.public_hex,
                            protocol_id="p" * 64)


def test_a_good_receipt_has_no_problem():
    assert problems(signed()) == []


@pytest.mark.parametrize(("receipt", "named"), [
    ("not an object", "not an object"),
    (signed(kind="other/1"), "kind"),
    (signed(role="guest"), "role"),
    (signed(public_key="00" * 32), "not signed by this party"),
    (signed(protocol_id="q" * 64), "another protocol"),
    (signed(session_id=7), "session id or a status"),
    (signed(chains={"host_to_guest": CHAINS["host_to_guest"]}), "chain heads"),
    (signed(chains={**CHAINS, "guest_to_host": {"count": "1", "head": "b" * 64}}),
     "chain heads"),
    (signed(chains=[1, 2]), "chain heads"),
    (signed(head="c" * 64), "chain heads"),
    ({**signed(), "status": "aborted"}, "signature does not verify"),
    ({**signed(), "signature": "zz" * 64}, "signature does not verify"),
    ({**signed(), "signature": 5}, "signature does not verify"),
])
def test_each_lie_or_malformed_field_is_named(receipt, named):
    found = problems(receipt)
    assert found and any(named in line for line in found), found


def test_two_receipts_that_disagree_are_named():
    host = signed()
    assert pair_problems(host, signed()) == []
    other = signed(session_id="s-2", handshake="h2",
                   chains={**CHAINS, "host_to_guest": {"count": 2, "head": "d" * 64}})
    found = pair_problems(host, other)
    assert any("different wire sessions" in p for p in found)
    assert any("different handshakes" in p for p in found)
    assert any("host_to_guest chain" in p for p in found)
