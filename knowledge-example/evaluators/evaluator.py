#!/usr/bin/env python3
"""The quick start's deterministic evaluator, in Python with the standard library only.

It scores as knowledge-example/evaluator.js does, to the same numbers: the share
of the fixture's needs that the bundle's text covers, plus a small noise term
fixed by the fixture, the seed and the bundle. One JSON answer per request line,
echoing request_id and attesting the fixture digest, so it works started once
per arm and as a persistent (JSON Lines) evaluator:

    autoctx confirm <candidate> --evaluator "python3 knowledge-example/evaluators/evaluator.py" \\
        --evaluator-mode persistent --fixtures knowledge-example/demo/fixtures.jsonl
"""
import hashlib
import json
import math
import os
import sys

_texts = {}


def bundle_text(directory):
    if directory not in _texts:
        parts = []
        for kind in sorted(os.listdir(directory)):
            sub = os.path.join(directory, kind)
            if not os.path.isdir(sub):
                continue
            for name in sorted(os.listdir(sub)):
                with open(os.path.join(sub, name), encoding="utf-8") as f:
                    parts.append(f.read())
        _texts[directory] = "\n".join(parts).lower()
    return _texts[directory]


def noise(*parts):
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return (int.from_bytes(digest[:4], "big") / 2**32 - 0.5) * 0.04


def js_round(x):
    """Math.round: halves go up (Python's round() goes to even)."""
    return math.floor(x + 0.5)


def answer(request):
    needs = request["observation"]["needs"]
    text = bundle_text(request["bundle_dir"])
    covered = sum(1 for n in needs if n.lower() in text)
    score = covered / len(needs) + noise(request["fixture_digest"], request["seed"], request["bundle_digest"])
    return {"request_id": request["request_id"], "fixture_digest": request["fixture_digest"], "score": js_round(score * 1e6) / 1e6, "valid": True}


def main():
    for line in sys.stdin:
        if line.strip() == "":
            continue
        sys.stdout.write(json.dumps(answer(json.loads(line)), separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
