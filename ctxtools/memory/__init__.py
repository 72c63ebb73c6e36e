"""Project memory in packs: the sections of memory files that bear on a task.

``rank_memory(paths, task)`` chunks Markdown, reStructuredText and plain-text files
(``chunk``: by headings, by underlined titles, by paragraph groups; every chunk with its
real line range), scores every chunk against the task with one of three offline,
deterministic methods -- the local hashing embedder (``hashing``), TF-IDF (``tfidf``), or
vectors from an external command (``cmd``) -- and keeps the chunks whose score clears the
threshold (``threshold``: the method's noise floor, or the corpus's median score plus a
margin when that is higher). Vectors, term counts and corpus statistics are cached in the
store by content hash (``cache``). Nothing here prints; notes say what was skipped, what
fell back and what could not be cached.
"""

from ctxtools.memory.rank import DEFAULT_METHOD, METHODS, Ranking, Scored, rank_memory

__all__ = ["DEFAULT_METHOD", "METHODS", "Ranking", "Scored", "rank_memory"]
