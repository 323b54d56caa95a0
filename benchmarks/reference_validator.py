"""Run the published validator on a corpus: verdicts and timed passes.

This script runs only under the reference's own interpreter (see
``reference.py``), never in a Lingxi process. Lingxi's benchmark and tests
talk to it through a JSON corpus file and lines on stdin/stdout:

    python reference_validator.py CORPUS.json
    CORPUS.json: {"specs": [spec document, ...],
                  "cases": [[spec index, direction or null, payload JSON text], ...]}
    stdin "verdicts" -> one JSON line: [[accepted, reason], ...] per case
    stdin "time"     -> one line: CPU seconds (process time) of one pass over all cases
    stdin "check " + JSON [spec index, direction or null, payload JSON text]
                     -> one JSON line: [accepted, reason] for that one message
    stdin "quit"     -> exit

A case is accepted when ``validate_message_obj`` returns; any exception
(its ValidationError, or a crash such as UnicodeEncodeError on a lone
surrogate) is a refusal, and its type and text are the reason.
"""

from __future__ import annotations

import json
import sys
import time

from aigenora.proto.validate import validate_message_obj  # type: ignore[import-not-found]


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        corpus = json.load(f)
    specs = corpus["specs"]
    cases = [(specs[index], json.loads(text), direction)
             for index, direction, text in corpus["cases"]]

    def verdict(spec: dict, payload: object, direction: str | None) -> list:
        try:
            validate_message_obj(spec, payload, direction)
        except Exception as error:  # noqa: BLE001 - any failure is a refusal
            return [False, f"{type(error).__name__}: {str(error)[:200]}"]
        return [True, ""]

    def one_pass() -> None:
        for spec, payload, direction in cases:
            try:
                validate_message_obj(spec, payload, direction)
            except Exception:  # noqa: BLE001 - any failure is a refusal
                pass

    for line in sys.stdin:
        command = line.strip()
        if command == "time":
            start = time.process_time()
            one_pass()
            print(time.process_time() - start, flush=True)
        elif command == "verdicts":
            print(json.dumps([verdict(*case) for case in cases]), flush=True)
        elif command.startswith("check "):
            index, direction, text = json.loads(command[len("check "):])
            print(json.dumps(verdict(specs[index], json.loads(text), direction)), flush=True)
        elif command == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
