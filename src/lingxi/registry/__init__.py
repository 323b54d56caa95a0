"""The community registry: publish protocols, find each other, join by invitation.

Sub-packages, each with one job:

- ``models``: pure, dependency-light records and checks shared by server and
  client (request signatures, tickets, the transparency log, receipts, UI
  bundles, the convergence fingerprint). Agents import it without the server's
  dependencies; the host's handshake uses :func:`models.ticket.verify_ticket`.
- ``storage``: SQLAlchemy 2 tables, Alembic migrations and the atomic writes.
- ``server``: the Starlette app (JSON API, OpenAPI, read-only page).
- ``client``: the httpx client and the local copy used by ``registry verify``.
- ``witness``: the witness process (follows a log, cosigns, serves its cosignature).

Importing this package imports none of them.
"""
