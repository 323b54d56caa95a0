"""One machine per flow mode; see :mod:`lingxi.session.core.registry`."""
