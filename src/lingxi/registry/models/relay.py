"""The relay's trust and the credentials the registry signs for it (pure).

The registry owns three NKeys: an operator (the relay trusts it, through its
JWT in the nats-server configuration), a system account (the server's own) and
the ``lingxi`` account, whose key signs every relay user. For each claimed
invitation the host and the guest each get one user JWT:

- the subject this side sends on and the one it receives on, both of that one
  session (``lingxi.relay.<session id>.host`` / ``.guest``) — nothing else may
  be published or subscribed to, so a credential is worthless for any other
  session, and a client without one is refused by the server;
- an expiry (``exp``, short: minutes), a payload cap (one wire frame and the
  relay header) and a subscription cap.

The user key is the client's own: it sends its public NKey, keeps the seed,
and signs the server's nonce when it connects. The registry never holds a
user's secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lingxi.natsauth import NKey, account_jwt, decode_public, operator_jwt, user_jwt

SUBJECT_ROOT = "lingxi.relay"
ROLES = ("host", "guest")
DEFAULT_TTL = 900          # seconds a credential lives; the client renews it before then
MAX_TTL = 3600
FRAME_CAP = 1024 * 1024    # the wire's default frame cap
RELAY_OVERHEAD = 64        # the relay header of one frame, with room to spare
SERVER_MAX_PAYLOAD = 2 * 1024 * 1024
USER_SUBSCRIPTIONS = 2


def session_subject(session_id: str, sender: str) -> str:
    """The subject ``sender`` (host or guest) publishes on in ``session_id``."""
    if sender not in ROLES:
        raise ValueError(f"sender is host or guest, not {sender!r}")
    if not session_id or any(c in session_id for c in ".*> \t\r\n"):
        raise ValueError("a session id cannot hold '.', '*', '>' or spaces")
    return f"{SUBJECT_ROOT}.{session_id}.{sender}"


def other(role: str) -> str:
    return "guest" if role == "host" else "host"


@dataclass(frozen=True)
class RelayKeys:
    """The registry's relay keys (kept in its database, like its signing key)."""

    operator: NKey
    system: NKey
    account: NKey

    @classmethod
    def generate(cls) -> RelayKeys:
        return cls(NKey.generate("operator"), NKey.generate("account"),
                   NKey.generate("account"))

    def to_seeds(self) -> dict[str, str]:
        return {"operator": self.operator.seed, "system": self.system.seed,
                "account": self.account.seed}

    @classmethod
    def from_seeds(cls, seeds: dict[str, str]) -> RelayKeys:
        keys = cls(NKey.from_seed(seeds["operator"]), NKey.from_seed(seeds["system"]),
                   NKey.from_seed(seeds["account"]))
        if (keys.operator.role, keys.system.role, keys.account.role) != \
                ("operator", "account", "account"):
            raise ValueError("relay seeds of the wrong roles")
        return keys

    def trust(self, now: int) -> dict[str, Any]:
        """What a nats-server needs to admit this registry's users (all public)."""
        return {"operator_jwt": operator_jwt(self.operator, name="lingxi-registry",
                                             system_account=self.system.public, now=now),
                "system_account": self.system.public,
                "account": self.account.public,
                "accounts": {
                    self.system.public: account_jwt(self.operator, self.system.public,
                                                    name="SYS", now=now),
                    self.account.public: account_jwt(
                        self.operator, self.account.public, name="lingxi", now=now,
                        limits={"payload": FRAME_CAP + RELAY_OVERHEAD, "wildcards": False}),
                }}

    def credential(self, *, user_key: str, role: str, session_id: str, now: int,
                   ttl: int = DEFAULT_TTL, frame_cap: int = FRAME_CAP) -> dict[str, Any]:
        """The user JWT for ``role`` in ``session_id``, and what the client needs with it."""
        decode_public(user_key, "user")  # ValueError for anything but a public user nkey
        send, receive = session_subject(session_id, role), session_subject(session_id,
                                                                            other(role))
        expires = now + max(30, min(ttl, MAX_TTL))
        token = user_jwt(self.account, user_key, name=f"{role}:{session_id}", now=now,
                         expires=expires, publish=[send], subscribe=[receive],
                         payload=frame_cap + RELAY_OVERHEAD, subs=USER_SUBSCRIPTIONS)
        return {"jwt": token, "role": role, "session_id": session_id, "send_subject": send,
                "receive_subject": receive, "expires_at": expires,
                "max_payload": frame_cap + RELAY_OVERHEAD}


def probe_subject(agent_id: str, nonce: str) -> str:
    """The one subject a ``lingxi doctor`` probe may use: its own, for a minute."""
    if not agent_id.replace("-", "").isalnum() or not nonce.isalnum():
        raise ValueError("agent id and nonce are letters, digits (and '-')")
    return f"lingxi.probe.{agent_id}.{nonce}"


def probe_credential(keys: RelayKeys, *, user_key: str, agent_id: str, nonce: str,
                     now: int) -> dict[str, Any]:
    """A 60-second user JWT that may publish and subscribe on its own probe subject only."""
    decode_public(user_key, "user")
    subject = probe_subject(agent_id, nonce)
    token = user_jwt(keys.account, user_key, name=f"probe:{agent_id}", now=now,
                     expires=now + 60, publish=[subject], subscribe=[subject], payload=1024,
                     subs=1)
    return {"jwt": token, "role": "probe", "session_id": f"probe-{nonce}",
            "send_subject": subject, "receive_subject": subject, "expires_at": now + 60,
            "max_payload": 1024}


def server_config(trust: dict[str, Any], *, listen: str | None = None,
                  cluster_listen: str | None = None, routes: tuple[str, ...] = (),
                  cluster_name: str = "lingxi", monitor: str | None = None) -> str:
    """A nats-server 2.9 configuration that admits exactly the registry's users.

    Without ``listen`` it is the fragment to merge into an existing deployment
    (every node of a cluster gets the same trust lines).
    """
    lines = ["# lingxi relay: only users signed by the registry's account get in;",
             "# each may publish and subscribe on its own session's subjects only."]
    if listen:
        lines.append(f"listen: {listen}")
    if monitor:
        lines.append(f"http: {monitor}")
    lines += [f"operator: {trust['operator_jwt']}",
              f"system_account: {trust['system_account']}",
              "resolver: MEMORY",
              "resolver_preload: {"]
    lines += [f"  {account}: {token}" for account, token in sorted(trust["accounts"].items())]
    lines += ["}",
              f"max_payload: {SERVER_MAX_PAYLOAD}",
              "max_pending: 67108864",       # a client's pending bytes before it is cut off
              "write_deadline: \"10s\"",     # a client that does not read is a slow consumer
              "max_control_line: 4096"]
    if cluster_listen:
        lines += ["cluster {", f"  name: {cluster_name}", f"  listen: {cluster_listen}"]
        if routes:
            lines.append("  routes: [" + ", ".join(routes) + "]")
        lines.append("}")
    return "\n".join(lines) + "\n"
