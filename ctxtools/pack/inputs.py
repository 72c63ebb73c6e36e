"""From paths, mentions and --changed to the files of a pack, read and redacted."""

from __future__ import annotations

import glob
import os
import subprocess

from ctxtools.binary import is_binary
from ctxtools.errors import CtxError, InputError, UsageError
from ctxtools.fsutil import check_cwd, check_resource, file_identity
from ctxtools.pack.ledger import Ledger
from ctxtools.pack.model import MAX_FILE_BYTES, FileEntry, PackRequest, replaceable
from ctxtools.quoting import quote_name
from ctxtools.source.classify import listing_skip, noise_by_name  # (asked once a file)

_GLOB_CHARS = frozenset("*?[")
LISTED = "--files-from"  # why a file is planned: a --files-from entry (a candidate)
SECRETS_SAID = 5  # secret files found in a directory said one by one; the rest in one line


def _is_pipe(path: str) -> bool:
    """Whether PATH opens a pipe (a process substitution's /dev/fd/N, a FIFO)."""
    import stat

    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _rel(real: str, root_real: str) -> str:
    return os.path.relpath(real, root_real).replace(os.sep, "/")


class OutputGuard:
    """The file ``-o`` names, if it exists, and whether another name is that file (the same
    device and inode: a hard link, a symbolic link, another spelling of its path)."""

    def __init__(self, output: str | None):
        self.output = output if output and output != "-" else None
        self.real = os.path.realpath(self.output) if self.output else None
        self.identity = None  # only a regular file is an input's other name (not a tty)
        if self.output and os.path.isfile(self.output):
            self.identity = file_identity(self.output)
        self._earlier: bool | None = None

    def names(self, path: str, real: bool = False) -> bool:
        """Whether PATH (already resolved when REAL) is the output file."""
        if self.real is None:
            return False
        if (path if real else os.path.realpath(path)) == self.real:
            return True
        return self.identity is not None and file_identity(path) == self.identity

    def under(self, directory: str) -> bool:
        """Whether the output file lies under DIRECTORY (through any symbolic link)."""
        if self.real is None or self.identity is None:
            return False
        return _inside(self.real, os.path.realpath(directory))

    def earlier_pack(self) -> bool:
        """Whether the existing output file is what ctx-pack writes (a pack, a part of a
        split one) or empty: a file it may replace though a directory holds it. Any other
        file would be destroyed (``-o src/app.py .``, ``-o README.md .``)."""
        if self._earlier is None:
            self._earlier = replaceable(self.output)  # type: ignore[arg-type]
        return self._earlier

    def error(self, what: str) -> UsageError:
        return UsageError(
            f"-o {self.output} is an input of this pack ({what}); nothing was written",
            hint="write the pack to another file",
        )

    def check(self, sources: list[tuple[str, str]]) -> None:
        """Raise the usage error when the output is one of SOURCES, (label, path) pairs: a
        file's path, or a directory the pack reads files from."""
        for label, path in sources:
            if self.names(path) or (os.path.isdir(path) and self.under(path)):
                raise self.error(label)

    def check_store(self, store: str | os.PathLike | None) -> None:
        """Raise a usage error when the output lies in the store (--store, CTX_STORE, else
        the default root) by any name (``overwrite.store_file_named``): a blob written over
        is every handle that shares it lost."""
        if self.output is None:
            return
        from ctxtools.config import store_root
        from ctxtools.overwrite import store_file_named

        where = store_file_named(self.output, store_root(store))
        if where is not None:
            raise UsageError(
                f"-o {self.output} is {where}; nothing was written",
                hint="write to a file outside the store",
            )


class TaskPaths:
    """A task's PATHS (as written: relative, absolute, from another checkout), asked of
    one file at a time: a path names a file by its trailing
    components, two or more of them (``a/b.py`` names ``src/a/b.py``), or by being its
    whole path. A bare ``b.py`` names no deeper file the listing leaves out: a name alone
    may stand for many vendored copies. Only the paths that end in the file's name are
    compared (a node_modules of 50,000 files against 200 paths costs one look a file)."""

    def __init__(self, paths):
        from ctxtools.retrieval.pointers import suffix_len

        self._suffix_len = suffix_len
        self.by_name: dict[str, list[list[str]]] = {}
        for p in paths:
            want = [x for x in p.split("/") if x and x != "."]
            if want:
                self.by_name.setdefault(want[-1], []).append(want)

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def __call__(self, rel: str) -> bool:
        wants = self.by_name.get(rel[rel.rfind("/") + 1 :])
        if not wants:
            return False
        parts = rel.split("/")
        for want in wants:
            n = self._suffix_len(parts, want)
            if n == len(want) == len(parts) or n >= 2 and n == min(len(want), len(parts)):
                return True
        return False


