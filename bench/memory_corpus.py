"""Django 5.1.4's docs/ for the memory benchmarks (bench/corpora/django-docs-5.1.4/docs).

From the sdist in bench/corpora/ (the one bench_excerpt.py downloads with pip), fetched
with ``pip download`` when missing; only docs/ is extracted.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from sdist import sdist

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "bench" / "corpora"
VERSION = "5.1.4"
DOCS = CORPORA / f"django-docs-{VERSION}" / "docs"


def ensure_docs() -> Path:
    if DOCS.is_dir():
        return DOCS
    tarball = sdist("django", VERSION)
    prefix = f"Django-{VERSION}/docs/"
    with tarfile.open(tarball) as tf:
        members = [m for m in tf.getmembers() if m.name.startswith(prefix)]
        for m in members:
            m.name = m.name[len(f"Django-{VERSION}/") :]
        tf.extractall(DOCS.parent, members=members, filter="data")
    return DOCS
