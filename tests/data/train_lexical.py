#!/usr/bin/env python3
"""The lexical layer of the risk classifier: training and evaluation.

Python 3 standard library only. Features are what the Rust side
(src/compliance/classifier/lexical.rs) computes the same way: each text of a
request (the declared purpose, the system/developer instructions, the latest
user turns) normalised as the classifier does (lowercase, diacritics
folded, leetspeak read), its words of three letters or more cut to a
STEM-letter prefix, and the pairs of neighbouring stems; the instructions'
features carry the prefix "s:". A feature must be in at least MIN_CASES
and at most MAX_SHARE of the training cases. Each request's vector is
binary, scaled by 1/sqrt(max(n, NORM_FLOOR)). The model is a multinomial
logistic regression (SGD, L2) over the areas and `minimal`; the decision
and how it combines with the rules are in lexical.rs and
docs/compliance.md (ninth round).

  train_lexical.py --lobo             leave-one-batch-out figures (id prefix = batch)
  train_lexical.py --lofo             leave-one-family-out figures (phrasing family)
  train_lexical.py --eval FILE        train on the train file, measure FILE
  train_lexical.py --write [--out F]  write assets/risk/lexical.tsv (or F); deterministic
  --train FILE                        train on FILE instead of tests/data/euai-train.jsonl

Environment variables LEX_* override the settings below for experiments;
the asset is written with the defaults.
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "tests/data/euai-train.jsonl")
ASSET = os.path.join(ROOT, "assets/risk/lexical.tsv")
STEM = 6
RECENT_USER_TURNS = 4
EPOCHS = int(os.environ.get("LEX_EPOCHS", "30"))
RATE = float(os.environ.get("LEX_RATE", "2.0"))
L2 = float(os.environ.get("LEX_L2", "1e-5"))
# A weight smaller than this is pruned from the asset (and from the model
# evaluated here, so the figures are the asset's).
PRUNE = float(os.environ.get("LEX_PRUNE", "0.05"))
# A feature seen in fewer training cases than this is not a feature.
MIN_CASES = 2
# A feature in more than this share of the training cases (a stop word, a
# language's commonest words) is no evidence of a use: not a feature.
MAX_SHARE = float(os.environ.get("LEX_MAX_SHARE", "0.05"))
# A request's vector is scaled by 1/sqrt(max(features, NORM_FLOOR)): a very
# short text counts as less evidence, not as more sure.
NORM_FLOOR = int(os.environ.get("LEX_NORM_FLOOR", "8"))
# The model raises a result only when a level's areas together have at
# least this probability (`decide`).
THRESHOLD = float(os.environ.get("LEX_THRESHOLD", "0.97"))

LEVELS = {"minimal": 0, "limited": 1, "high": 2, "prohibited": 3}

FOLD = {}
for chars, to in [
    ("àáâãäåą", "a"), ("çć", "c"), ("èéêëę", "e"), ("ł", "l"), ("ńñ", "n"),
    ("ś", "s"), ("źż", "z"), ("ìíîï", "i"), ("òóôõö", "o"), ("ùúûü", "u"),
    ("ýÿ", "y"),
]:
    for ch in chars:
        FOLD[ch] = to
FOLD.update({"ß": "ss", "æ": "ae", "œ": "oe", "ﬁ": "fi", "ﬂ": "fl"})
INVISIBLE = {"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
LEET = {"0": "o", "1": "i", "3": "e", "4": "a"}


def invisible(c):
    return c in INVISIBLE or "\u0300" <= c <= "\u036f"


def tokens(text):
    """The classifier's normal form (text.rs `normalise`), as a token list."""
    out, cur = [], []

    def close():
        if cur:
            tok = "".join(cur)
            if any(ch.isalpha() for ch in tok) and any(ch in LEET for ch in tok):
                tok = "".join(LEET.get(ch, ch) for ch in tok)
            out.append(tok)
            cur.clear()

    for raw in text:
        if invisible(raw):
            continue
        c = raw
        if "\uff01" <= c <= "\uff5e":
            c = chr(ord(c) - 0xFEE0)
        if c.isalnum():
            for low in c.lower():
                cur.append(FOLD.get(low, low))
        else:
            close()
    close()
    return out


def stems(text):
    return [t[:STEM] for t in tokens(text) if len(t) >= 3 and any(ch.isalpha() for ch in t)]


def text_features(text, prefix, into):
    s = stems(text)
    for w in s:
        into.add(prefix + w)
    for a, b in zip(s, s[1:]):
        into.add(prefix + a + " " + b)


