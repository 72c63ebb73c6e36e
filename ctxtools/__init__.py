"""ctxtools: Unix filters that manage what goes into a language model's context window.

The library (this package) holds the logic and never prints; ``ctxtools.cli`` is the thin
click layer behind the ``ctx-*`` console scripts.
"""

__version__ = "0.1.0"

# The date stamped into generated man pages. Fixed per release, never "today", so that
# regenerating the docs gives the same bytes tomorrow.
DOCS_DATE = "2026-11-30"
