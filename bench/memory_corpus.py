"""The corpora of the memory benchmarks.

- Django 5.1.4's docs/ (bench/corpora/django-docs-5.1.4/docs): from the sdist in
  bench/corpora/ (the one bench_excerpt.py downloads with pip), fetched with
  ``pip download`` when missing; only docs/ is extracted.
- A labelled set's own "root" (relative to the repository): used as it is; when missing
  and the set names its "source" ({"repo": "owner/name", "commit": sha, "path": the docs
  directory}), extracted with ``git archive`` from a bare mirror of that repository
  (``pack_quality.trees.find_mirror``: under /work/.mirror, the fetch tool's layout), the
  way bench_scan_oracle's trees (libuv's among them) are unpacked.
"""

from __future__ import annotations

import subprocess
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


def ensure_root(spec: dict) -> Path:
    """The corpus of the labelled set SPEC: its "root", extracted from its "source"'s
    mirror when missing (SystemExit saying what to unpack where when it cannot be)."""
    root = ROOT / spec["root"]
    if root.is_dir():
        return root
    source = spec.get("source")
    if not source:
        raise SystemExit(f"{root} is missing (the set names no source to extract it from)")
    from pack_quality.trees import MIRROR_ROOT, find_mirror, git

    repo, commit, path = source["repo"], source["commit"], source["path"].strip("/")
    if not spec["root"].rstrip("/").endswith("/" + path):
        raise SystemExit(f"the set's root {spec['root']} does not end with its source {path}")
    mirror = find_mirror(repo, {}, [MIRROR_ROOT])
    if mirror is None:
        raise SystemExit(
            f"{root} is missing: unpack {path}/ of {repo} at {commit} there "
            f"(no mirror of {repo} under {MIRROR_ROOT})"
        )
    top = ROOT / spec["root"].rstrip("/")[: -len(path)]
    top.mkdir(parents=True, exist_ok=True)
    archive = git("archive", "--format=tar", commit, "--", path, git_dir=mirror)
    subprocess.run(["tar", "-x", "-C", str(top)], input=archive.stdout, check=True)
    return root
