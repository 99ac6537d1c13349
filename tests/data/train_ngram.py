#!/usr/bin/env python3
"""The n-gram layer of the risk classifier: training and evaluation.

Python 3 standard library only. Three binary logistic regressions over
the same features: `risky` (prohibited or high against the rest),
`prohibited` (prohibited against the rest) and `limited` (an Article 50
case against a minimal one; the prohibited and high cases are left out of
its training, twenty-seventh round). The features are what the Rust
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
  train_ngram.py --cv FACTS         leave one batch out (the ordinary requests in four folds) with
                                    the rules' view of each case (FACTS: `NGRAM_FACTS=F cargo test
                                    --lib ngram_cv_facts -- --ignored`): catches and raises of the
                                    rules and the layer together, at several thresholds, gated or not
  train_ngram.py --folds K          out-of-fold scores of every case (JSON lines): the models
                                    trained K times, each without a K-th of the batches (crc32 of
                                    the batch name modulo K), each case scored by the models that
                                    did not see it; how OVERRULE was chosen (K = 5)
  --train FILE                      train on FILE instead of tests/data/euai-train.jsonl and the
                                    ordinary requests

The ordinary requests of tests/data/risk-ordinary-train.jsonl are extra
negatives, each weighing ORDINARY (1: one case, as a labelled minimal
case); tests/data/risk-ordinary.jsonl is the ordinary test set and is
never read here.
"""
import json
import math
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_lexical import Lcg, load, texts, tokens  # noqa: E402  (the shared normal form and texts)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "tests/data/euai-train.jsonl")
# Ordinary traffic written for training (all minimal): extra negatives.
# tests/data/risk-ordinary.jsonl is the ordinary TEST set: never trained on.
ORDINARY_TRAIN = os.path.join(ROOT, "tests/data/risk-ordinary-train.jsonl")
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
# probability of `risky`, and to prohibited when `prohibited` reaches its
# own too. 0.995 was chosen on an independent batch (fresh13, trained
# without it) and on the near-misses of the unit tests. The fourteenth
# round's --cv preferred 0.998 by one minimal case of 842, but it cannot
# see what the layer catches: its facts come from the shipped lexical
# layer, trained on every batch, which already catches the left-out
# batch's cases. So 0.995 stays (docs/compliance.md, "Fourteenth round").
RISKY = 0.995
PROHIBITED = 0.7
# Below this probability of `risky` a high or prohibited result the rules
# found in the conversation alone is set aside (ngram.rs `overrule`,
# twenty-fifth round). Chosen on the train part alone, by five folds of
# whole batches (each fold scored by the models trained on the other four,
# against the rules' results): 0.005 set aside 39 of the 85 false raises
# and 29 of the 3,003 true ones; 0.01 took 6 false raises more for 13
# true ones more (docs/compliance.md, "Twenty-fifth round"). And only when
# no sentence of the request, read alone, reaches OVERRULE_LINE: one line
# that states a practice in a long prompt is not outweighed by the rest
# (chosen on the sets already read: at 0.8 the train part's false raises
# went from 20 to 25 of 1436, and a true raise of fresh22 came back). The
# rule table's `not_overruled` rules (critical infrastructure) are never
# set aside: with them kept, 28 of 1436.
OVERRULE = 0.005
OVERRULE_LINE = 0.8
# From this probability of `risky` a request is raised although the rules
# set one of its matches aside for a framing (talk about the topic, a
# company, a negation, no person near; not building software, which always
# holds it back). Chosen on the train part by five folds (--folds 5 against
# the rules' view, NGRAM_FACTS): of the 82 risky cases the rules and the
# lexical layer read below high, 37 had a framed match and an out-of-fold
# p(risky) of at least 0.998, against 2 of 1,751 minimal cases and 2 of
# 2,962 ordinary requests (0.995: 40, 4, 2; 0.999: 32, 1, 1)
# (docs/compliance.md, "Twenty-sixth round").
FRAMED = 0.998
# From this probability of `prohibited` (and RISKY of `risky`) a high
# result is moved to prohibited (ngram.rs `escalate`). Chosen on the train
# part by the same five folds: of the cases the rules and the lexical
# layer read high, 51 of 145 prohibited ones had an out-of-fold
# p(prohibited) of at least 0.99, against 9 of 1,962 high ones and none
# of 46 minimal ones (0.995: 38 and 6; 0.98: 60 and 13; 0.9: 84 and 26)
# (docs/compliance.md, "Twenty-sixth round").
ESCALATE = 0.99
# The weight of an ordinary request as a negative, against 1 for a labelled
# case (chosen by --cv; NGRAM_ORDINARY overrides it for experiments).
ORDINARY = float(os.environ.get("NGRAM_ORDINARY", "1.0"))
# From this probability of `limited` a minimal result is raised to limited
# (ngram.rs `disclose`): not when the user has software built, not when
# the rules set an Article 50 match aside (a disclosure, a framing; a
# match only in a pasted document, which they did not read, holds nothing
# back), and not when a suppressor of an Article 50 rule stands in the
# request (a fiction, the user's own voice, detecting fakes: article50.rs
# `held_back`). Chosen on the train part by five folds (--folds 5, each
# case scored by the models trained without its fold's batches), against
# the rules' view of each case without the lexical layer (NGRAM_FACTS
# `rules`: the shipped lexical layer has seen every batch): of the 276
# Article 50 cases the rules read as minimal, 119 had an out-of-fold
# p(limited) of at least 0.8 and none of the holds, against 10 of 2,276
# minimal cases and 5 of 3,000 ordinary requests (0.6: 153, 20, 7; 0.7:
# 140, 13, 6; 0.9: 103, 8, 2). The folds preferred 0.7 (five Article 50
# cases more for each false raise more from 0.8); 0.8 is kept because at
# 0.7 the layer raised a stock image of the unit probes (a flooded town
# square for a climate poster, in Polish: p 0.77), the generic media the
# taxonomy calls minimal (docs/compliance.md, "Twenty-seventh round").
LIMITED = 0.8
# Batches written for the limited model only (Article 50 cases and their
# near-misses, twenty-seventh round): see `train`.
LIMITED_ONLY = {"T27A", "T27B", "T27C"}

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1


