"""The repository map, read top-down: ``core.build_map`` lists the files (``files``), scans
them through the scan cache (``scanset``, with the scanners of the ``scan`` package and the
records of ``cache``), ranks them (``rank``, on the file graph of ``graph``) and fits the
map to a token budget (``render``).

``ctxtools.repomap.scan`` is the entry point for the scanners (also used by
``ctx-excerpt --signatures``): ``scan_source(path, text)`` and ``language_for(path)``.
"""
