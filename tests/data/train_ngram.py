#!/usr/bin/env python3
"""The n-gram layer of the risk classifier: training and evaluation.

Python 3 standard library only. Two binary logistic regressions over the
same features: `risky` (prohibited or high against the rest) and
`prohibited` (prohibited against the rest). The features are what the Rust
side (src/compliance/classifier/ngram.rs) computes the same way: each of
a request's three texts (the declared purpose, the system/developer
instructions, the latest user turns; as train_lexical.py reads them) in
the classifier's normal form (its words joined by single spaces, with a
space before and after), and from it every run of 3, 4 and 5 characters,
every word and every pair of neighbouring words. Each feature is hashed
(64-bit FNV-1a of its UTF-8 text behind a one-letter kind: `c` for
characters, `w` a word, `b` a pair) into one of BUCKETS rows; a request's
vector holds sqrt(count) per row, scaled by the fourth root of the
number of features (a longer text is more evidence, up to a point; unit
length made the model too timid to raise anything at a safe threshold).

Characters rather than stems: a run of characters is shared by the
inflections and compounds of a word (German compounds, Polish cases) and
by related words across languages, so the model reads a practice in
words no case used. Measured against the rules and the lexical layer on
batches written independently (docs/compliance.md, "The n-gram layer").

  train_ngram.py --lobo             leave-one-batch-out figures (id prefix = batch)
  train_ngram.py --eval FILE        train on the train file, scores of FILE (JSON lines)
  train_ngram.py --write [--out F]  write assets/risk/ngram.tsv (or F); deterministic
  train_ngram.py --scores FILE      the shipped asset's scores of FILE (JSON lines), no training
  --train FILE                      train on FILE instead of tests/data/euai-train.jsonl
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_lexical import Lcg, load, texts, tokens  # noqa: E402  (the shared normal form and texts)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "tests/data/euai-train.jsonl")
ASSET = os.path.join(ROOT, "assets/risk/ngram.tsv")
BUCKETS = 1 << 18
EPOCHS = 8
RATE = 0.5
DECAY = 0.8
L2 = 1e-5
# A row whose weights are both under this is left out of the asset (and
# of the model measured here, so the figures are the asset's).
PRUNE = 0.002
# The model raises a minimal or limited result to high from this
# probability of `risky`, and a high one to prohibited from this
# probability of `prohibited`: chosen on an independent batch (fresh13,
# trained without it) and on the near-misses of the unit tests, before
# the next batch was measured (docs/compliance.md, "The n-gram layer").
RISKY = 0.995
PROHIBITED = 0.7

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1


def fnv(kind, text):
    h = FNV_OFFSET
    for byte in kind.encode() + text.encode("utf-8"):
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h % BUCKETS


def vector(case):
    """Row -> value, rows in the order first met (ngram.rs `vector`)."""
    counts = {}
    for text in texts(case):
        words = tokens(text)
        if not words:
            continue
        padded = " " + " ".join(words) + " "
        for n in (3, 4, 5):
            for i in range(len(padded) - n + 1):
                row = fnv("c", padded[i:i + n])
                counts[row] = counts.get(row, 0) + 1
        for w in words:
            row = fnv("w", w)
            counts[row] = counts.get(row, 0) + 1
        for a, b in zip(words, words[1:]):
            row = fnv("b", a + " " + b)
            counts[row] = counts.get(row, 0) + 1
    total = sum(counts.values())
    if not total:
        return {}
    scale = 1.0 / math.sqrt(math.sqrt(total))
    return {row: math.sqrt(n) * scale for row, n in counts.items()}


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def train_one(data, target):
    w = {}
    bias = 0.0
    rng = Lcg(19)
    order = list(range(len(data)))
    rate = RATE
    for _ in range(EPOCHS):
        for i in range(len(order) - 1, 0, -1):
            j = rng.below(i + 1)
            order[i], order[j] = order[j], order[i]
        for n in order:
            x, y = data[n][0], target(data[n][1])
            z = bias
            for row, v in x.items():
                z += w.get(row, 0.0) * v
            g = sigmoid(z) - y
            for row, v in x.items():
                old = w.get(row, 0.0)
                w[row] = old - rate * (g * v + L2 * old)
            bias -= rate * g
        rate *= DECAY
    return bias, w


def train(cases):
    data = [(vector(c), c["expected_level"]) for c in cases]
    risky = train_one(data, lambda level: 1.0 if level in ("prohibited", "high") else 0.0)
    prohibited = train_one(data, lambda level: 1.0 if level == "prohibited" else 0.0)
    rows = {}
    for row in set(risky[1]) | set(prohibited[1]):
        a = round(risky[1].get(row, 0.0), 4)
        b = round(prohibited[1].get(row, 0.0), 4)
        if max(abs(a), abs(b)) >= PRUNE:
            rows[row] = (a, b)
    return round(risky[0], 4), round(prohibited[0], 4), rows


def scores(model, case):
    """p(risky), p(prohibited) (ngram.rs `scores`)."""
    risky_bias, prohibited_bias, rows = model
    z = [risky_bias, prohibited_bias]
    for row, v in vector(case).items():
        weights = rows.get(row)
        if weights:
            z[0] += weights[0] * v
            z[1] += weights[1] * v
    return sigmoid(z[0]), sigmoid(z[1])


def write(model, path):
    risky_bias, prohibited_bias, rows = model
    lines = [
        "# The n-gram layer's weights: tests/data/train_ngram.py --write, from",
        "# tests/data/euai-train.jsonl. Generated, do not edit.",
        f"buckets\t{BUCKETS}",
        f"risky\t{RISKY}\t{risky_bias:g}",
        f"prohibited\t{PROHIBITED}\t{prohibited_bias:g}",
    ]
    lines += [f"{row}\t{a:g}\t{b:g}" for row, (a, b) in sorted(rows.items())]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def read(path):
    """The model of an asset written by `write`."""
    risky_bias = prohibited_bias = None
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if not fields[0] or fields[0].startswith("#") or fields[0] == "buckets":
                continue
            if fields[0] == "risky":
                risky_bias = float(fields[2])
            elif fields[0] == "prohibited":
                prohibited_bias = float(fields[2])
            else:
                rows[int(fields[0])] = (float(fields[1]), float(fields[2]))
    return risky_bias, prohibited_bias, rows


def level(rule_level, risky, prohibited):
    """A result after the layer: minimal and limited raised to high at
    RISKY, high raised to prohibited at PROHIBITED; never lowered."""
    rank = {"minimal": 0, "limited": 1, "high": 2, "prohibited": 3}
    got = rule_level
    if rank[got] < 2 and risky >= RISKY:
        got = "high"
    if got == "high" and prohibited >= PROHIBITED:
        got = "prohibited"
    return got


def batch(case):
    return case["id"].split("-")[0]


def lobo(cases):
    parts = sorted({batch(c) for c in cases})
    caught = risky = raised = minimal = 0
    for b in parts:
        model = train([c for c in cases if batch(c) != b])
        for c in (c for c in cases if batch(c) == b):
            p_risky, p_prohibited = scores(model, c)
            got = level("minimal", p_risky, p_prohibited)
            exp = c["expected_level"]
            if exp in ("prohibited", "high"):
                risky += 1
                caught += got == "prohibited" if exp == "prohibited" else got in ("high", "prohibited")
            elif exp == "minimal":
                minimal += 1
                raised += got != "minimal"
        print(f"{b:<6} caught {caught}/{risky}, minimal raised {raised}/{minimal} so far", flush=True)
    print(f"model alone, each batch left out: caught {caught}/{risky} = {caught / risky:.3f}, "
          f"minimal raised {raised}/{minimal} = {raised / minimal:.3f}")


def main():
    if sys.argv[1:2] == ["--scores"]:
        cases = []
    else:
        cases = load(sys.argv[sys.argv.index("--train") + 1] if "--train" in sys.argv else TRAIN)
    if "--lobo" in sys.argv:
        lobo(cases)
    if "--eval" in sys.argv:
        model = train(cases)
        for c in load(sys.argv[sys.argv.index("--eval") + 1]):
            p_risky, p_prohibited = scores(model, c)
            print(json.dumps({"id": c["id"], "risky": round(p_risky, 6), "prohibited": round(p_prohibited, 6)}))
    if "--scores" in sys.argv:
        model = read(ASSET)
        for c in load(sys.argv[sys.argv.index("--scores") + 1]):
            p_risky, p_prohibited = scores(model, c)
            print(json.dumps({"id": c["id"], "risky": p_risky, "prohibited": p_prohibited}))
    if "--write" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else ASSET
        write(train(cases), out)


if __name__ == "__main__":
    main()