def fnv(kind, text):
    h = FNV_OFFSET
    for byte in kind.encode() + text.encode("utf-8"):
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h % BUCKETS


def vector(case, skip=(False, False, False)):
    """Row -> value, rows in the order first met (ngram.rs `vector`); the
    texts `skip` marks are left out."""
    counts = {}
    for text, skipped in zip(texts(case), skip):
        words = tokens(text)
        if skipped:
            continue
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
            x, y, weight = data[n][0], target(data[n][1]), data[n][2]
            z = bias
            for row, v in x.items():
                z += w.get(row, 0.0) * v
            g = (sigmoid(z) - y) * weight
            for row, v in x.items():
                old = w.get(row, 0.0)
                w[row] = old - rate * (g * v + L2 * old)
            bias -= rate * g
        rate *= DECAY
    return bias, w


def weight(case):
    """An ordinary request (risk-ordinary-train.jsonl) weighs ORDINARY as a
    negative; a labelled case weighs 1."""
    return ORDINARY if case.get("family") == "ordinary" else 1.0


def train(cases, vectors=None):
    """The three models: (risky bias, prohibited bias, limited bias, rows),
    each row's weights (risky, prohibited, limited) rounded and pruned."""
    cases = [c for c in cases if weight(c) > 0]
    data = [((vectors or {}).get(c["id"]) or vector(c), c["expected_level"], weight(c)) for c in cases]
    # The batches written for the limited model stay out of the other two,
    # whose thresholds (RISKY, OVERRULE, FRAMED, ESCALATE) were chosen on
    # folds without them: with them (720 cases, two thirds negatives) the
    # risky model's calibration moved, and it overruled 11 more of the
    # train part's rule results and an Italian prohibited probe of the
    # eleventh round (docs/compliance.md, "Twenty-seventh round").
    general = [d for d, c in zip(data, cases) if batch(c) not in LIMITED_ONLY]
    risky = train_one(general, lambda level: 1.0 if level in ("prohibited", "high") else 0.0)
    prohibited = train_one(general, lambda level: 1.0 if level == "prohibited" else 0.0)
    # Article 50 against minimal: a risky case may hold an Article 50
    # trait too (a public chatbot that also screens applicants).
    limited = train_one([d for d in data if d[1] in ("limited", "minimal")],
                        lambda level: 1.0 if level == "limited" else 0.0)
    # A row is kept for `risky` and `prohibited` when either weight
    # reaches PRUNE (as before the third model), for `limited` when its
    # own does: each model is what it would be alone.
    rows = {}
    for row in set(risky[1]) | set(prohibited[1]) | set(limited[1]):
        a, b, c = (round(m[1].get(row, 0.0), 4) for m in (risky, prohibited, limited))
        if max(abs(a), abs(b)) < PRUNE:
            a = b = 0.0
        if abs(c) < PRUNE:
            c = 0.0
        if (a, b, c) != (0.0, 0.0, 0.0):
            rows[row] = (a, b, c)
    return round(risky[0], 4), round(prohibited[0], 4), round(limited[0], 4), rows


