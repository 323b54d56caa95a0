"""inter_group escalation: one group hands a signed result to another (issue 23.3).

The statement names the source group, a head of its log (and its position),
the target group and the result; the source's sequencer and every member the
result names (the winners of a table, the members who voted) sign it with
their identity keys. It travels as an ``inter_group:escalate`` Synapse
envelope (HMAC per the seed, with the key the two hosts share) and is
recorded as an ``escalate`` entry in both logs, so either group, or a third
party with both records, can check that the result comes from the source's
log and was accepted by the target.
"""

from __future__ import annotations

import uuid
from typing import Any

from lingxi.group.errors import GroupError
from lingxi.group.keys import Signer, digest, verify
from lingxi.group.log import GroupLog, entry_hash, genesis
from lingxi.wire.envelope import AgentEndpoint, Envelope
from lingxi.wire.errors import EnvelopeError
from lingxi.wire.signature import sign_envelope, verify_signature

STATEMENT_DOMAIN = b"lingxi/group/escalation/v1"
TYPE = "inter_group:escalate"


def statement(log: GroupLog, to_group: str, result: dict[str, Any],
              signers: list[str]) -> dict[str, Any]:
    """What the source group says: its head now, the target, the result, who must sign."""
    return {"from_group": log.group_id, "from_seq": log.seq, "from_head": log.head,
            "to_group": to_group, "result": result, "signers": list(signers)}


def cosign(signer: Signer, stmt: dict[str, Any]) -> str:
    return signer.sign(digest(STATEMENT_DOMAIN, stmt))


def make_escalation(stmt: dict[str, Any], signatures: dict[str, str], sender: AgentEndpoint,
                    receiver: AgentEndpoint, hmac_key: bytes, timestamp: str) -> dict[str, Any]:
    """The ``inter_group:escalate`` envelope from the source's host to the target's host."""
    env = Envelope(id=str(uuid.UUID(bytes=digest(b"lingxi/group/escalation-id", stmt)[:16])),
                   type=TYPE, sender=sender, receiver=receiver,
                   payload={"action": "escalate", "statement": stmt,
                            "signatures": dict(signatures)},
                   timestamp=timestamp, group_id=stmt["from_group"])
    return sign_envelope(env, hmac_key).to_dict()


def check_escalation(envelope: Any, *, hmac_key: bytes | None = None,
                     source: GroupLog | None = None) -> dict[str, Any]:
    """The statement of a valid escalation envelope; raises with an ``escalate.*`` code.

    ``hmac_key`` checks the seed's signature (the hosts' shared key; a third
    party without it checks the Ed25519 signatures only). ``source`` checks
    the named head against the source group's log.
    """
    try:
        env = Envelope.from_dict(envelope)
        if env.type != TYPE or env.group_id is None:
            raise EnvelopeError("envelope.bad_type", f"expected {TYPE} with a group_id")
        if hmac_key is not None:
            verify_signature(env, hmac_key)
    except (EnvelopeError, ValueError) as error:
        raise GroupError("escalate.bad_envelope", f"not a valid escalation: {error}") from None
    payload = env.payload
    stmt, sigs = payload.get("statement"), payload.get("signatures")
    if not isinstance(stmt, dict) or not isinstance(sigs, dict) or not isinstance(
            stmt.get("signers"), list) or stmt.get("from_group") != env.group_id:
        raise GroupError("escalate.bad_envelope", "an escalation carries a statement and its "
                         "signatures")
    for key in stmt["signers"]:
        if not verify(key, digest(STATEMENT_DOMAIN, stmt), sigs.get(key)):
            raise GroupError("escalate.bad_signature", f"{str(key)[:16]}… has not signed the "
                             "escalation", culprit=None, evidence={"statement": stmt})
    if source is not None:
        if source.group_id != stmt["from_group"]:
            raise GroupError("escalate.unknown_head", "the escalation is from another group")
        seq = stmt.get("from_seq")
        heads = [genesis(source.group_id)] + [entry_hash(e) for e in source.entries]
        if type(seq) is not int or not 0 <= seq < len(heads) or heads[seq] != stmt.get(
                "from_head"):
            raise GroupError("escalate.unknown_head", f"head {str(stmt.get('from_head'))[:16]}… "
                             f"is not position {seq} of {source.group_id}'s log")
        if source.sequencer not in stmt["signers"]:
            raise GroupError("escalate.bad_signature", "the source sequencer has not signed")
    return stmt

