"""Messages for differential tests: built from a spec, on and around every bound.

Shared by the verdict property tests, the differential test against the
published validator, and ``benchmarks/record_reference_verdicts.py`` (which
records that validator's verdicts on :func:`corpus_cases` and on a seeded
draw of :func:`cases`).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from lingxi.contract import Spec
from lingxi.contract.limits import HEX_DIGITS, ID_CHARS, TICKET_MAX

DIRECTIONS = ("host_to_guest", "guest_to_host", None)

# ---------------------------------------------------------------- values

EDGE_STRINGS = (
    st.builds(lambda n, up: ("ab" * 70)[:n].upper() if up else ("0123456789abcdef" * 9)[:n],
              st.sampled_from([0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 127, 128, 129]),
              st.booleans())
    | st.text(alphabet=HEX_DIGITS, max_size=140)
    | st.text(alphabet=ID_CHARS + " /", max_size=140)
    | st.text(alphabet=st.sampled_from("aé灵😀\ud800\udfff \n\x00,"), max_size=20)
    | st.text(max_size=30)
)
SCALARS = (st.none() | st.booleans() | st.integers(-2**66, 2**66) | st.floats()
           | EDGE_STRINGS | st.sampled_from([0, 1, -1, 2, 5, 12, 99, 100, 255]))
JSON = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=6)
                    | st.dictionaries(st.text(max_size=6), kids, max_size=5), max_leaves=25)
VALUES = JSON | st.lists(EDGE_STRINGS, max_size=8)


def spoil(text: str, bad: str, at: int) -> str:
    """``text`` with the character at ``at`` replaced by ``bad`` (when both are non-empty)."""
    if not bad or not text:
        return text
    at %= len(text)
    return text[:at] + bad + text[at + 1:]


def hex_strings(sizes: st.SearchStrategy[int]) -> st.SearchStrategy[str]:
    """Lowercase hex of the drawn size, now and then with one character spoiled."""
    return st.builds(lambda size, bad, at: spoil(("0123456789abcdef" * 40)[:size], bad, at),
                     sizes, st.sampled_from(["", "", "", "A", "g", " ", "é", "\ud800"]),
                     st.integers(0, 200))


def near(defn: dict) -> st.SearchStrategy:
    """Values built to pass, or to miss ``defn`` by one thing (a length, a character)."""
    ftype = defn["type"]
    if ftype in ("hash", "key"):
        return hex_strings(st.sampled_from([63, 64, 64, 64, 65])) | VALUES
    if ftype == "signature":
        return hex_strings(st.sampled_from([127, 128, 128, 129])) | VALUES
    if ftype == "nonce":
        return hex_strings(st.integers(14, 66)) | VALUES
    if ftype == "ciphertext":
        return hex_strings(st.integers(0, defn.get("max_length", 512) + 2)) | VALUES
    if ftype == "id":
        return (st.text(alphabet=ID_CHARS, max_size=130)
                | st.sampled_from(["x" * 128, "x" * 129])) | EDGE_STRINGS | VALUES
    if ftype in ("text", "ot_blob"):
        limit = defn.get("max_length", 2000 if ftype == "text" else 16384)
        sizes = st.sampled_from([0, 1, limit // 4, limit // 3, limit // 2, limit - 1, limit,
                                 limit + 1]).filter(lambda n: 0 <= n <= 20000)
        return (st.builds(lambda unit, n: unit * n,
                          st.sampled_from(["a", "a", "é", "灵", "😀", "\ud800"]), sizes)
                | VALUES)
    if ftype == "ticket":
        return st.sampled_from(["", "t", "t" * TICKET_MAX, "t" * (TICKET_MAX + 1), "\ud800",
                                "é"]) | VALUES
    if ftype == "integer":
        edges = [b + d for b in (defn.get("min", 0), defn.get("max", 0)) for d in (-1, 0, 1)]
        return st.sampled_from(edges) | st.integers(-2000, 2000) | VALUES
    if ftype == "enum":
        return st.sampled_from(defn["values"]) | VALUES
    if ftype == "boolean":
        return st.booleans() | VALUES
    if ftype == "array":
        # a valid array, then (often) one item, the count or the size spoiled
        return (st.builds(one_bad_item, st.randoms(use_true_random=False), st.just(defn),
                          st.integers(0, 9), near(defn["items"]))
                | st.lists(SCALARS, max_size=8) | VALUES)
    return VALUES


def one_bad_item(rng: random.Random, defn: dict, where: int, bad: Any) -> list:
    items = compact_value(defn, rng)
    if where < 3 and items:
        items[where % len(items)] = bad
    elif where == 3:
        items.append(bad)
    elif where == 4 and items:
        items.pop()
    return items


# ---------------------------------------------------------------- payloads

def compact_value(defn: dict, rng: random.Random) -> Any:
    """A short value that satisfies ``defn`` (short strings keep recorded corpora small)."""
    ftype = defn["type"]
    if ftype == "integer":
        lo = defn.get("min", defn.get("max", 0) - 5)
        return rng.randint(lo, defn.get("max", lo + 5))
    if ftype == "boolean":
        return rng.random() < 0.5
    if ftype == "enum":
        return rng.choice(defn["values"])
    if ftype in ("text", "ot_blob"):
        return "".join(rng.choice("abé ") for _ in range(rng.randint(0, 3)))[
            :defn.get("max_length", 99) // 2]
    if ftype in ("hash", "key"):
        return "".join(rng.choice(HEX_DIGITS) for _ in range(64))
    if ftype == "signature":
        return "".join(rng.choice(HEX_DIGITS) for _ in range(128))
    if ftype == "nonce":
        return "".join(rng.choice(HEX_DIGITS) for _ in range(16))
    if ftype in ("id", "ticket"):
        return "".join(rng.choice(ID_CHARS) for _ in range(rng.randint(1, 6)))
    if ftype == "ciphertext":
        return "".join(rng.choice(HEX_DIGITS) for _ in range(2 * rng.randint(1, 2)))
    if ftype == "array":
        lo = defn.get("min_items", 0)
        count = rng.randint(lo, min(defn.get("max_items", lo + 3), lo + 3))
        return [compact_value(defn["items"], rng) for _ in range(count)]
    if ftype == "json":
        if defn.get("container", "any") == "array":
            return [rng.randint(0, 9)]
        return {"k": rng.randint(0, 9)}
    raise ValueError(ftype)


def base_payload(spec: Spec, name: str, rng: random.Random) -> dict[str, Any]:
    schema = spec.messages[name]
    payload = {key: compact_value(defn, rng) for key, defn in schema.fields.items()
               if defn.get("required") is True or rng.random() < 0.5}
    if "action" not in schema.fields:
        payload["action"] = name
    return payload


def _edges(defn: dict) -> list[Any]:
    """A few values on and just past each bound of ``defn``."""
    ftype = defn["type"]
    out: list[Any] = [None, "", 1.5, True]
    if ftype == "integer":
        out += [b + d for b in (defn.get("min", 0), defn.get("max", 0)) for d in (-1, 0, 1)]
    elif ftype in ("hash", "key", "signature", "nonce"):
        size = {"hash": 64, "key": 64, "signature": 128, "nonce": 16}[ftype]
        out += ["a" * size, "A" * size, "a" * (size - 1), "a" * (size + 1), "g" * size]
    elif ftype == "ciphertext":
        out += ["0", "00", "000", "0A", "00" * (defn.get("max_length", 512) // 2 + 1)]
    elif ftype == "id":
        out += ["a b", "x" * 128, "x" * 129, "é"]
    elif ftype in ("text", "ot_blob"):
        limit = defn.get("max_length", 2000 if ftype == "text" else 16384)
        out += ["\ud800", "é" * (limit // 2 + 1)]  # within the limit in characters, not bytes
    elif ftype == "ticket":
        out += ["t" * TICKET_MAX, "t" * (TICKET_MAX + 1), "\ud800"]
    elif ftype == "enum":
        out += [defn["values"][0].upper(), defn["values"][-1] + " ", 7]
    elif ftype == "array":
        item = defn["items"]
        lo = defn.get("min_items", 0)
        out += [[], [None] * max(lo, 1)]
        for edge in _edges(item)[1:] + ["", "\ud800"]:
            if not isinstance(edge, str) or len(edge) <= 300:  # keep recorded cases small
                out.append([edge] * max(lo, 1))
    elif ftype == "json":
        out += [[1], {"k": 1}, [float("nan")], {"k": float("inf")}]
    return out


def corpus_cases(specs: list[Spec], rng: random.Random
                 ) -> list[tuple[int, str | None, dict[str, Any]]]:
    """Every message of every spec, each way, valid and with each field pushed to its edges."""
    out: list[tuple[int, str | None, dict[str, Any]]] = []
    for index, spec in enumerate(specs):
        actions = sorted({a for slot in spec._index.routes.values() for a in slot})
        for name, schema in spec.messages.items():
            for direction in DIRECTIONS:
                out.append((index, direction, base_payload(spec, name, rng)))
            direction = "host_to_guest" if schema.matches("host_to_guest") else "guest_to_host"
            for key, defn in schema.fields.items():
                for edge in _edges(defn):
                    out.append((index, direction, {**base_payload(spec, name, rng), key: edge}))
                payload = base_payload(spec, name, rng)
                payload.pop(key, None)
                out.append((index, direction, payload))
            out.append((index, direction, {**base_payload(spec, name, rng), "extra": 1}))
            out.append((index, direction, {**base_payload(spec, name, rng),
                                           "action": rng.choice(actions + ["nope"])}))
    return out


@st.composite
def cases(draw, specs: list[Spec]) -> tuple[int, str | None, dict[str, Any]]:
    """One message for one of ``specs``: a valid one, then 0-3 random changes."""
    index = draw(st.integers(0, len(specs) - 1))
    spec = specs[index]
    name = draw(st.sampled_from(sorted(spec.messages)))
    schema = spec.messages[name]
    payload = base_payload(spec, name, draw(st.randoms(use_true_random=False)))
    for _ in range(draw(st.integers(0, 3))):
        change = draw(st.sampled_from(["value", "value", "value", "drop", "add", "action"]))
        if change == "value":
            key = draw(st.sampled_from(sorted(schema.fields)))
            payload[key] = draw(near(schema.fields[key]))
        elif change == "drop" and payload:
            payload.pop(draw(st.sampled_from(sorted(payload))))
        elif change == "add":
            payload[draw(st.text(max_size=8))] = draw(SCALARS)
        else:
            payload["action"] = draw(st.sampled_from(sorted(spec.messages)) | st.text(max_size=8))
    return index, draw(st.sampled_from(DIRECTIONS)), payload
