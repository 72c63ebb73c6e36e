"""Choosing the text a task is about: what ctx-pack's files section is made of.

The modules, each importing only those above it (the task is read by
``ctxtools.analyzer.parse_query``: weighted terms, names, paths, stack frames, messages):

    chunks  chunk_file: a file cut into its definitions (the units that are ranked)
    terms   Terms, Stats, bm25: counting the query's terms, BM25's corpus statistics
    noise   PathFilter (from ctxtools.pathfilter): --include/--exclude/.ctxignore (what a file is --
            noise, source vs tests vs docs -- is ``ctxtools.source.classify``'s answer)
    history read_signal, apply: the functions past commits like the task changed, raised
    rank    rank_sources: files and their chunks scored against the query
    plan    plan: what to show of each ranked file under a token budget

No click, no printing; ``ctxtools.pack.choose`` ties them to a pack. Nothing here is
imported until it is used.
"""
