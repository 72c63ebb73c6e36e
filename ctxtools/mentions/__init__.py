"""@-mentions in a task: resolve ``@path`` and ``@basename`` to files.

``ctxtools.analyzer.parse_mentions(task)`` finds ``@jwt.py``, ``@src/auth/jwt.py``,
``@ctx:tests`` and ``@skill:review`` in a task string (the parsing rules are there: the
analyzer reads a task once). ``MentionResolver(root).resolve(mention)`` turns a path or
basename mention into a file under ROOT, and says how it chose.

Resolution (paths and basenames only):

- ``@path`` (or a basename that is an exact relative path at the root) resolves to
  ROOT/path when that is a regular file inside ROOT; ``..`` or a symlink that leaves ROOT
  never resolves. This needs no index.
- Otherwise a basename index is built, lazily, on the first miss: the repository's files
  as the repo map lists them (git-aware, .gitignore honoured, symlinked directories not
  entered, vendored trees and minified files left out), shallowest first, at most 50,000
  (then less the tracked files deleted from the work tree, which git still lists).
  It is cached in the store (``mentions/<hash of the root>.json``, written atomically)
  with the mtime of every directory that holds an indexed file. A later run stats those
  directories (a few hundred stats for Django, far cheaper than listing the tree again) and
  rebuilds when one changed: adding, removing or renaming a file changes its directory's
  mtime. What that misses (a new file in a directory that held no indexed file, a changed
  .gitignore) is caught by the second rule: a cached index that cannot resolve a mention,
  or offers a candidate that no longer exists, is rebuilt once before the answer is given.
- A basename matches files of that exact name; failing that, a name without an extension
  (``@jwt``) matches files whose name without its last extension is that (``jwt.py``,
  ``jwt.go``); failing that, the same two, ignoring case. A path that is not exact
  matches the files whose path ends with it (``@auth/jwt.py`` → ``src/auth/jwt.py``).
- Several candidates are ranked by frecency, ``count × e^(−λ·age)`` with a half-life of
  7 days, from this resolver's own use log (``record_use``); then files outside tests
  before test files; then the shallower path; then the path's code points.
- An unresolved mention gives ``path=None``, the closest basenames (difflib) in
  ``candidates`` and in the reason.

Nothing here prints. A store that cannot be written (read-only, full) costs the cache and
the use log, never the resolution; why is kept in ``MentionResolver.notes``.

The package: ``resolver`` (``MentionResolver``), which
uses ``basenames`` (the basename index and its cache) and ``uselog`` (frecency); ``common``
holds the path and store helpers they share. Imports go from ``resolver`` down.
"""

from __future__ import annotations

from ctxtools.mentions.basenames import INDEX_VERSION, MAX_INDEX_ENTRIES
from ctxtools.mentions.resolver import CLOSEST, MentionResolver, Resolution
from ctxtools.mentions.uselog import HALF_LIFE_DAYS, LAMBDA, MAX_USES, frecency

__all__ = [
    "CLOSEST",
    "HALF_LIFE_DAYS",
    "INDEX_VERSION",
    "LAMBDA",
    "MAX_INDEX_ENTRIES",
    "MAX_USES",
    "MentionResolver",
    "Resolution",
    "frecency",
]
