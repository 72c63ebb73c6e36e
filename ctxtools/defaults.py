"""The defaults a user can see: the values the commands show in ``--help`` and use.

One place for each number, read by the click options (``ctxtools.cli``) and by the library.
This module imports nothing, so reading it costs a command's start-up nothing; the heavier
library modules that use a value import it from here (``profiles``, ``config``,
``pack.model``), and ``tests/test_cli_common.py`` checks the others still agree.
"""

# The largest value a whole-number option takes (ctxtools.cli.types.Whole, fsutil.parse_size):
# far above any real use, and far below what would overflow a C size or a float.
MAX_TOKENS = 1_000_000_000  # a budget, a window, a reserve, a gate: tokens
MAX_COUNT = 1_000_000_000  # lines, characters, windows, entries, files, matches
MAX_SIZE = 1 << 40  # bytes: 1T
MAX_JOBS = 64  # worker processes or threads
MAX_TIMEOUT = 3600.0  # seconds a helper command may run

# The store (ctxtools.config, ctxtools.store)
SESSION = "default"
EVICT_STRATEGIES = ("lru", "importance")  # ctxtools.evict.STRATEGIES, in --help order
EVICT_STRATEGY = "lru"

# ctx-stash
THRESHOLD = 1000  # inputs of at most this many characters pass through unchanged

# ctx-read (ctxtools.projections)
MAX_CHARS = 12_000  # a read's output cap
MAX_CHARS_CEILING = 50_000  # what --max-chars is clamped to

# The model profile of ctx-pack, ctx-compact and ctx-count --budget given neither --model nor
# --limit: the [default] table of ctxtools/data/profiles.toml (ctxtools.profiles.resolve)
DEFAULT_PROFILE = "default"

# The pack budget (ctxtools.profiles.pack_budget; DESIGN.md "Pack budget")
RESERVE_SYSTEM = 500
RESERVE_TOOLS = 900
RESERVE_RESPONSE = 2048
SLACK_PERCENT = 10

# ctx-excerpt (ctxtools.excerpt.ExcerptOptions)
EXCERPT_WINDOW = 25
EXCERPT_HEAD = 15
EXCERPT_MAX_WINDOWS = 6
EXCERPT_TAIL = 40

# ctx-repomap (ctxtools.repomap.core)
MAP_TOKENS = 1000
MAP_MAX_FILES = 4000
MAP_MAX_FILE_SIZE = "512K"  # as --help shows it; parsed, MAX_FILE_SIZE of repomap.core

# ctx-compact (ctxtools.compact.plan.Options, ctxtools.compact.accept)
COMPACT_AT = 80.0
KEEP_RECENT = 3
SUMMARIZER_TIMEOUT = 60.0
MAX_SUMMARIZER_TIMEOUT = MAX_TIMEOUT  # one hour: a local model summarising a long run
MIN_RATIO = 0.02
MIN_PATH_SHARE = 0.5

# ctx-pack (ctxtools.pack.model.PackRequest)
SKILL_MAX_EXPANDED = 2

# ctx-count (ctxtools.cli.count, ctxtools.cli.count_fast)
PROGRESS_MIN_BYTES = 64 << 20  # the progress bar, on a terminal, from this input size
PROGRESS_MIN_FILES = 200  # ... or from this many files (ctx-count)
TREE_DEPTH = 2  # ctx-count --tree: directory levels shown
TREE_TOP = 10  # ctx-count --tree: entries shown per directory

# Input that must be JSON (--jsonpath, --messages, ctx-compact, --evict): judged from its
# first JSON_SNIFF_BYTES, and one JSON document is parsed only up to JSON_DOCUMENT_MAX
# bytes: a parsed document takes 3-4 times its size in memory, and a command stays under
# 300 MB (up to ~370 MB when most strings hold a character past U+FFFF, which CPython keeps
# in 4 bytes each: measured by bench/bench_compact.py --at-limit). The same bound holds for
# what must be held whole however it comes: a transcript ctx-compact compacts, JSON Lines
# queried with --jsonpath, one line of JSON Lines. (ctx-count --messages reads JSON Lines a
# line at a time, so they have no bound there.)
# --accept's two texts are read up to ACCEPT_MAX_BYTES each.
JSON_SNIFF_BYTES = 64 << 10
JSON_DOCUMENT_MAX = 48 << 20
ACCEPT_MAX_BYTES = 64 << 20
SPLIT_MIN = 64  # ctx-pack --split: a smaller part holds little but its header and fence
