"""The repository map: per-language definition/reference scanners, graph, rank, rendering.

``ctxtools.repomap.scan`` is the entry point for the scanners (also used by
``ctx-excerpt --signatures``): ``scan_source(path, text)`` and ``language_for(path)``.
"""
