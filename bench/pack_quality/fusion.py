"""Would a learned fusion of the ranking's parts beat the hand-set one? A screen over the
tuning lists (issue 26's "where the signals disagree, evidence decides, learned or
calibrated on data").

    .venv/bin/python bench/pack_quality/fusion.py --set dev,tune,tune2,tune3,tune_large,\
tune_prose,tune_prose2 --history --store S [--planner] [--dump F | --load F] [--churn]

For each task, ctx-pack's ranking is built in process (``tune.py``'s Chooser) and every
chunk becomes a row of ``FEATURES``: its score now, the parts ``--explain`` prints (the
words' BM25, the pointers' bonus, its file's share, the callees', the semantic and the
history parts, each against the task's best chunk), its file's prior, the file's and the
chunk's places, its length, its kind, the share of the task's term weight it holds and of
the task's terms it names; the label is whether it holds a line the fix changed.

The model is linear, ``z = theta . x`` over the standardised features, fitted per list by
leaving that list out (the other six lists train it): a listwise softmax in which each
chunk weighs its lines (``fit``: for each gold chunk g, minimise log sum_j L_j e^(z_j -
z_g), a smooth bound of the log of the lines a pack shows before g, so a model cannot win
by preferring long chunks). It starts from the current order (theta on the score alone)
and is fitted on each task's ``TOP`` best chunks by the current score, nothing added: the
top rows with every deeper gold chunk added would teach it that deep means gold. Each
list's model is fitted on the other lists of the ``--set`` given: on fewer than the seven
it overfits (dev and tune_prose alone: every hunk 99 -> 53 of 147). Two measures of each
list's model, on the list it never saw:

- ``lines``: for each task, the lines of the chunks taken best first until every gold
  chunk is in (3 a chunk for its header), against 650 / 1,450 / 2,900 lines (about 8k /
  16k / 32k tokens);
- ``--planner``: the real planner (``render_plan``) on the chunk order the model gives,
  the scores of the order mapped onto the current ones (the k-th best chunk gets the
  current k-th best score, so the floor keeps its place) and the files kept in their
  order; line recall and every hunk shown at 8k / 16k / 32k, rows up and down.

Measured in the thirty-second session on the seven tuning lists (280 fixes, 840 task-budget
rows at 8k / 16k / 32k, ``--history``; the current engine shows every hunk in 472 rows,
mean line recall 0.692). The lines measure at 1,450 lines rises from 152 to 155-156 of the
273 tasks with a gold chunk (650: 116 -> 120-122). Through the planner, each list's model
fitted on the other six: on each task's 1,000 best chunks, every hunk 475 of 840, recall
0.694, 46 rows up and 45 down; on the 300 best (L2 0.1), 471, 0.690, 37 up, 40 down. A
first, cost-blind objective (a chunk's lines not weighed) lowered the order to 465 and
466: it learnt to prefer long chunks, which hold more gold by their length alone. The
learnt weights agree across the seven folds (the term share +0.2 to +0.8, the file's
prior +1.0 to +1.5, its place -0.3 to -0.6, the chunk's place in its file -0.3 to -0.7),
and no fold beats the hand-set fusion by more than noise: its parts are already combined
as the data would have them, and the misses need evidence the parts do not hold.

Nor does a file's history (``--churn``, the defect-prediction prior: how often and how
lately the file changed in the 2,000 commits before the base): with the three ``CHURN``
features beside the parts the lines measure is 120 / 153 / 178 (650 / 1,450 / 2,900 lines)
against the parts' 122 / 156 / 178; each alone 124 / 156 / 177 (commits), 123 / 153 / 177
(decayed), 122 / 155 / 179 (since last touched).
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/

FEATURES = ("score", "bm25", "bonus", "file", "callees", "semantic", "history", "prior",
            "file_rank", "chunk_rank", "lines", "is_def", "is_best", "weight_share",
            "term_share", "file_score")
LINES = FEATURES.index("lines")
TOP = 1000
BUDGET_LINES = (650, 1450, 2900)
PER_CHUNK = 3


def features(ch) -> tuple[list[list[float]], list[tuple[int, int]]]:
    """Each chunk of the Chooser CH's ranking as a row of ``FEATURES`` (log scales where
    a part spans orders of magnitude), and its (file index, chunk index)."""
    docs = ch.docs
    best = max((s for d in docs for s in d.scores), default=1.0) or 1.0
    # the weights by term id: ``rank._rank`` fills ``Ranking.weights`` in ``Terms`` order,
    # the ids the chunks' ``tfs`` are keyed by
    w = list(ch.ranking.weights.values())
    wsum = sum(x for x in w if x > 0) or 1.0
    nterms = sum(1 for x in w if x > 0) or 1
    top_file = (docs[0].score if docs else 1.0) or 1.0
    rows, keys = [], []
    for r, d in enumerate(docs):
        place = {k: i for i, k in enumerate(sorted(range(len(d.scores)),
                                                  key=lambda k: -d.scores[k]))}
        sem = getattr(d, "semantic", None)
        his = getattr(d, "history", None)
        for k, c in enumerate(d.chunks):
            s = d.scores[k]
            p = d.parts[k] if d.parts and k < len(d.parts) else (0.0, 0.0, 0.0, 0.0)
            tf = d.tfs[k] if k < len(d.tfs) else {}
            held = [i for i in tf if i < len(w) and w[i] > 0]
            rows.append([
                math.log(max(s, 1e-6 * best) / best), p[0] / best, p[1] / best, p[2] / best,
                p[3] / best, (sem[k] if sem else 0.0) / best, (his[k] if his else 0.0) / best,
                math.log(max(d.prior, 1e-3)), math.log1p(r), math.log1p(place[k]),
                math.log(max(1, c.end - c.start + 1)), 1.0 if c.kind == "def" else 0.0,
                1.0 if place[k] == 0 else 0.0, sum(w[i] for i in held) / wsum,
                len(held) / nterms, math.log(max(d.score, 1e-6 * top_file) / top_file)])
            keys.append((r, k))
    return rows, keys


def labels(ch, gold) -> list[float]:
    """1 for each chunk of CH's ranking that holds a line GOLD changed, else 0."""
    out = []
    for d in ch.docs:
        lines = gold.lines_of(d.label)
        for c in d.chunks:
            out.append(1.0 if any(c.start <= n <= c.end for n in lines) else 0.0)
    return out


