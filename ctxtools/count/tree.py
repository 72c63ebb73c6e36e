"""``ctx-count --tree``: the tokens of a directory's files, summed up the tree.

The files are the ones ctx-repomap lists (``source.listing.list_files``): in a git work tree
what ``git ls-files -co --exclude-standard`` shows, elsewhere a walk honouring
``.gitignore``; vendored trees and minified files are left out and counted in ``skipped``,
and so are the files the user's filter excludes (``--exclude``, the root's ``.ctxignore``).
Each file is counted with the run's ruler (a binary file by its bytes only, unless asked);
each directory holds the sums of everything under it.

``render`` draws the tree a person reads at a glance -- directories down to DEPTH levels,
at most TOP entries a directory, heaviest first, the rest summed on one line -- followed by
the heaviest files anywhere; ``document`` is the same tree as JSON. Both are deterministic:
ties are broken by path. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

_SUMS = ("tokens", "chars", "lines", "bytes")


@dataclass
class Node:
    """A file (``children`` None) or a directory (its name ends with ``/``) and its sums."""

    name: str
    path: str
    counts: dict = field(default_factory=lambda: dict.fromkeys(_SUMS, 0))
    files: int = 0
    children: dict[str, Node] | None = None

    @property
    def is_dir(self) -> bool:
        return self.children is not None

    def add(self, counts: dict) -> None:
        for key in _SUMS:
            self.counts[key] += counts[key]
        self.files += 1

    def ordered(self) -> list[Node]:
        """The children, heaviest first (tokens, then bytes), then by name."""
        kids = (self.children or {}).values()
        return sorted(kids, key=lambda n: (-n.counts["tokens"], -n.counts["bytes"], n.name))


@dataclass
class TreeCount:
    """A counted tree: ROOT as the user named it, how its files were listed (``git`` or
    ``walk``), the top node, files left out by reason, and why counts are not exact."""

    root: str
    via: str
    top: Node
    skipped: dict[str, int]
    not_exact: list[str]

    def files(self) -> list[Node]:
        """Every file node, heaviest first, then by path."""
        out: list[Node] = []
        stack = [self.top]
        while stack:
            node = stack.pop()
            if node.is_dir:
                stack.extend((node.children or {}).values())
            else:
                out.append(node)
        out.sort(key=lambda n: (-n.counts["tokens"], -n.counts["bytes"], n.path))
        return out

    def named(self, root: str) -> TreeCount:
        """This count with its root named ROOT (a repository's URL, not its cache)."""
        import dataclasses

        return dataclasses.replace(self, root=root)


def count_tree(
    root: str,
    ruler,
    *,
    count_binary: bool = False,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    path_filter=None,
) -> TreeCount:
    """Count every file under ROOT (``source.listing.list_files``) but those PATH_FILTER
    excludes (a ``pathfilter.PathFilter``; default: ROOT's .ctxignore); PROGRESS(done,
    total) is told the files counted so far. A file that cannot be read is skipped as
    unreadable."""
    from ctxtools.count.report import count_file
    from ctxtools.pathfilter import load_filter
    from ctxtools.source.listing import list_files

    if path_filter is None:
        path_filter = load_filter(root)
    # every file: none needs a scanner here
    listing = list_files(root, lambda rel: "", path_filter=path_filter)
    top = Node(".", "", children={})
    skipped = dict(listing.skipped)
    notes: list[str] = []
    files = sorted(listing.candidates, key=lambda c: c.rel)
    for done, cand in enumerate(files, 1):
        try:
            counts = count_file(cand.path, ruler, count_binary=count_binary, jobs=jobs)
        except OSError:
            skipped["unreadable"] = skipped.get("unreadable", 0) + 1
            continue
        if counts.get("exact") is False and counts["note"] not in notes:
            notes.append(counts["note"])
        _place(top, cand.rel, counts)
        if progress is not None:
            progress(done, len(files))
    return TreeCount(root, listing.via, top, dict(sorted(skipped.items())), notes)


def _place(top: Node, rel: str, counts: dict) -> None:
    parts = rel.split("/")
    node = top
    node.add(counts)
    for i, part in enumerate(parts[:-1]):
        assert node.children is not None
        name = part + "/"
        child = node.children.get(name)
        if child is None:
            child = node.children[name] = Node(name, "/".join(parts[: i + 1]) + "/", children={})
        child.add(counts)
        node = child
    assert node.children is not None
    leaf = Node(parts[-1], rel, dict(counts), 1)
    node.children[parts[-1]] = leaf


def _shown(node: Node, top: int) -> tuple[list[Node], list[Node]]:
    kids = node.ordered()
    if len(kids) > top:
        return kids[: top - 1], kids[top - 1 :]  # the last line sums the rest
    return kids, []


def _fmt(n: int) -> str:
    return f"{n:,}"


def render(tree: TreeCount, *, depth: int, top: int) -> str:
    """The tree as text: ``TOKENS  SHARE  PATH`` lines, directories down to DEPTH levels,
    at most TOP entries a directory; then the TOP heaviest files. Names are shown as
    ``quoting.quote_name`` shows them."""
    from ctxtools.quoting import quote_name

    total = tree.top.counts["tokens"]
    rows: list[tuple[str, str, str]] = []

    def share(n: int) -> str:
        return f"{100 * n / total:.1f}%" if total else "-"

    def label(node: Node) -> str:
        name = quote_name(node.name)
        if node.is_dir:
            return f"{name}  ({_fmt(node.files)} file{'s' if node.files != 1 else ''})"
        if node.counts.get("binary"):
            return f"{name}  (binary, {_fmt(node.counts['bytes'])} bytes)"
        return name

    def tokens(node: Node) -> str:
        return "-" if node.counts.get("binary") else _fmt(node.counts["tokens"])

    def walk(node: Node, prefix: str, level: int) -> None:
        if level >= depth:
            return
        shown, rest = _shown(node, top)
        entries: list[Node | None] = [*shown, None] if rest else list(shown)
        for i, kid in enumerate(entries):
            last = i == len(entries) - 1
            branch = prefix + ("└── " if last else "├── ")
            if kid is None:
                n = sum(k.counts["tokens"] for k in rest)
                rows.append((_fmt(n), share(n), f"{branch}… {len(rest)} more"))
                continue
            rows.append((tokens(kid), share(kid.counts["tokens"]), branch + label(kid)))
            if kid.is_dir:
                walk(kid, prefix + ("    " if last else "│   "), level + 1)

    root = quote_name(tree.root)
    rows.append((_fmt(total), share(total), f"{root}  ({_fmt(tree.top.files)} files)"))
    walk(tree.top, "", 0)
    heavy = tree.files()[:top]
    w1 = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    out = [f"{a:>{w1}}  {b:>{w2}}  {c}\n" for a, b, c in rows]
    if heavy:
        out.append("\nheaviest files:\n")
        w = max(len(tokens(n)) for n in heavy)
        out.extend(f"{tokens(n):>{w}}  {quote_name(n.path)}\n" for n in heavy)
    return "".join(out)


def notes(tree: TreeCount) -> list[str]:
    """The stderr notes of a tree: files left out, by reason."""
    if not tree.skipped:
        return []
    said = ", ".join(f"{n:,} {why}" for why, n in tree.skipped.items())
    return [f"note: not counted: {said}"]


def _node_json(node: Node, *, depth: int, top: int, level: int) -> dict:
    from ctxtools.fsutil import json_name

    doc: dict = {**json_name(node.path or "."), **node.counts}
    if not node.is_dir:
        return doc
    doc["files"] = node.files
    if level >= depth:
        return doc
    shown, rest = _shown(node, top)
    doc["children"] = [_node_json(k, depth=depth, top=top, level=level + 1) for k in shown]
    if rest:
        doc["more"] = {
            "entries": len(rest),
            **{key: sum(k.counts[key] for k in rest) for key in _SUMS},
        }
    return doc


def document(tree: TreeCount, described: dict, *, depth: int, top: int) -> dict:
    """``--tree --json``: the ruler (DESCRIBED), the root, how files were listed, the total,
    the tree as ``render`` shows it, the TOP heaviest files and what was skipped. A name is
    ``fsutil.json_name``'s: ``path`` (``root``), and ``path_quoted`` (``root_quoted``) when
    it is not UTF-8."""
    from ctxtools.fsutil import json_name

    doc = dict(described)
    if tree.not_exact:
        doc["exact"] = False
    doc.update(json_name(tree.root, "root"))
    doc["files_listed_by"] = tree.via
    doc["total"] = {**tree.top.counts, "files": tree.top.files}
    doc["tree"] = _node_json(tree.top, depth=depth, top=top, level=0)
    doc["heaviest"] = [{**json_name(n.path), **n.counts} for n in tree.files()[:top]]
    doc["skipped"] = tree.skipped
    return doc
