"""ctx-excerpt: not implemented yet (issue 4)."""

from ctxtools.cli.common import not_implemented

cli, main = not_implemented("ctx-excerpt", "issue 4")
