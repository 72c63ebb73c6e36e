"""Reading text into the words it is matched by: the one analyzer of the toolkit.

Every command that matches a task against text -- ctx-pack's files, memory and skills
sections, ``ctx-repomap --query``, ctx-excerpt -- reads the task here, and reads its
documents' words with the same tokenizer and the same stop list, so a task word and a
document word meet. It sits at the bottom of the layers: it imports nothing of the toolkit
but ``ctxtools.identifiers`` (the compound-name helpers) and ``ctxtools.lazy``.

The modules, each importing only those above it:

    tokenizer the tokenizer and the stop list: tokens, words, parts (a document's word),
              sequence, is_stop, WORD_BYTES; identifiers_from_query (ctx-excerpt's)
    mentions  parse_mentions: the @-mentions of a task (@path, @basename, @ctx:, @skill:)
    refs      task_refs, message_refs: the tickets a text cites (#1234, JENKINS-19446)
    query     parse_query: a task's weighted terms, names, paths, stack frames, messages,
              tickets
    task      read_task: a task read once (mentions, prose, words, query)

No click, no printing, no I/O. Nothing here is imported until it is used.
"""

from __future__ import annotations

from ctxtools.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "tokenizer": ("is_stop", "parts", "sequence", "words", "identifiers_from_query"),
        "mentions": ("Mention", "parse_mentions", "variants"),
        "refs": ("message_refs", "task_refs"),
        "query": ("Frame", "Query", "parse_query"),
        "task": ("Task", "read_task"),
    },
)
