from relayhelpers import nats_servers, processes, relay_keys  # noqa: F401  (fixtures)
