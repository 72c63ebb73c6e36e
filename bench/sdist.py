"""Released source distributions from PyPI, kept in bench/corpora/ (gitignored) for the
benchmarks that run on real code and docs (Django, SQLAlchemy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORPORA = Path(__file__).resolve().parent / "corpora"


def sdist(name: str, version: str) -> Path:
    """The sdist tarball of NAME==VERSION in bench/corpora/, fetched with ``pip download``
    (no wheels) the first time. Its file name's case is the project's own (Django-…)."""
    CORPORA.mkdir(parents=True, exist_ok=True)
    wanted = f"{name}-{version}.tar.gz".lower()

    def found() -> Path | None:
        return next((p for p in sorted(CORPORA.iterdir()) if p.name.lower() == wanted), None)

    path = found()
    if path is None:
        pip = Path(sys.executable).parent / "pip"
        subprocess.run(
            [
                str(pip),
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{name}=={version}",
                "-d",
                str(CORPORA),
            ],
            check=True,
        )
        path = found()
        if path is None:
            raise SystemExit(f"pip download gave no {wanted} in {CORPORA}")
    return path
