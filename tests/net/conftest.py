from relayhelpers import nats_servers, relay_keys  # noqa: F401  (fixtures)
