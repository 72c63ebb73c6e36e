"""A prompt pack: the right text, in a stable order, under a model's real budget.

``build_pack(PackRequest(task=..., paths=[...]))`` assembles, in this fixed order:

1. **Instructions** -- AGENTS.md, CLAUDE.md, ... under the root (``ctxtools.instructions``:
   priority, byte caps, ``paths:`` gating against the pack's files);
2. **Skills** -- with a skills directory: one-line cards of the skills that match the task,
   full bodies only when earned (``ctxtools.skills``);
   then **Memory** -- with memory files: their sections that bear on the task, best first,
   under a share of the budget (``ctxtools.memory``);
3. **Repository map** -- the repo map of the root, personalised toward the pack's files
   and the task, 900 tokens when the files leave room, less when they do not;
4. **Files** -- every file excerpted around the task's identifiers (real line numbers), or
   its signatures for the roles that explore; with ``changed`` its diff hunks first;
5. **Task** -- last, verbatim.

Stable content first, volatile last, and the same inputs give the same bytes (files sorted
by path; nothing from the clock or the filesystem's order), so a serving engine can reuse
the KV-cache of the prefix.

The budget is DESIGN.md's (``profiles.pack_budget``) or ``tokens``; every part is counted
with the run's ruler and the finished text is counted once more: ``Pack.tokens <=
Pack.budget`` always holds, or the build fails. What does not fit is dropped in this
order: file windows with the lowest scores, then whole files (lowest match score, then
lowest repo-map rank), then the map shrinks; a file the user named (an argument, an
@-mention, or a file changed under ``changed``) keeps at least its signatures, and when
even those cannot fit the build fails naming it, unless ``allow_drop``.

What goes to a model provider must not carry credentials: files that are secrets by name
are skipped even when named, and secrets found in any text are replaced by
``[secret redacted: KIND]`` (``ctxtools.secrets``), unless ``allow_secrets``. Everything
skipped, dropped, redacted or gated is in ``Pack.notes`` (for stderr) and ``Pack.explain``.

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
