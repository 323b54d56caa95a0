"""The join ticket: every forgery, mismatch, expiry and reuse is `handshake.ticket_refused`."""

from __future__ import annotations

import json

import pytest

from lingxi.registry.errors import TicketRefused
from lingxi.registry.models.keys import ServerKey, b64url, unb64url
from lingxi.registry.models.ticket import MAX_LENGTH, UsedTickets, issue_ticket, verify_ticket
from lingxi.wire.identity import Identity

SERVER = ServerKey.generate()
HOST = Identity.from_seed(b"h" * 32)
GUEST = Identity.from_seed(b"g" * 32)
NOW = 1_800_000_000


def ticket(**over) -> str:
    args = {"invitation_id": "inv-1", "session_id": "ses-1", "host_agent_id": HOST.agent_id,
            "guest_public_key": GUEST.public_hex, "expires_at": NOW + 60, **over}
    return issue_ticket(SERVER, **args)


def check(text, **over):
    args = {"server_public_key": SERVER.public_hex, "invitation_id": "inv-1",
            "host_agent_id": HOST.agent_id, "guest_public_key": GUEST.public_hex, "now": NOW,
            **over}
    return verify_ticket(text, **args)


def refused(text, reason_part: str, **over) -> None:
    with pytest.raises(TicketRefused) as caught:
        check(text, **over)
    assert caught.value.code == "handshake.ticket_refused"
    assert reason_part in caught.value.reason
    assert "\n" not in str(caught.value)


def test_a_good_ticket_verifies():
    claims = check(ticket())
    assert claims.guest_agent_id == GUEST.agent_id and claims.session_id == "ses-1"
    assert len(ticket()) <= MAX_LENGTH


def test_mismatches():
    refused(ticket(), "another invitation", invitation_id="inv-2")
    refused(ticket(), "another host", host_agent_id="lx-0000000000000000")
    refused(ticket(), "another guest key", guest_public_key=HOST.public_hex)
    refused(ticket(), "signature", server_public_key=ServerKey.generate().public_hex)
    refused(ticket(), "signature", server_public_key="zz")


def test_expiry_is_exclusive():
    refused(ticket(), "expired", now=NOW + 60)
    assert check(ticket(), now=NOW + 59)


def test_tampered_claims_or_signature():
    payload, signature = ticket().split(".")
    claims = json.loads(unb64url(payload))
    claims["expires_at"] += 3600
    forged = b64url(json.dumps(claims, sort_keys=True, separators=(",", ":")).encode())
    refused(forged + "." + signature, "signature")
    # a character in the middle carries six bits of the signature (the last one carries two,
    # so replacing the tail could decode to the same bytes with a random server key)
    flipped = signature[:10] + ("B" if signature[10] != "B" else "C") + signature[11:]
    assert unb64url(flipped) != unb64url(signature)
    refused(payload + "." + flipped, "signature")


def test_a_ticket_signed_by_another_server():
    other = ServerKey.generate()
    text = issue_ticket(other, invitation_id="inv-1", session_id="ses-1",
                        host_agent_id=HOST.agent_id, guest_public_key=GUEST.public_hex,
                        expires_at=NOW + 60)
    refused(text, "signature")


def _signed(claims: dict) -> str:
    from lingxi.canonical import canonical_bytes
    from lingxi.registry.models.ticket import DOMAIN

    payload = canonical_bytes(claims)
    return b64url(payload) + "." + b64url(SERVER.sign(DOMAIN + payload))


def test_well_signed_but_malformed_claims():
    good = json.loads(unb64url(ticket().split(".")[0]))
    refused(_signed({**good, "v": 2}), "version")
    refused(_signed({**good, "extra": 1}), "expected fields")
    refused(_signed({k: v for k, v in good.items() if k != "nonce"}), "expected fields")
    refused(_signed({**good, "expires_at": "soon"}), "integer")
    refused(_signed({**good, "guest_agent_id": HOST.agent_id}), "agent id")
    refused(_signed({**good, "nonce": "xyz"}), "malformed")
    refused(_signed([1, 2]), "expected fields")


@pytest.mark.parametrize("text", ["", "x" * (MAX_LENGTH + 1), "one-part", "a.b.c", "a+b.c/d",
                                  "YQ.YQ", 42, None])
def test_garbage(text):
    with pytest.raises(TicketRefused):
        check(text)


def test_single_use():
    used = UsedTickets()
    claims = check(ticket())
    used.spend(claims, NOW)
    with pytest.raises(TicketRefused, match="already used"):
        used.spend(check(ticket(nonce=claims.nonce)), NOW)
    used.spend(check(ticket()), NOW)  # another ticket (fresh nonce) is fine