def content_text(content):
    if isinstance(content, str):
        return content + "\n"
    if isinstance(content, list):
        out = ""
        for part in content:
            if isinstance(part, str):
                out += part + "\n"
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out += part["text"] + "\n"
        return out
    return ""


def deployer_text(value):
    if isinstance(value, str):
        return value + "\n"
    if isinstance(value, list):
        return "".join(deployer_text(v) for v in value)
    if isinstance(value, dict):
        if "text" in value:
            return deployer_text(value["text"])
        return "".join(deployer_text(v) for v in value.values())
    return ""


def texts(case):
    """A request's three texts: the declared use, the system/developer
    instructions, the latest user turns (the Rust side's `Scanned::texts`)."""
    declared = case.get("purpose") or ""
    if case.get("deployer_context") is not None:
        declared += "\n" + deployer_text(case["deployer_context"])
    messages = case.get("messages") or []
    instructions = "".join(
        content_text(m.get("content")) + "\n" for m in messages if m.get("role") in ("system", "developer")
    )
    users = [m for m in messages if m.get("role") == "user"][-RECENT_USER_TURNS:]
    user = "".join(content_text(m.get("content")) + "\n" for m in users)
    return declared, instructions, user


def features(case):
    """The feature set of a request (lexical.rs `features`)."""
    declared, instructions, user = texts(case)
    out = set()
    text_features(declared, "", out)
    text_features(user, "", out)
    text_features(instructions, "s:", out)
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def label(case):
    return case.get("expected_area") or "minimal"


class Lcg:
    """A fixed pseudo-random order, the same on every Python."""

    def __init__(self, seed):
        self.state = seed

    def below(self, n):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 33) % n


def train(cases):
    classes = sorted({label(c) for c in cases})
    index = {k: i for i, k in enumerate(classes)}
    counts = {}
    feats = []
    for c in cases:
        f = features(c)
        feats.append(f)
        for x in f:
            counts[x] = counts.get(x, 0) + 1
    most = MAX_SHARE * len(cases)
    vocab = sorted(x for x, n in counts.items() if MIN_CASES <= n <= most)
    vid = {x: i for i, x in enumerate(vocab)}
    k = len(classes)
    data = []
    for c, f in zip(cases, feats):
        ids = sorted(vid[x] for x in f if x in vid)
        data.append((ids, 1.0 / math.sqrt(max(len(ids), NORM_FLOOR)) if ids else 0.0, index[label(c)]))
    w = [[0.0] * k for _ in vocab]
    bias = [0.0] * k
    rng = Lcg(26)
    order = list(range(len(data)))
    for epoch in range(EPOCHS):
        for i in range(len(order) - 1, 0, -1):
            j = rng.below(i + 1)
            order[i], order[j] = order[j], order[i]
        rate = RATE / math.sqrt(1 + epoch)
        for n in order:
            ids, v, y = data[n]
            z = bias[:]
            for i in ids:
                wi = w[i]
                for c in range(k):
                    z[c] += wi[c] * v
            m = max(z)
            e = [math.exp(t - m) for t in z]
            s = sum(e)
            g = [t / s for t in e]
            g[y] -= 1.0
            for c in range(k):
                bias[c] -= rate * g[c]
            for i in ids:
                wi = w[i]
                for c in range(k):
                    wi[c] -= rate * (g[c] * v + L2 * wi[c])
    model = {}
    for x, wi in zip(vocab, w):
        kept = {classes[c]: round(wi[c], 3) for c in range(k) if abs(wi[c]) >= PRUNE}
        if kept:
            model[x] = kept
    return classes, [round(b, 3) for b in bias], model


def predict(m, case):
    """The class probabilities (lexical.rs `probabilities`; the Rust side
    also leaves out the instructions of a tool's own prompt, which the
    script cannot recognise)."""
    classes, bias, model = m
    f = [x for x in features(case) if x in model]
    v = 1.0 / math.sqrt(max(len(f), NORM_FLOOR)) if f else 0.0
    z = dict(zip(classes, bias))
    for x in f:
        for c, wt in model[x].items():
            z[c] += wt * v
    mx = max(z.values())
    e = {c: math.exp(t - mx) for c, t in z.items()}
    s = sum(e.values())
    return {c: e[c] / s for c in classes}


def decide(probs, levels, threshold):
    """The highest level whose areas together have at least `threshold`
    (prohibited and high: the areas at or above it summed; limited: its own
    areas), and that level's likeliest area."""
    for level in ("prohibited", "high", "limited"):
        # Article 50 is no lesser high risk: limited counts its own areas.
        above = [a for a in probs if LEVELS[levels.get(a, "minimal")] >= LEVELS[level]
                 and (level != "limited" or levels.get(a) == "limited")]
        if sum(probs[a] for a in above) >= threshold:
            best = max((a for a in above if levels.get(a) == level), key=lambda a: (probs[a], a), default=None)
            if best is not None:
                return level, best
    return "minimal", None


