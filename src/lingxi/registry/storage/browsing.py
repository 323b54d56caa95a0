"""Browse's page statement, written once per dialect and filter set.

A page is the open invitations newest first, cut at a cursor. The statement can also
have the database render each row as the JSON text the API serves (:func:`browse_sql`
with ``encoded``), so the server neither builds a dict per row nor encodes it again:
the text is byte for byte what :func:`lingxi.registry.storage.invitations.view`
rendered by ``json.dumps`` (compact, non-ASCII as itself) gives for the same row —
``tests/registry/test_browse_page.py`` holds the two side by side over generated rows.

Most of an item never changes after the post: the invitation's own facts, its
protocol's name and type, its host's nickname (rows nothing updates), and its status,
``open`` on every browsed row. That part is rendered once, by the post's ``INSERT``
(:func:`invitation_insert`, into ``browse_item``), and a page adds to it only what
later writes move: the host's rating and table counts and its last heartbeat. A page
then renders three values a row instead of seventeen and reads no protocol or agent
row. The stored text is the row's as posted — the log's record of the post holds the
same facts, which is what ``invitation`` proves; browse proves nothing, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

COLUMNS = ("invitation_id", "protocol_id", "host_agent_id", "host_public_key", "endpoint",
           "options", "note", "status", "created_at", "expires_at", "session_id",
           "guest_agent_id", "claim_deadline", "host_seen_at", "seq")
ITEM = "browse_item"  # the item's fixed part, stored at the post (:func:`invitation_insert`)


def _param(name: str, postgres: bool) -> str:
    return f"%({name})s" if postgres else f":{name}"


def iso_sql(column: str, postgres: bool) -> str:
    """SQL text of ``records.iso`` of a float epoch column (a time after 1970), exactly:
    the second and microsecond ``datetime.fromtimestamp`` takes (the fraction times
    10**6, one IEEE multiplication, rounded half to even; a microsecond that rounds to
    10**6 carries into the second), then the millisecond cut, not rounded.

    PostgreSQL's ``round(float8)`` rounds half to even, and its ``MS`` cuts the
    microseconds. SQLite rounds the fraction half up, which gives the same millisecond:
    the two differ only on an exact half above an even microsecond count ``m``, and
    ``m + 1`` starts a new millisecond only for an odd ``m``; its ``%f`` then prints the
    whole milliseconds it is given (its clock counts milliseconds, rounding to the
    nearest, and these are whole already)."""
    if postgres:  # the whole second, then the microseconds as an interval (both exact)
        whole = f"floor({column})"
        return (f"to_char(to_timestamp({whole}) AT TIME ZONE 'UTC' "
                f"+ round(({column} - {whole}) * 1000000::float8) * interval '1 microsecond', "
                f"'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')")
    whole = f"CAST({column} AS INTEGER)"  # the floor, for a time after 1970
    scaled = f"(({column} - {whole}) * 1000000.0)"
    micros = (f"({whole} * 1000000 + CAST({scaled} AS INTEGER) "
              f"+ ({scaled} - CAST({scaled} AS INTEGER) >= 0.5))")
    return f"strftime('%Y-%m-%dT%H:%M:%fZ', {micros} / 1000 / 1000.0, 'unixepoch')"


def _text(expr: str, postgres: bool) -> str:
    """A JSON string (or ``null``) of a text expression; both databases escape exactly
    the characters ``json.dumps(ensure_ascii=False)`` does, in the same forms."""
    if postgres:
        return f"coalesce(to_json({expr})::text, 'null')"
    return f"json_quote({expr})"


def _pairs(fields: list[tuple[str, str]], opens: bool) -> str:
    """The concatenation of ``"key":value`` pairs (value: a JSON text expression), comma
    separated; with ``opens`` the first one opens the object."""
    parts = [f"'{',' if i or not opens else '{'}\"{key}\":' || {value}" for i, (key, value)
             in enumerate(fields)]
    return " || ".join(parts)


def _object(fields: list[tuple[str, str]]) -> str:
    """A JSON object of ``fields``."""
    return _pairs(fields, True) + " || '}'"


def _fixed(postgres: bool, column: Callable[[str], str], protocol: Callable[[str], str],
           nickname: str) -> str:
    """The item's fixed part: the JSON object opened, from ``invitation_id`` through
    ``host_nickname`` — the invitation's own facts as posted, its protocol's name and
    type and its host's nickname (rows nothing updates), and its ``status``, ``open`` on
    every browsed row (the statement's own filter: the comparisons ``invitations.status``
    makes, so the claim's fields never show). ``column(name)``: the SQL of one of the
    invitation's columns; ``protocol(name)``: of a column of its protocol. ``options``
    is stored as canonical JSON, which ``json.dumps(json.loads(...))`` gives back
    unchanged."""
    def text(expr: str) -> str:
        return _text(expr, postgres)

    return _pairs([
        *[(c, text(column(c))) for c in ("invitation_id", "protocol_id", "host_agent_id",
                                         "host_public_key", "endpoint")],
        ("options", column("options")), ("note", text(column("note"))),
        ("status", "'\"open\"'"),
        ("created_at", _iso_string(column("created_at"), postgres)),
        ("expires_at", _iso_string(column("expires_at"), postgres)),
        ("seq", _number(column("seq"))), ("protocol_name", text(protocol("name"))),
        ("protocol_type", text(protocol("type"))), ("host_nickname", text(nickname)),
    ], True)


def _iso_string(column: str, postgres: bool) -> str:
    return f"'\"' || {iso_sql(column, postgres)} || '\"'"


def _number(expr: str) -> str:
    return f"CAST({expr} AS TEXT)"


def _live(postgres: bool) -> str:
    """The item's rest, which later writes move: the host's rating and table counts in
    the protocol (``r``, ``ts``; null when there are none) and when it was last heard
    from; the object closed."""
    rating = ("CASE WHEN r.rating IS NULL THEN 'null' ELSE "
              + _object([("rating", _number("r.rating")), ("games", _number("r.games"))])
              + " END")
    tables = ("CASE WHEN ts.completed IS NULL THEN 'null' ELSE "
              + _object([("completed", _number("ts.completed")),
                         ("left", _number('ts."left"')),
                         ("timed_out", _number("ts.timed_out"))]) + " END")
    return _pairs([("host_rating", rating), ("host_tables", tables),
                   ("host_seen_at", _iso_string("i.host_seen_at", postgres))],
                  False) + " || '}'"


def _item_json(postgres: bool) -> str:
    """One browse row as the API serves it: the fixed part stored with the row at its
    post (``ITEM``), then the live part."""
    return f"i.{ITEM} || {_live(postgres)}"


INSERTED = ("invitation_id", "protocol_id", "host_agent_id", "host_public_key", "endpoint",
            "options", "note", "status", "created_at", "expires_at", "seq", "session_id",
            "guest_agent_id", "claim_deadline", "host_seen_at")
_TYPES = {"created_at": "float8", "expires_at": "float8", "seq": "bigint"}
_FIXED = ("invitation_id", "protocol_id", "host_agent_id", "host_public_key", "endpoint",
          "options", "note", "created_at", "expires_at", "seq")  # the parameters _fixed reads


@functools.cache
def invitation_insert(postgres: bool, columns: tuple[str, ...] = INSERTED,
                      prefix: str = "") -> str:
    """A posted invitation's ``INSERT`` of ``columns`` (parameters named ``prefix`` +
    the column; they include every one :func:`_fixed` reads) with its item's fixed
    part (``ITEM``), rendered by the database from the same parameters, the protocol's
    row and the host's ``agents`` row as the page query would render it."""
    def param(name: str) -> str:
        return _param(prefix + name, postgres)

    def column(name: str) -> str:  # typed: PostgreSQL infers no type in to_json, and
        value = param(name)  # one parameter has one type wherever it is used
        return f"CAST({value} AS {_TYPES.get(name, 'text')})" if postgres else value

    def protocol(name: str) -> str:
        return (f"(SELECT ip.{name} FROM protocols ip "
                f"WHERE ip.protocol_id = {param('protocol_id')})")

    nickname = (f"(SELECT ia.nickname FROM agents ia "
                f"WHERE ia.agent_id = {param('host_agent_id')})")
    names = ", ".join(f'"{c}"' for c in (*columns, ITEM))
    values = ", ".join(column(c) if c in _FIXED else param(c) for c in columns)
    return (f'INSERT INTO "invitations" ({names}) VALUES ({values}, '
            f"{_fixed(postgres, column, protocol, nickname)})")