class Gatherer:
    """Turns the request's paths, mentions and changes into FileEntry records; what it
    skips is said in LEDGER."""

    def __init__(self, req: PackRequest, root: str, root_real: str, ledger: Ledger):
        self.req = req
        self.root = root
        self.root_real = root_real
        self.entries: dict[str, FileEntry] = {}
        self.handles: dict[str, FileEntry] = {}
        self.missing: list[str] = []
        self.outside: list[str] = []
        self.ledger = ledger
        self.output = OutputGuard(req.output)
        # the pack's path filter (build.py): its --include globs are asked while
        # directories are listed (a vendored or minified file they name is listed)
        self.path_filter = None
        # the task's paths (``Query.paths``): a vendored or minified file one of them
        # names by two or more trailing components is listed too (``TaskPaths``)
        self.task_paths: tuple[str, ...] = ()
        if req.task:  # (the task's one reading: the Chooser ranks with the same Query)
            from ctxtools.analyzer import read_task

            self.task_paths = read_task(req.task).query.paths

    def add_file(
        self, real: str, named: bool, why: str, rel: str | None = None, judged: bool = False
    ) -> None:
        """Plan the file at REAL (inside the root) as REL (default: REAL's own path);
        JUDGED: a directory listing judged its link target already."""
        rel = rel if rel is not None else _rel(real, self.root_real)
        if self.output.names(real, real=True):
            if named or why == LISTED:  # the user named it: the pack would destroy it
                raise self.output.error(f"{why} {rel}")
            if not self.output.earlier_pack():  # a source file a directory turned up
                raise self.output.error(f"{rel}, which ctx-pack did not write")
            return  # a file a directory or a glob turned up (an earlier pack): left out
        old = self.entries.get(rel)
        if old is not None:
            old.named = old.named or named
            return
        self.entries[rel] = FileEntry(rel, real, named, why, target_judged=judged)

    def add_path(self, arg: str, named: bool = True, why: str = "argument") -> None:
        """Plan the file, directory, glob or handle ARG: NAMED (an argument) or a candidate
        (a --files-from entry)."""
        from ctxtools.resolve import is_handle_ref

        if is_handle_ref(arg):
            self.add_handle(arg, named=named, why=why)
            return
        check_cwd(arg)  # (a relative ARG where the working directory was removed)
        path = os.path.abspath(arg)
        if not os.path.lexists(path) and _GLOB_CHARS & set(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                self.missing.append(f"{quote_name(arg)}: no file matches")
                return
            links_out = 0
            for m in matches:
                if os.path.islink(m) and not _inside(os.path.realpath(m), self.root_real):
                    links_out += 1  # skipped as a directory's listing skips it, not an error
                    continue
                self._add_existing(m, arg, named=False, why=f"glob {quote_name(arg)}")
            if links_out:
                self.ledger.info(
                    f"{quote_name(arg)}: {links_out} file(s) skipped (symlink outside the root)"
                )
            return
        self._add_existing(path, arg, named=named, why=why)

    def _add_existing(self, path: str, arg: str, named: bool, why: str) -> None:
        shown = quote_name(arg)
        try:
            real = os.path.realpath(path, strict=True)
        except OSError as exc:
            if _is_pipe(path):  # /dev/fd/63 of <(cmd): a link to "pipe:[N]", no path
                self.missing.append(
                    f"{shown}: a pipe, not a file: store its output with ctx-stash --name "
                    "NAME and name the handle"
                )
            elif os.path.islink(path):
                self.missing.append(f"{shown}: broken or looping symbolic link")
            else:
                self.missing.append(f"{shown}: {exc.strerror or 'cannot be read'}")
            return
        if not _inside(real, self.root_real):
            self.outside.append(arg)
            return
        if os.path.isdir(real):
            self.add_directory(real, arg)
            return
        if not os.path.isfile(real):
            self.missing.append(f"{shown}: not a regular file")
            return
        if not os.access(real, os.R_OK):
            self.missing.append(f"{shown}: permission denied")
            return
        self.add_file(real, named, why)

    def add_directory(self, real: str, arg: str) -> None:
        from ctxtools.source import listing as listmod

        # The listing never leaves the directory (a symlink is kept only when it resolves to
        # a file inside it), so each file is named by its path under the directory.
        prefix = _rel(real, self.root_real)
        prefix = "" if prefix == "." else prefix + "/"
        filt, keep = self.path_filter, None
        include = filt is not None and bool(filt.include)
        named = TaskPaths(self.task_paths)
        if include or named:
            def keep(rel: str) -> bool:
                return named(prefix + rel) or (include and filt.included(prefix + rel))
        listing = listmod.list_files(real, lambda rel: "text", keep=keep)
        self._output_left_out(real, arg)
        for cand in listing.candidates:
            why = f"directory {quote_name(arg)}"
            self.add_file(cand.path, False, why, prefix + cand.rel, judged=True)
            entry = self.entries.get(prefix + cand.rel)
            if entry is not None and entry.path == cand.path:
                entry.stat = (cand.size, cand.mtime_ns, cand.ctime_ns)
        for reason, n in sorted(listing.skipped.items()):
            self.ledger.info(f"{quote_name(arg)}: {n} file(s) skipped ({reason})")

    def _output_left_out(self, real: str, arg: str) -> None:
        """Refuse an ``-o`` that names a file of the directory REAL (ARG) the listing left out
        (vendored, minified: no candidate, so ``add_file`` never sees it) unless it is a
        pack: ``-o third_party/lib/x.py .`` would destroy a tracked source file."""
        from ctxtools.source.listing import tree_names

        out = self.output
        if not out.under(real):
            return
        rel = os.path.relpath(out.real, os.path.realpath(real)).replace(os.sep, "/")
        why = listing_skip(rel)
        if why is None or out.earlier_pack():
            return
        try:
            names = tree_names(real)
        except OSError:
            names = ()
        if rel in names:
            raise UsageError(
                f"-o {out.output} is a {why} file of the packed directory {quote_name(arg)}, "
                "which ctx-pack did not write; nothing was written",
                hint="write the pack to another file",
            )

    def add_handle(self, ref: str, named: bool, why: str) -> None:
        if ref not in self.handles:
            self.handles[ref] = FileEntry(ref, None, named, why)

    def add_changed(self, rev: str) -> None:
        changed = changed_files(self.root, rev)
        if not changed:
            self.ledger.note(f"--changed {rev}: nothing changed (no diff, no untracked file)")
        for rel, diff, deleted in changed:
            path = os.path.join(self.root_real, rel)
            if deleted:
                entry = self.entries.get(rel) or FileEntry(rel, None, True, "changed")
                entry.diff, entry.deleted, entry.named = diff, True, True
                self.entries[rel] = entry
                continue
            try:
                real = os.path.realpath(path, strict=True)
            except OSError:
                continue
            if not _inside(real, self.root_real) or not os.path.isfile(real):
                continue
            if diff is None and self.output.names(real, real=True):
                if not self.output.earlier_pack():
                    raise self.output.error(f"changed {rel}, which ctx-pack did not write")
                continue  # an untracked -o target (an earlier pack): no input, left out
            self.add_file(real, True, "changed")  # a tracked one is refused there
            entry = self.entries.get(_rel(real, self.root_real))
            if entry is None:
                continue
            entry.why = "changed"
            entry.diff = diff


def _git(root: str, *args: str) -> subprocess.CompletedProcess:
    """Run git in ROOT. Every path it is given means itself (``--literal-pathspecs``): a
    file named ``.en[v]`` or ``[ab].py`` is that file, not a pattern over others."""
    try:
        return subprocess.run(
            ["git", "--literal-pathspecs", *args],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
            check=False,
        )
    except OSError as exc:
        raise CtxError(f"--changed needs git: {exc.strerror or exc}") from None


def _why_no_rev(root: str) -> str | None:
    """What may explain a revision missing from ROOT's repository: no commit yet, or a
    shallow clone (a CI checkout's usual depth of 1 holds neither HEAD~1 nor origin/main)."""
    if _git(root, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
        return "the repository has no commit yet"
    shallow = _git(root, "rev-parse", "--is-shallow-repository")
    if shallow.returncode == 0 and shallow.stdout.strip() == b"true":
        return (
            "this clone is shallow and may not hold it: git fetch --deepen=50 or git fetch "
            "origin main, or clone with history, e.g. actions/checkout's fetch-depth: 0"
        )
    return None


def changed_files(root: str, rev: str) -> list[tuple[str, str | None, bool]]:
    """(relative path, diff hunks or None, deleted) for every file under ROOT that differs
    from REV in the work tree, and every untracked file git does not ignore; sorted."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise InputError(f"--changed: {root} is not in a git work tree")
    if rev.startswith("-"):
        raise UsageError(f"--changed {rev!r}: not a revision")
    if ".." in rev:  # git's range syntax: "no such revision" said nothing useful of it
        base, dots, _tip = rev.partition("...") if "..." in rev else rev.partition("..")
        base = base or "HEAD"
        hint = (f"--changed $(git merge-base {base} {_tip or 'HEAD'})" if dots == "..."
                else f"--changed {base}")
        raise UsageError(
            f"--changed {rev}: one revision, not a range: the files that differ between it "
            "and the work tree",
            hint=f"e.g. {hint}",
        )
    check = _git(root, "rev-parse", "--verify", "--quiet", rev + "^{commit}")
    if check.returncode != 0:
        raise InputError(f"--changed {rev}: no such revision in {root}", hint=_why_no_rev(root))
    names = _git(root, "diff", "--relative", "--name-status", "-z", "--no-renames", rev, "--", ".")
    if names.returncode != 0:
        msg = names.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"--changed {rev}: git diff failed ({msg[-1] if msg else 'no message'})")
    fields = names.stdout.split(b"\0")
    out: dict[str, tuple[str | None, bool]] = {}
    for k in range(0, len(fields) - 1, 2):
        status, raw = fields[k].decode("ascii", "replace"), fields[k + 1]
        rel = os.fsdecode(raw)
        out[rel] = (None, status.startswith("D"))
    untracked = _git(root, "ls-files", "-o", "--exclude-standard", "-z")
    for raw in untracked.stdout.split(b"\0"):
        if raw:
            out.setdefault(os.fsdecode(raw), (None, False))
    result = []
    for rel in sorted(out):
        _, deleted = out[rel]
        diff = _git(root, "diff", "--relative", "--no-color", "--no-ext-diff", rev, "--", rel)
        text = diff.stdout.decode("utf-8", "surrogateescape") if diff.returncode == 0 else ""
        # Keep the hunks: the "diff --git" and index lines say nothing a reader needs.
        keep = []
        for line in text.splitlines():
            if line.startswith(("diff --git ", "index ")):
                continue
            keep.append(line)
        result.append((rel, "\n".join(keep) if keep else None, deleted))
    return result


# --- loading the files ---------------------------------------------------------------------


def redact_text(text: str, where: str, req: PackRequest, ledger: Ledger) -> str:
    """TEXT with its secrets redacted (unless --allow-secrets), each one in LEDGER."""
    if req.allow_secrets:
        return text
    from ctxtools.secrets import redact

    out, findings = redact(text)
    for f in findings:
        ledger.redacted(where, f.line, f.kind)
    return out


def redact_bytes(data: bytes, where: str, req: PackRequest, ledger: Ledger) -> bytes:
    if req.allow_secrets:
        return data
    text = data.decode("utf-8", "surrogateescape")
    out = redact_text(text, where, req, ledger)
    return data if out == text else out.encode("utf-8", "surrogateescape")


def _may_be_read(e: FileEntry, req: PackRequest) -> bool:
    """Whether the pack may read the file of E: not when its name alone leaves it out (a
    translation catalogue, a lock file: ``noise_by_name``), it is not named, and no
    --include can bring such a file back. A file never read shows nothing, so its first
    bytes need no sniffing for a dotenv (Django's 2,533 catalogues were three in four of
    the files sniffed)."""
    return e.named or bool(req.include) or noise_by_name(e.label) is None


def _skipped(ledger: Ledger, label: str, why: str, reason: str) -> None:
    """A file left out of the pack: its note (WHY) and its dropped row (REASON)."""
    shown = quote_name(label)
    ledger.info(f"skipped {shown}: {why}")
    ledger.drop(shown, reason)


def load_entries(
    gather: Gatherer, req: PackRequest, ledger: Ledger, excluded=None
) -> list[FileEntry]:
    """Check every planned file and read every handle: secrets by name and oversized files
    are left out (said in LEDGER: a named secret file and the first ``SECRETS_SAID`` found
    in directories one by one, the rest in one line by kind; every one a drop row); secrets
    in handles and diffs are redacted. A file a directory or glob turned up that the user's
    filter EXCLUDED (``PathFilter.excluded``) is passed on unchecked and unread: the Chooser
    counts it among the excluded, and nothing else is said of it.
    A file is a secret by its name when its label or its real target is (a symbolic link
    ``settings.txt -> .env`` is the dotenv it points to)."""
    from ctxtools.secrets import secret_filename, secret_path
    from ctxtools.secrets.names import secret_content, secret_note

    out: list[FileEntry] = []
    said, more = 0, {}  # secret files found in a directory: said one by one; the rest, by kind
    for label in sorted(gather.entries):
        e = gather.entries[label]
        if excluded is not None and not e.named and not e.diff and excluded(label):
            out.append(e)  # (left out by the Chooser, by name: never read)
            continue
        kind = secret_filename(label) if e.target_judged else secret_path(label, e.path)
        if kind is None and e.target_judged and not e.deleted and _may_be_read(e, req):
            kind = secret_content(e.path, label)  # a renamed or hard-linked .env
        if kind is not None and not req.allow_secrets:
            shown = quote_name(label)
            by, what = secret_note(kind)
            ledger.drop(shown, f"secret by {by} ({what})")
            if e.named or said < SECRETS_SAID:
                ledger.info(f"skipped {shown}: a secret by its {by} ({what}; --allow-secrets)")
                said += not e.named
            else:
                more[by, what] = more.get((by, what), 0) + 1
            continue
        if e.diff:
            e.diff = redact_text(e.diff, quote_name(label) + " (diff)", req, ledger)
        if e.deleted:
            out.append(e)
            continue
        try:
            size = e.stat[0] if e.stat is not None else os.path.getsize(e.path)
        except OSError as exc:
            check_resource(exc, e.path)
            _skipped(ledger, label, str(exc.strerror or exc), "unreadable")
            continue
        if size > MAX_FILE_BYTES:
            _skipped(ledger, label, f"{size:,} bytes, over {MAX_FILE_BYTES >> 20} MB", "too large")
            continue
        # The bytes are read by the Chooser (which skips binary files and noise) and
        # searched for secrets when the file is shown (pack.choose).
        out.append(e)
    if more:  # a tree of many (test certificates, a .env per service): one line, not one each
        said_as = {k: k[1] if k[0] == "name" else f"{k[1]} by its {k[0]}" for k in more}
        kinds = ", ".join(f"{said_as[k]} {n:,}" for k, n in
                          sorted(more.items(), key=lambda kn: said_as[kn[0]]))
        by = "names" if all(b == "name" for b, _what in more) else "names or contents"
        ledger.info(
            f"skipped {sum(more.values()):,} more file(s): secrets by their {by} ({kinds}; "
            "--allow-secrets; --format json lists each under dropped)"
        )
    if gather.handles:
        from ctxtools.resolve import HandleReader

        handles = HandleReader(req.store, req.session)
        for ref in sorted(gather.handles):
            e = gather.handles[ref]
            try:
                data = handles.read_bytes(ref)
            except CtxError as exc:
                if not req.keep_going:
                    raise
                ledger.warn(f"skipped {ref}: {exc}")
                ledger.drop(ref, "cannot be read")
                continue
            if is_binary(data):
                ledger.info(f"skipped {ref}: binary content")
                ledger.drop(ref, "binary")
                continue
            e.data = redact_bytes(data, ref, req, ledger)
            out.append(e)
    return out