def top_rows(x, y, n: int = TOP):
    """The rows of a task's N best chunks by the current score, in chunk order."""
    import numpy as np

    keep = np.sort(np.argsort(-x[:, 0], kind="stable")[:n])
    return x[keep], y[keep]


def fit(tasks, lam: float = 1e-3, iters: int = 500, rate: float = 0.05):
    """TASKS: (rows, labels) pairs (numpy). Returns (theta, mean, std): the cost-aware
    listwise model (the module's docstring), by Adam from the current order."""
    import numpy as np

    x_all = np.concatenate([x for x, _y in tasks])
    mu, sd = x_all.mean(0), x_all.std(0) + 1e-9
    sets = [((x - mu) / sd, y, np.log(np.exp(x[:, LINES]) + PER_CHUNK))
            for x, y in tasks if y.sum() > 0]
    theta = np.zeros(x_all.shape[1])
    theta[0] = sd[0]  # the current score's order
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for it in range(1, iters + 1):
        g = lam * theta
        for x, y, mass in sets:
            z = x @ theta + mass
            p = np.exp(z - z.max())
            p /= p.sum()
            g += x.T @ (p - y / y.sum()) / len(sets)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta -= rate * (m / (1 - 0.9**it)) / (np.sqrt(v / (1 - 0.999**it)) + 1e-8)
    return theta, mu, sd


def predict(model, x):
    theta, mu, sd = model
    return ((x - mu) / sd) @ theta


def lines_to_gold(z, x, y) -> float:
    """The lines of the chunks taken best first by Z until every gold chunk of Y is in."""
    import numpy as np

    order = np.argsort(-z, kind="stable")
    cum = np.cumsum(np.exp(x[order, LINES]) + PER_CHUNK)
    gold = np.nonzero(y[order] > 0)[0]
    return float(cum[gold.max()]) if len(gold) else math.inf


def reorder(ch, keys, z) -> None:
    """CH's chunks in the order Z gives, each taking the current score of its place."""
    import numpy as np

    now = sorted((ch.docs[r].scores[k] for r, k in keys), reverse=True)
    order = np.argsort(-z, kind="stable")
    for place, i in enumerate(order):
        r, k = keys[i]
        ch.docs[r].scores[k] = now[place]


def load(args):
    """{task id: (rows, labels, list, chunk keys, the task's repository, base and ranked
    files)} and the in-process Choosers, by ``tune.py``."""
    import numpy as np

    from pack_quality import tune
    from pack_quality.gold import parse_patch

    tune.HISTORY = args.history
    items = [(t, tr) for t, tr in tune.tasks_of(args.set.split(","))
             if parse_patch(t.patch).hunks]
    data, choosers = {}, {}
    for t, tree in items:
        with tune.history_env(t, tree):
            ch = tune.build_chooser(t.text, tree, args.store, 32000)
        rows, keys = features(ch)
        data[t.id] = (np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES)),
                      np.array(labels(ch, parse_patch(t.patch))), t.kind, keys,
                      {"repo": t.repo, "base": t.base, "files": [d.label for d in ch.docs]})
        if args.planner:
            choosers[t.id] = ch
    return items, data, choosers


CHURN = ("file_commits", "file_commits_decayed", "commits_since_file_touched")


