"""The registry server: the Starlette app (:mod:`.app`) and its uvicorn runner (:mod:`.run`)."""