def measure(m, cases, levels, rule_level=None, threshold=THRESHOLD):
    """Model alone (and combined with rules when rule_level is given)."""
    r = {"risky": 0, "caught": 0, "minimal": 0, "raised": 0, "limited": 0, "lim_ok": 0}
    comb = dict(r)
    for c in cases:
        got = decide(predict(m, c), levels, threshold)[0]
        exp = c["expected_level"]
        combined = None
        if rule_level:
            rl = rule_level[c["id"]]
            # The model raises minimal and limited results only.
            combined = max(got, rl, key=LEVELS.get) if LEVELS[rl] < LEVELS["high"] else rl
        for res, g in [(r, got)] + ([(comb, combined)] if rule_level else []):
            if exp in ("high", "prohibited"):
                res["risky"] += 1
                res["caught"] += (LEVELS[g] >= LEVELS[exp]) if exp == "high" else (g == "prohibited")
            elif exp == "minimal":
                res["minimal"] += 1
                res["raised"] += g != "minimal"
            else:
                res["limited"] += 1
                res["lim_ok"] += g == "limited"
    return r, comb


def fmt(r):
    pct = lambda a, b: f"{a:>3}/{b:<3} {100.0 * a / b:5.1f} %" if b else "   -          "
    return f"risky {pct(r['caught'], r['risky'])}  minimal raised {pct(r['raised'], r['minimal'])}  limited {pct(r['lim_ok'], r['limited'])}"


def batch(case):
    return case["id"].split("-")[0]


def family(case):
    return case.get("family") or "-"


def held_out_parts(cases, levels, key, order):
    """Train without each part (a batch, a phrasing family) and measure it,
    over a grid of thresholds; then the totals."""
    parts = sorted({key(c) for c in cases}, key=order)
    grid = [float(t) for t in os.environ.get("LEX_GRID", "0.5 0.6 0.7 0.8 0.9 0.92 0.94 0.95 0.96 0.97").split()]
    totals = {t: {"risky": 0, "caught": 0, "minimal": 0, "raised": 0, "limited": 0, "lim_ok": 0} for t in grid}
    for b in parts:
        m = train([c for c in cases if key(c) != b])
        for t in grid:
            r, _ = measure(m, [c for c in cases if key(c) == b], levels, threshold=t)
            for k in r:
                totals[t][k] += r[k]
            print(f"{b:<10} t={t} {fmt(r)}", flush=True)
    for t in grid:
        print(f"all        t={t} {fmt(totals[t])}")


def write(m, levels, path):
    classes, bias, model = m
    lines = ["# The lexical layer's weights: tests/data/train_lexical.py --write, from",
             "# tests/data/euai-train.jsonl. Generated, do not edit.",
             f"stem\t{STEM}", f"norm_floor\t{NORM_FLOOR}", f"threshold\t{THRESHOLD}"]
    lines += [f"class\t{c}\t{levels[c]}\t{b:g}" for c, b in zip(classes, bias)]
    for x in sorted(model):
        lines.append("f\t" + x + "\t" + " ".join(f"{classes.index(c)}:{w:g}" for c, w in sorted(model[x].items())))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def main():
    cases = load(sys.argv[sys.argv.index("--train") + 1] if "--train" in sys.argv else TRAIN)
    levels = {label(c): c["expected_level"] for c in cases}
    for flag, key, order in [("--lobo", batch, lambda b: int(b[1:] or 1)), ("--lofo", family, str)]:
        if flag in sys.argv:
            held_out_parts(cases, levels, key, order)
    if "--eval" in sys.argv:
        path = sys.argv[sys.argv.index("--eval") + 1]
        other = load(path)
        rule_level = None
        if "--rules" in sys.argv:
            report = json.load(open(sys.argv[sys.argv.index("--rules") + 1]))
            rule_level = {c["id"]: c["expected_level"] for c in other}
            for miss in report["misses"]:
                rule_level[miss["id"]] = miss["got"]
        m = train(cases)
        for t in [0.5, 0.6, 0.7, 0.8, 0.9, 0.92, 0.94, 0.96]:
            r, comb = measure(m, other, levels, rule_level, t)
            print(f"t={t}: model {fmt(r)}")
            if rule_level:
                print(f"       rules+model {fmt(comb)}")
    if "--write" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else ASSET
        write(train(cases), levels, out)


if __name__ == "__main__":
    main()
