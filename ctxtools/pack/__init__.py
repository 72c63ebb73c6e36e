"""A prompt pack: the right text, in a stable order, under a model's real budget.

``build_pack(PackRequest(task=..., paths=[...]))`` assembles, in this fixed order:

1. **Instructions** -- AGENTS.md, CLAUDE.md, ... under the root (``ctxtools.instructions``:
   priority, byte caps, ``paths:`` gating against the pack's files);
2. **Skills** -- with a skills directory: one-line cards of the skills that match the task,
   full bodies only when earned (``ctxtools.skills``);
3. **Memory** -- with memory files: their sections that bear on the task, best first,
   under a share of the budget (``ctxtools.memory``, ``pack.memory_section``);
4. **Repository map** -- the repo map of the root, personalised toward the pack's files
   and the task: 900 tokens when the files leave room, less when they do not;
5. **Files** -- the candidates (arguments, directories, globs, ``listed``, @-mentions,
   ``changed``) less the noise a directory holds, ranked against the task
   (``ctxtools.retrieval``) and shown as their best definitions down to a relevance
   floor (real line numbers), as signatures for the roles that explore, or as a path
   when nothing more fits; a changed file's diff hunks come first (``pack.choose``);
6. **Task** -- last, verbatim.

Stable content first, volatile last, and the same inputs give the same bytes (files sorted
by path; nothing from the clock or the filesystem's order), so a serving engine can reuse
the KV-cache of the prefix.

The budget is DESIGN.md's (``profiles.pack_budget``) or ``tokens``; every part is counted
with the run's ruler and the finished text is counted once more: ``Pack.tokens <=
Pack.budget`` always holds, or the build fails. When the whole is over, the fitting
rounds (``pack.fit``) shrink the map first, then the files' share; within the files the
plan keeps the best chunks of the whole ranking first. A file the user named (an
argument, an @-mention, or a file changed under ``changed``) comes before the others, as
its lines, its signatures or at least its path; when not even its path fits the build
fails naming it, unless ``allow_drop``.

What goes to a model provider must not carry credentials: files that are secrets by name
are skipped even when named, and secrets found in any text are replaced by
``[secret redacted: KIND]`` (``ctxtools.secrets``, ``pack.redact``), unless
``allow_secrets``. What the build said, left out and redacted is its ledger
(``pack.ledger``): ``Pack.notes`` (for stderr), ``Pack.dropped`` and ``Pack.redactions``,
all shown by ``Pack.explain``.

Nothing here prints. Errors are ``CtxError``s: missing paths (all named in one error;
``keep_going`` packs the rest), paths outside the root, a budget below the floor, a named
file that cannot fit, ``changed`` outside a git work tree.
"""

from ctxtools.pack.build import build_pack, compute_budget
from ctxtools.pack.inputs import changed_files
from ctxtools.pack.model import FORMATS, MAP_TOKENS, SECTIONS, FileEntry, Pack, PackRequest

__all__ = [
    "FORMATS",
    "MAP_TOKENS",
    "SECTIONS",
    "FileEntry",
    "Pack",
    "PackRequest",
    "build_pack",
    "changed_files",
    "compute_budget",
]
