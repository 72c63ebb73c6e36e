"""The repository map, read top-down: ``core.build_map`` takes a tree's scans from
``ctxtools.source`` (``scanset.scan_repository``: listed, read and scanned through the
scan cache), ranks them (``rank``, on the file graph of ``graph``) and fits the map to a
token budget (``render``); ``records`` holds its graph, fit and result records, and
``explain`` what ``--explain`` says of a map.
"""
