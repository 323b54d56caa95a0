"""P2A: a request_response protocol served over HTTP to callers outside any session.

- :mod:`.callers`: the callers file (who may call, with which HMAC key);
- :mod:`.limits`: body size and nesting bounds;
- :mod:`.service`: one signed ``caller:`` envelope in, one signed reply (or
  one coded refusal) out, through the wire pipeline and the session core's
  request_response machine (``lingxi.session.answer_once``);
- :mod:`.app`, :mod:`.run`: the Starlette app and its uvicorn runner
  (``lingxi serve``);
- :mod:`.client`: the caller's side (``lingxi call``).

The model, the HTTP contract, every code and the threat model are in
docs/callers.md. Nothing here is imported by ``import lingxi.serve``.
"""
