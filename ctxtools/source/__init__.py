"""What every command shares about source code, read bottom-up:

``classify``
    what a file is by its path and content: its role (source, test, docs ...), why a
    listing leaves it out (vendored, minified), why a pack or the map does (noise:
    binary, generated, data ...). Whether bytes are text at all is ``ctxtools.binary``.
``scan``
    the scanners, hand-written and tree-sitter: ``scan_source(path, text)`` and
    ``language_for(path)``; one table, ``scan.languages``, says which files are a
    language's and what reads them.
``listing``
    which files of a tree are looked at (``git ls-files`` or a walk, the one ignore
    filter, scripts by their ``#!`` line).
``memo`` and ``scancache``
    what is kept in the store between runs: named records under a key (``Memo``), and
    each file's scan under its stat and content hash (``ScanCache``).
``scanset``
    ``scan_repository``: a tree listed, read and scanned through the scan cache, as
    ``FileScan`` records.

The repo map (``repomap``), the pack, ctx-excerpt's signatures, the ranking, the
mentions' index and ``ctx-count --tree`` stand on it; it imports none of them.
"""
