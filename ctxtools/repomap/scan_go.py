"""Go scanner (placeholder until the shared C-like scanner lands: no definitions yet)."""

from ctxtools.repomap.scan import ScanResult


def scan(text: str) -> ScanResult:
    return ScanResult("go")