def scores(model, case, x=None):
    """p(risky), p(prohibited), p(limited) (ngram.rs `scores`); `x` the
    case's vector if it is already computed."""
    *biases, rows = model
    z = list(biases)
    for row, v in (x if x is not None else vector(case)).items():
        weights = rows.get(row)
        if weights:
            for m in range(3):
                z[m] += weights[m] * v
    return tuple(sigmoid(zm) for zm in z)


def write(model, path):
    risky_bias, prohibited_bias, limited_bias, rows = model
    lines = [
        "# The n-gram layer's weights: tests/data/train_ngram.py --write, from",
        "# tests/data/euai-train.jsonl and risk-ordinary-train.jsonl. Generated, do not edit.",
        f"buckets\t{BUCKETS}",
        f"risky\t{RISKY}\t{risky_bias:g}",
        f"prohibited\t{PROHIBITED}\t{prohibited_bias:g}",
        f"overrule\t{OVERRULE}\t{OVERRULE_LINE}",
        f"framed\t{FRAMED}",
        f"escalate\t{ESCALATE}",
        f"limited\t{LIMITED}\t{limited_bias:g}",
    ]
    lines += [f"{row}\t{a:g}\t{b:g}\t{c:g}" for row, (a, b, c) in sorted(rows.items())]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def read(path):
    """The model of an asset written by `write`."""
    risky_bias = prohibited_bias = limited_bias = None
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if not fields[0] or fields[0].startswith("#") or fields[0] in ("buckets", "overrule", "framed", "escalate"):
                continue
            if fields[0] == "risky":
                risky_bias = float(fields[2])
            elif fields[0] == "prohibited":
                prohibited_bias = float(fields[2])
            elif fields[0] == "limited":
                limited_bias = float(fields[2])
            else:
                weights = [float(w) for w in fields[1:]] + [0.0]
                rows[int(fields[0])] = tuple(weights[:3])
    return risky_bias, prohibited_bias, limited_bias, rows


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
    """The fold of a case: its batch (the id's prefix); the ordinary
    requests written for training (ids OT-A-en-001...) in four folds of
    150, by part and the parity of their number; the second ordinary set
    (ids O2-en-001..., sixteenth round), the third (O3-en-001...,
    seventeenth round), the fourth (O4-en-001..., eighteenth round), the
    fifth (O5-en-001..., nineteenth round), the sixth (O6-en-001...,
    twentieth round) and the seventh to eleventh (O7-* to O11-*,
    twenty-sixth round) are folds of their own."""
    parts = case["id"].split("-")
    if parts[0] == "OT":
        return f"OT{parts[1]}{int(parts[-1]) % 2}"
    return parts[0]


def folds(cases, k):
    fold = {c["id"]: zlib.crc32(batch(c).encode()) % k for c in cases}
    vectors = {c["id"]: vector(c) for c in cases}
    for i in range(k):
        model = train([c for c in cases if fold[c["id"]] != i], vectors)
        for c in cases:
            if fold[c["id"]] == i:
                p_risky, p_prohibited, p_limited = scores(model, c, vectors[c["id"]])
                print(json.dumps({"id": c["id"], "fold": i, "risky": p_risky, "prohibited": p_prohibited,
                                  "limited": p_limited}), flush=True)


def lobo(cases):
    parts = sorted({batch(c) for c in cases})
    caught = risky = raised = minimal = 0
    for b in parts:
        model = train([c for c in cases if batch(c) != b])
        for c in (c for c in cases if batch(c) == b):
            p_risky, p_prohibited, _ = scores(model, c)
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


RANK = {"minimal": 0, "limited": 1, "high": 2, "prohibited": 3}


