"""The project's standing instructions for a pack: which files, how much of them, which parts.

``load_instructions(root, pack_files)`` reads the instruction files under ROOT and returns
what the "Instructions" section of a ctx-pack holds. The contract:

Which files, in this order (``CANDIDATES``): ``AGENTS.md``, ``CLAUDE.md``, ``AGENT.md``,
``.cursorrules``, the rule files under ``.cursor/rules/`` (every non-hidden regular file,
subfolders included, at most ``RULES_LIMIT``, sorted by path), ``.ctx/AGENTS.md``,
``.ctx/PROJECT.md``, and ``README.md`` last with ``include_readme``. Names are exact (case
matters). ``.ctx/AGENTS.md`` is its own file and comes after (layers under) the root
``AGENTS.md``.

Once only: a file reached twice (a symlink such as ``CLAUDE.md -> AGENTS.md``, a hard link,
or a rule file linking to another candidate) appears once, under the first name reached
(de-duplicated by its resolved path relative to ROOT, and by inode); so does a file whose
bytes equal those of one already included (a copied ``CLAUDE.md``: compared only when the
sizes agree, up to ``SCAN_LIMIT``). Later copies are listed in ``dropped``.

Never outside ROOT: a candidate (or a folder on its way, such as ``.cursor``) that resolves
outside ROOT is skipped with a note, as are broken links, symlink loops, anything that is
not a regular file (a FIFO is never opened), unreadable files, and binary files (a NUL byte
in the first 8 KiB, git's test). Text is decoded as UTF-8 with ``replace``; a UTF-8 BOM is
dropped.

Gating by path. A pack's files are relative paths (``pack_files``); patterns are gitignore
globs (``pathspec``'s ``GitIgnoreSpec``): ``**`` crosses folders, a pattern without a slash
(``*.go``) matches at any depth, ``cmd/**`` everything under ``cmd``, ``!`` negates, and
``{a,b}`` braces are expanded first (Cursor writes ``**/*.{ts,tsx}``).

- Front matter (``---`` on the first line, closed by ``---`` or ``...`` within
  ``FRONT_MATTER_MAX_LINES`` lines) gates the whole file with ``paths:`` or Cursor's
  ``globs:``, each either a comma-separated list (``paths: pkg/**/*.go, cmd/**``) or a YAML
  list (``paths:`` then ``  - a/**`` lines); other keys are passed over unread (a nested
  mapping under ``metadata:`` is no error). Both keys are read in every file; given
  together, they add up. ``alwaysApply: true`` (Cursor) makes the file apply whatever its
  globs. An empty ``globs:`` (Cursor writes it) means no gate; an empty ``paths:`` is
  malformed. So a Cursor rule with neither globs nor ``alwaysApply`` (Cursor's "agent
  requested" and manual rules) is included: a pack has no agent to request it. Front
  matter is never part of the included text.
- A heading ``## Title <!-- paths: web/**/*.tsx -->`` gates its section: the heading and
  everything up to the next heading of the same or a higher level (fewer ``#``). Gates nest
  (a section applies when every enclosing gate applies). Only ATX headings count (``#`` to
  ``######`` at the start of a line, up to three spaces in); lines inside fenced code blocks
  (three or more backticks or tildes) are never headings. The comment is removed from the
  included heading.
- A gated part applies when at least one pack file matches. No gate: always applies. With
  ``pack_files`` None or empty, gating is off and everything applies (gates still parsed).
  A part that does not apply is listed in ``dropped`` (``section`` is its heading's title,
  None for a whole file).
- Malformed front matter (unterminated, a line that is not ``key: value`` / list item /
  continuation, an unclosed quote or bracket, a key given twice, an empty ``paths:``, a
  pattern that does not compile) or a malformed heading gate: a note, and the file (or
  section) is ungated (past ``GATE_NOTE_LIMIT`` malformed gates in one file, one note
  counts the rest). Unterminated front matter is read as ordinary text; terminated but
  malformed front matter is still removed.

Caps, in bytes of the included text (UTF-8, after gating, markers included): each file
gets ``min(max_file, max_total - bytes already included)``. A file over its share is cut
at a line boundary and ends with a marker line ``[… N bytes of PATH left out: CAP]``, N
being the file's bytes on disk after the cut; a single line is cut (at a character
boundary, never inside a UTF-8 sequence) only when no whole line fits. The total is checked
after each file is added: once a file was cut by the total cap, or the total is reached, no
further file is added (each left out is listed in ``dropped``, unread); a file whose share
cannot hold even the marker is not added at all. A file is read only as far as its share
needs (a 1 MB AGENTS.md costs the 8 KiB binary probe and about 4 KB of lines), and never
more than ``SCAN_LIMIT`` bytes when gated-out sections have to be skipped (the text then
ends with a ``read limit`` marker). Files whose included text is blank are left out. The
section headers a renderer adds are not counted. Each cut is also listed in ``dropped``
(``section``: the heading in effect where the cut fell), and one note names every file cut
or left out by a cap.

Output is deterministic: the same tree and pack files give the same result whatever the
directory order. The package never prints; ``notes`` holds the warnings for stderr.

The package, from the top down: ``layering`` (``load_instructions``: order, once only,
caps) reads each file with ``reading`` (probe, front matter, gated sections, the cut),
after ``discovery`` (the candidates, resolved and checked); ``context`` holds one run's
state; ``gates`` compiles globs, ``frontmatter`` parses the YAML subset. Imports go only
in that direction (``layering`` -> ``reading`` -> ``discovery`` -> ``context`` ->
``gates`` -> ``frontmatter``).
"""

from __future__ import annotations

from ctxtools.instructions.discovery import CANDIDATES, README, RULES_DIR, RULES_LIMIT
from ctxtools.instructions.frontmatter import (
    FRONT_MATTER_MAX_LINES,
    FrontMatterError,
    parse_front_matter,
    split_front_matter,
    split_top_level,
)
from ctxtools.instructions.gates import (
    BRACE_LIMIT,
    Gate,
    compile_gate,
    expand_braces,
    glob_patterns,
    normalise_pack_files,
)
from ctxtools.instructions.layering import (
    MAX_FILE,
    MAX_TOTAL,
    InstructionFile,
    Instructions,
    load_instructions,
)
from ctxtools.instructions.reading import BINARY_PROBE, FRONT_MATTER_KEYS, SCAN_LIMIT

__all__ = [
    "BINARY_PROBE",
    "BRACE_LIMIT",
    "CANDIDATES",
    "FRONT_MATTER_KEYS",
    "FRONT_MATTER_MAX_LINES",
    "MAX_FILE",
    "MAX_TOTAL",
    "README",
    "RULES_DIR",
    "RULES_LIMIT",
    "SCAN_LIMIT",
    "FrontMatterError",
    "Gate",
    "InstructionFile",
    "Instructions",
    "compile_gate",
    "expand_braces",
    "glob_patterns",
    "load_instructions",
    "normalise_pack_files",
    "parse_front_matter",
    "split_front_matter",
    "split_top_level",
]
