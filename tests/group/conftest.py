"""The relay fixtures of tests/net (a nats-server of the test's own, a relay key set)."""

from net.relayhelpers import nats_servers, relay_keys  # noqa: F401  (fixtures)
