"""The seed's rules for an AgentEndpoint's ``system_id`` and ``endpoint`` (seed §3.5).

The seed makes both required: ``system_id`` names the system the agent
belongs to, ``endpoint`` is its callback URL. A string that is present but
empty, or an "endpoint" that no client could call back, is not what the seed
defines, so the envelope parser refuses them with ``envelope.malformed``
(:meth:`lingxi.wire.envelope.AgentEndpoint.from_dict` calls
:func:`check_endpoint_fields` once per endpoint it has not seen before).

What counts as a URL here (docs/wire.md "Envelope rules"): an absolute URI in
the hierarchical form ``scheme://rest`` of RFC 3986 — a scheme of a letter
then letters, digits, ``+ . -`` (at most 32), then ``://``, then at least one
character, every character printable ASCII that RFC 3986 allows (unreserved,
reserved, or a ``%XX`` escape). That admits ``http://host:port/``,
``tcp://host:port`` and ``lingxi://agent-id``, and refuses text with spaces,
quotes, controls or non-ASCII characters (an IRI must be written in its
percent-encoded URI form). The text was already checked to be a string of
bounded length by the parser.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from lingxi.wire.errors import EnvelopeError

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+",
                  re.ASCII)
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def endpoint_url_problem(text: str) -> str | None:
    """Why ``text`` is not an endpoint URL in the sense above, or None when it is one."""
    if not _URL.fullmatch(text):
        return "must be a URL of the form scheme://… (printable ASCII, no spaces)"
    if _BAD_ESCAPE.search(text):
        return "has a '%' that does not start a %XX escape"
    return None


def lingxi_endpoint(agent_id: str) -> str:
    """The endpoint an agent without a callback URL presents: ``lingxi://`` and its id,
    percent-encoded so that any id (spaces, controls, non-ASCII) gives a valid URL."""
    return "lingxi://" + quote(agent_id, safe="")


def check_endpoint_fields(system_id: str, endpoint: str, path: str) -> None:
    """Refuse an empty ``system_id`` or an ``endpoint`` that is not a URL (``envelope.malformed``).

    ``path`` is the endpoint's JSON path (``$.sender``, ``$.receiver``).
    """
    if not system_id:
        raise EnvelopeError("envelope.malformed", "system_id must not be empty",
                            path=f"{path}.system_id")
    problem = endpoint_url_problem(endpoint)
    if problem is not None:
        raise EnvelopeError("envelope.malformed", f"endpoint {problem}", path=f"{path}.endpoint")