def after(fact, p_risky, p_prohibited, risky_at, open_gate):
    """The level after the layer (ngram.rs `raise`): a minimal or limited
    result, in a domain the rules found (or any, with `open_gate`) and
    with no match set aside for building software, goes to high at
    `risky_at` (at FRAMED at least when a match was set aside for a
    framing), to prohibited at PROHIBITED too."""
    before = fact["before"]
    if before == "high" and not fact.get("built"):
        return "prohibited" if p_prohibited >= ESCALATE and p_risky >= RISKY else before
    if RANK[before] >= 2 or fact.get("built") or not (fact["domain"] or open_gate):
        return before
    if p_risky < (max(risky_at, FRAMED) if fact["stopped"] else risky_at):
        return before
    return "prohibited" if p_prohibited >= PROHIBITED else "high"


def cv(cases, facts_path):
    """Leave one batch out (each euai batch, and the ordinary requests in
    four folds), with the rules' view of each case from FACTS (written by
    the ignored Rust test `ngram_cv_facts`): what the rules, the lexical
    layer and this layer catch and raise together, at several thresholds,
    with the domain gate and with it open."""
    facts = {}
    with open(facts_path, encoding="utf-8") as f:
        for line in f:
            fact = json.loads(line)
            facts[fact["id"]] = fact
    plain = {c["id"]: vector(c) for c in cases}
    seen = {c["id"]: vector(c, facts[c["id"]]["skip"]) for c in cases}
    p = {}
    for b in sorted({batch(c) for c in cases}):
        model = train([c for c in cases if batch(c) != b], plain)
        for c in (c for c in cases if batch(c) == b):
            p[c["id"]] = scores(model, c, seen[c["id"]])[:2]
        print(f"fold {b} done", file=sys.stderr, flush=True)
    for open_gate in (False, True):
        for risky_at in (None, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999):
            caught = risky = raised = minimal = ordinary = by_layer = layer_caught = alone = 0
            for c in cases:
                fact = facts[c["id"]]
                got = fact["before"] if risky_at is None else after(fact, *p[c["id"]], risky_at, open_gate)
                exp = c["expected_level"]
                if exp in ("prohibited", "high"):
                    risky += 1
                    caught += RANK[got] >= RANK[exp]
                    layer_caught += RANK[got] >= RANK[exp] > RANK[fact["before"]]
                    if risky_at is not None:
                        bare = {"before": "minimal", "domain": True, "stopped": False}
                        alone += RANK[after(bare, *p[c["id"]], risky_at, True)] >= RANK[exp]
                elif c.get("family") == "ordinary":
                    ordinary += got != fact["before"]
                elif exp == "minimal":
                    minimal += 1
                    raised += got != "minimal"
                    by_layer += got != fact["before"]
            name = "rules and lexical layer" if risky_at is None else f"{'open' if open_gate else 'gated'} {risky_at}"
            print(f"{name:<24} caught {caught}/{risky} = {caught / risky:.3f} (layer {layer_caught}), "
                  f"minimal raised {raised}/{minimal} (layer {by_layer}), ordinary raised by the layer {ordinary}; "
                  f"the models alone catch {alone}")


def main():
    if sys.argv[1:2] == ["--scores"]:
        cases = []
    else:
        cases = load(sys.argv[sys.argv.index("--train") + 1] if "--train" in sys.argv else TRAIN)
        if "--train" not in sys.argv:
            cases += load(ORDINARY_TRAIN)
    if "--cv" in sys.argv:
        cv(cases, sys.argv[sys.argv.index("--cv") + 1])
    if "--folds" in sys.argv:
        folds(cases, int(sys.argv[sys.argv.index("--folds") + 1]))
    if "--lobo" in sys.argv:
        lobo(cases)
    if "--eval" in sys.argv:
        model = train(cases)
        for c in load(sys.argv[sys.argv.index("--eval") + 1]):
            p_risky, p_prohibited, p_limited = scores(model, c)
            print(json.dumps({"id": c["id"], "risky": round(p_risky, 6), "prohibited": round(p_prohibited, 6),
                              "limited": round(p_limited, 6)}))
    if "--scores" in sys.argv:
        model = read(ASSET)
        for c in load(sys.argv[sys.argv.index("--scores") + 1]):
            p_risky, p_prohibited, p_limited = scores(model, c)
            print(json.dumps({"id": c["id"], "risky": p_risky, "prohibited": p_prohibited, "limited": p_limited}))
    if "--write" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else ASSET
        write(train(cases), out)


if __name__ == "__main__":
    main()
