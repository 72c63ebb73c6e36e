"""ctx-repomap: not implemented yet (issue 5)."""

from ctxtools.cli.common import not_implemented

cli, main = not_implemented("ctx-repomap", "issue 5")
