"""Schemathesis against the OpenAPI document: no input makes the registry answer 5xx.

Two passes: every operation as schemathesis generates it (signature headers
are then random strings), and every signed operation with bodies that
schemathesis generates but signed properly by a registered agent, so the
generated bodies reach the validation behind the signature check.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error, status_code_conformance
from starlette.testclient import TestClient

from lingxi.registry.models.signing import sign_request
from lingxi.registry.server.app import create_app
from lingxi.registry.storage.store import Store
from lingxi.wire.identity import Identity

from .conftest import rps_spec

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
AGENT = Identity.from_seed(b"z" * 32)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('st') / 'registry.db'}")
    store.set_limits(None, None)  # one agent signs hundreds of fuzzed bodies; all must reach
    app = create_app(store)
    with TestClient(app) as client:
        body = json.dumps({"nickname": "fuzzer", "public_key": AGENT.public_hex}).encode()
        client.post("/v1/identities", content=body,
                    headers=sign_request(AGENT, "POST", "/v1/identities", body))
        body = json.dumps({"spec": rps_spec()}).encode()
        answer = client.post("/v1/protocols", content=body,
                             headers=sign_request(AGENT, "POST", "/v1/protocols", body))
        assert answer.status_code == 201
    yield app
    store.close()


@pytest.fixture(scope="module")
def schema(app):
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def _operations():
    from lingxi.registry.server.openapi import openapi_document

    return [(path, method) for path, item in openapi_document()["paths"].items()
            for method in item]


@pytest.mark.parametrize("path,method", _operations())
def test_generated_requests_never_get_a_5xx(schema, path, method):
    operation = schema[path][method.upper()]

    @SETTINGS
    @given(case=operation.as_strategy())
    def run(case):
        case.call_and_validate(checks=[not_a_server_error, status_code_conformance])

    run()


SIGNED = [(p, m) for p, m in _operations() if m == "post" and p != "/v1/protocols/preflight"]


@pytest.mark.parametrize("path,method", SIGNED)
def test_signed_generated_bodies_never_get_a_5xx(app, schema, path, method):
    operation = schema[path][method.upper()]
    client = TestClient(app, raise_server_exceptions=True)
    pid = client.get("/v1/protocols").json()["items"][0]["protocol_id"]

    @SETTINGS
    @given(case=operation.as_strategy(), use_real_id=st.booleans())
    def run(case, use_real_id):
        params = dict(case.path_parameters or {})
        if use_real_id and "protocol_id" in params:
            params["protocol_id"] = pid
        target = path.format(**params) if params else path
        body = json.dumps(case.body if case.body is not None else {}).encode()
        headers = sign_request(AGENT, "POST", target, body)
        response = client.post(target, content=body,
                               headers={**headers, "content-type": "application/json"})
        assert response.status_code < 500, response.text

    run()