def with_churn(data) -> dict:
    """DATA with ``CHURN`` appended to each row: of the row's file, among the 2,000
    commits before the task's base (``trees.commit_files``, commits of over 40 files left
    out), how many touched it, the same with each commit weighing 0.995 ** its age in
    commits, and how many commits ago it was last touched (5,000 when never); log1p of each.
    The defect-prediction prior: a file that changes often is where fixes land."""
    import numpy as np

    from pack_quality.trees import commit_files, find_mirror
    from pack_quality.tune import MIRRORS

    out = {}
    for tid, (x, y, kind, keys, meta) in data.items():
        mirror = find_mirror(meta["repo"], {}, MIRRORS)
        commits = commit_files(mirror, meta["base"]) if mirror else []
        count: dict[str, int] = {}
        decayed: dict[str, float] = {}
        last: dict[str, int] = {}
        for age, files in enumerate(commits):
            for f in files:
                count[f] = count.get(f, 0) + 1
                decayed[f] = decayed.get(f, 0.0) + 0.995**age
                last.setdefault(f, age)
        files = meta["files"]
        extra = np.array([[math.log1p(count.get(files[r], 0)),
                           math.log1p(decayed.get(files[r], 0.0)),
                           math.log1p(last.get(files[r], 5000))] for r, _k in keys])
        out[tid] = (np.hstack([x, extra.reshape(len(keys), len(CHURN))]), y, kind, keys, meta)
    return out


def screen(data, lam: float) -> dict:
    """Leave-one-list-out: each list's model and the lines measure, current vs learned."""
    import numpy as np

    kinds = sorted({v[2] for v in data.values()})
    models, counts = {}, {}
    for kind in kinds:
        train = [top_rows(v[0], v[1]) for v in data.values() if v[2] != kind]
        models[kind] = model = fit(train, lam)
        for x, y, k, *_rest in data.values():
            if k != kind or not y.sum():
                continue
            now, new = lines_to_gold(x[:, 0], x, y), lines_to_gold(predict(model, x), x, y)
            for b in BUDGET_LINES:
                c = counts.setdefault((kind, b), [0, 0, 0])
                c[0] += 1
                c[1] += now <= b
                c[2] += new <= b
    mean = np.mean([m[0] for m in models.values()], axis=0)
    names = FEATURES + CHURN[: len(mean) - len(FEATURES)]
    return {"models": models, "counts": counts, "mean_theta": dict(zip(names, mean,
                                                                       strict=True))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="dev,tune")
    ap.add_argument("--store", type=Path, default=Path("/tmp/tune-store"))
    ap.add_argument("--history", action="store_true")
    ap.add_argument("--lam", type=float, default=1e-3, help="L2 weight of the fit")
    ap.add_argument("--planner", action="store_true",
                    help="also render each list's packs with its learned order")
    ap.add_argument("--dump", type=Path, help="write the feature rows here")
    ap.add_argument("--load", type=Path, help="read feature rows --dump wrote (no ranking)")
    ap.add_argument("--churn", action="store_true",
                    help="add each file's history (CHURN, from the mirror) to its rows")
    args = ap.parse_args(argv)
    if args.load and args.planner:
        ap.error("--planner renders packs, which needs the ranking: not with --load")
    if args.load:
        items, choosers = [], {}
        data = pickle.loads(args.load.read_bytes())
    else:
        items, data, choosers = load(args)
        if args.dump:
            args.dump.write_bytes(pickle.dumps(data))
    if args.churn:
        data = with_churn(data)
    got = screen(data, args.lam)
    print("list         lines  tasks  current  learned")
    for (kind, b), (n, now, new) in sorted(got["counts"].items()):
        print(f"{kind:12} {b:5} {n:6} {now:8} {new:8}")
    for b in BUDGET_LINES:
        n, now, new = (sum(c[i] for (_k, bb), c in got["counts"].items() if bb == b)
                       for i in range(3))
        print(f"{'all':12} {b:5} {n:6} {now:8} {new:8}")
    print("mean theta: " + " ".join(f"{k}={v:+.2f}" for k, v in got["mean_theta"].items()))
    if choosers:
        planner(items, data, choosers, got["models"])
    return 0


def planner(items, data, choosers, models) -> None:
    from pack_quality import tune

    budgets = [8000, 16000, 32000]
    base = tune.evaluate(items, budgets, None, choosers)
    for t, _tree in items:
        x, _y, kind, keys, _meta = data[t.id]
        reorder(choosers[t.id], keys, predict(models[kind], x))
    rows = tune.evaluate(items, budgets, None, choosers)
    was = {(r["task"], r["budget"]): r["line_recall"] for r in base}
    up = sum(r["line_recall"] > was[(r["task"], r["budget"])] + 1e-9 for r in rows)
    down = sum(r["line_recall"] < was[(r["task"], r["budget"])] - 1e-9 for r in rows)
    print("== current\n" + tune.table(base, budgets))
    print("== learned\n" + tune.table(rows, budgets))
    print(f"every hunk {sum(r['complete'] for r in base)} -> {sum(r['complete'] for r in rows)}"
          f" of {len(rows)}; rows up {up}, down {down}")


if __name__ == "__main__":
    sys.exit(main())