def item_sql(postgres: bool) -> str:
    """The fixed part of an ``invitations`` row (unaliased) as :func:`invitation_insert`
    renders it at the post, from the stored row, its protocol's and its host's."""
    return _fixed(postgres, lambda c: f"invitations.{c}",
                  lambda c: (f"(SELECT fp.{c} FROM protocols fp "
                             "WHERE fp.protocol_id = invitations.protocol_id)"),
                  "(SELECT fa.nickname FROM agents fa "
                  "WHERE fa.agent_id = invitations.host_agent_id)")


@functools.cache
def browse_sql(postgres: bool, protocol: bool, host: bool, kind: bool, name: bool,
               cursor: bool, encoded: bool = False) -> str:
    """Browse's page of open invitations, newest first, with the filters that are set
    (parameters ``now``, ``presence`` (the presence timeout), ``n`` and ``protocol``,
    ``host``, ``type``, ``name``, ``before``). Its rows: every column ``view`` reads, or
    with ``encoded`` ``(seq, item)``, ``item`` the row's JSON text.

    An invitation is browsable while stored ``open``, or ``claimed`` with the claim
    lapsed, unexpired and with its host present — the comparisons of
    ``invitations.status``, written as it writes them, so every row it returns is
    ``open`` there. Each of the two is a range of ``ix_invitations_status_seq`` read
    backwards from the cursor, stopping after ``n`` matches; their union, at most ``2n``
    seqs, is cut to ``n`` first and only those rows are looked up and joined. (One
    ``status IN (…)`` would make either database read every open invitation and sort
    them for each page; ``i.seq IN (union)`` let PostgreSQL's generic plan — the one a
    prepared statement settles on — walk the whole seq index from the newest invitation
    down to the cursor, a merge semi-join reading every row above the page.)"""
    def param(name: str) -> str:
        return _param(name, postgres)

    def branch(alias: str, state: str) -> str:
        joined = kind or name
        where = [f"{alias}.status = '{state}'", f"{alias}.expires_at > {param('now')}",
                 f"{param('now')} < {alias}.host_seen_at + {param('presence')}"]
        if state == "claimed":
            where.append(f"{alias}.claim_deadline <= {param('now')}")
        if protocol:
            where.append(f"{alias}.protocol_id = {param('protocol')}")
        if host:
            where.append(f"{alias}.host_agent_id = {param('host')}")
        if kind:
            where.append(f"{alias}p.type = {param('type')}")
        if name:
            where.append(f"lower({alias}p.name) LIKE {param('name')} ESCAPE '\\'")
        if cursor:
            where.append(f"{alias}.seq < {param('before')}")
        join = (f" JOIN protocols {alias}p ON {alias}p.protocol_id = {alias}.protocol_id"
                if joined else "")
        return (f"SELECT seq FROM (SELECT {alias}.seq FROM invitations {alias}{join} "
                f"WHERE {' AND '.join(where)} ORDER BY {alias}.seq DESC "
                f"LIMIT {param('n')}) AS {alias}_page")

    selected = (f"i.seq, {_item_json(postgres)}" if encoded else
                ", ".join(f"i.{c}" for c in COLUMNS)
                + ", p.name AS protocol_name, p.type AS protocol_type, "
                "a.nickname AS host_nickname, r.rating AS host_rating, r.games AS host_games, "
                "ts.completed AS host_tables_completed, ts.\"left\" AS host_tables_left, "
                "ts.timed_out AS host_tables_timed_out")
    named = ("" if encoded else  # the stored item holds the protocol's and the nickname
             "JOIN protocols p ON p.protocol_id = i.protocol_id "
             "LEFT OUTER JOIN agents a ON a.agent_id = i.host_agent_id ")
    return (
        f"SELECT {selected} "
        f"FROM ({branch('o', 'open')} UNION ALL {branch('c', 'claimed')} "
        f"ORDER BY seq DESC LIMIT {param('n')}) AS page "
        f"JOIN invitations i ON i.seq = page.seq {named}"
        "LEFT OUTER JOIN ratings r ON r.agent_id = i.host_agent_id "
        "AND r.protocol_id = i.protocol_id "
        "LEFT OUTER JOIN table_standings ts ON ts.agent_id = i.host_agent_id "
        "AND ts.protocol_id = i.protocol_id "
        "ORDER BY i.seq DESC"
    )
