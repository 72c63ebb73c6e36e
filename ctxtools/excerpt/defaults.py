"""How a file is cut unless told otherwise: the defaults of ``ExcerptOptions`` and of
ctx-excerpt's --window, --head, --max-windows and --tail, in a module of their own so that
the command line reads them without importing the library."""

WINDOW = 25  # lines before and after each matching line
HEAD = 15  # first lines of every file, always shown
MAX_WINDOWS = 6  # windows per file
TAIL = 40  # last lines shown when nothing matches
MAX_LINE_CHARS = 500  # a longer line is cut and ends with "…[+N chars]"
