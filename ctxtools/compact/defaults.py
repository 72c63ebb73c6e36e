"""The defaults of a compaction, in one place for the library (``Options``, the gate) and
ctx-compact's options; importing this module imports nothing else (start-up)."""

AT = 80.0  # compact at this percent of the window
BAND = 5.0  # ... and aim this many points lower
KEEP_RECENT = 3  # turns at the end that are never touched
SUMMARIZER_TIMEOUT = 60.0  # seconds
MAX_SUMMARIZER_TIMEOUT = 3600.0  # one hour: a local model summarising a long run, with room
MIN_RATIO = 0.02  # the gate: shortest summary, as a share of the original's length
MIN_PATH_SHARE = 0.5  # the gate: share of the original's file paths a summary must keep
