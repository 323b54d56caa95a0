"""The registry client: :class:`~.api.RegistryClient` and the local :class:`~.ledger.Ledger`."""
