"""Pure registry records and checks, shared by the server, the client and the host.

Stdlib, ``cryptography`` and ``lingxi.canonical`` only: no SQLAlchemy, no
Starlette, no httpx, no session layer.
"""
