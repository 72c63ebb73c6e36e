"""ctx-mcp: the toolkit's library as tools of a Model Context Protocol server, for agents.

The package, from the top down (each module imports only those below it):

    server     the SDK glue (``mcp``, the extra: ``pip install '.[mcp]'`` in a clone): the
               low-level ``Server`` over stdio, tools/list and tools/call, handles as
               resources, the client's roots, children stopped on EOF and SIGTERM
    resources  handles as resources: ``ctx://SESSION/NAME[@SHA][?range=…]``
    tools      one function a tool: count, stash, read, run, excerpt, repomap, pack,
               compact -- each a thin call into the library the filters use
    schema     the tools' names, descriptions and JSON schemas, and the check of a call's
               arguments against them (a one-line error naming the argument)
    results    ctx-stash's rule for our own results: over the inline threshold, a result is
               stored and returned as its card, its first slice and the call that pages on
    calls      a call to a tool, written out (``read {"ref": …, "range": "41-"}``) where
               ctx-read would write the command line
    roots      the directories the tools may read, and the check of every path, symlink
               and @-mention against them

Only ``server`` imports the SDK; the rest is plain library code, never printing, raising
``CtxError`` as the filters do. Nothing here is imported by the seven filters.
"""
