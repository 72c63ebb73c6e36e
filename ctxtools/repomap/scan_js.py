"""JavaScript/TypeScript scanner (placeholder until the shared C-like scanner lands)."""

from ctxtools.repomap.scan import ScanResult


def scan_javascript(text: str) -> ScanResult:
    return ScanResult("javascript")


def scan_typescript(text: str) -> ScanResult:
    return ScanResult("typescript")
