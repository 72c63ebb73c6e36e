"""The options several ctx-* commands take, each declared here once, as decorators
(``store_options``, ``model_option``, ``exclude_option``, ...), with their defaults from
``ctxtools.defaults``, the values the library uses. Where commands word an option's help
differently (what it does differs by command), the wording is a parameter. No library
logic here."""

from __future__ import annotations

from collections.abc import Callable

import click

from ctxtools import __version__, defaults
from ctxtools.cli.entry import set_debug
from ctxtools.cli.outputs import output_to

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _types():
    from ctxtools.cli import types

    return types


def complete(name: str) -> Callable:
    """A ``shell_complete`` callback that runs ``ctxtools.cli.completion.NAME`` (loaded only
    when a shell asks for completions)."""

    def call(ctx: click.Context, param: click.Parameter, incomplete: str):
        from ctxtools.cli import completion

        return getattr(completion, name)(ctx, param, incomplete)

    return call


def _apply(decorators: list[Callable]) -> Callable:
    def wrap(func: Callable) -> Callable:
        for dec in reversed(decorators):
            func = dec(func)
        return func

    return wrap


def _print_completion(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and not ctx.resilient_parsing:
        from ctxtools.cli.completion import toolkit_source

        click.echo(toolkit_source(value), nl=False)
        ctx.exit(0)


def standard_options(func: Callable) -> Callable:
    """``--version``, ``--completion SHELL`` and ``--debug``: on every command."""
    return _apply(
        [
            click.version_option(__version__, "--version", message="%(prog)s %(version)s"),
            click.option(
                "--completion",
                type=click.Choice(["bash", "zsh", "fish"]),
                expose_value=False,
                is_eager=True,
                callback=_print_completion,
                help="Print the completion script of every ctx command for the shell and "
                'exit: eval "$(ctx-count --completion bash)" in ~/.bashrc.',
            ),
            click.option(
                "--debug",
                is_flag=True,
                expose_value=False,
                is_eager=True,
                callback=set_debug,
                help="Show a traceback on errors (also CTX_DEBUG=1).",
            ),
        ]
    )(func)


def name_type():
    """The click type of an option whose value names something (a model, an encoding, a
    role, a glob, a command): an empty value is a usage error (``types.Name``)."""
    return _types().Name()


def path_type(*, empty: str = "empty", **keywords):
    """``click.Path(**KEYWORDS)`` for an option that names a file or a directory: an empty
    name is a usage error saying EMPTY (``types.NamedPath``)."""
    return _types().NamedPath(empty=empty, **keywords)


def files_from_options(func: Callable) -> Callable:
    """``--files-from FILE`` and ``-0/--null``: the inputs listed in FILE."""
    return _apply(
        [
            click.option(
                "--files-from",
                "files_from",
                # --files-from "$LIST" with LIST unset: ctx-repomap mapped the whole directory,
                # the others said ": no such file"
                type=path_type(
                    allow_dash=True,
                    dir_okay=False,
                    empty="an empty file name (name the list, or '-' for stdin)",
                ),
                default=None,
                help="Read file names from FILE, one a line ('-' for stdin).",
            ),
            click.option(
                "-0",
                "--null",
                "null",
                is_flag=True,
                help="With --files-from: names are NUL-separated (git ls-files -z).",
            ),
        ]
    )(func)


def input_files(func: Callable) -> Callable:
    """FILE… arguments (``-`` or none: stdin) plus ``--files-from FILE`` and ``-0/--null``."""
    # Not checked here: an unreadable FILE gets the same exit 1 (and --keep-going) as one
    # named by --files-from, from the command's own check, not a usage error.
    argument = click.argument(
        "files", nargs=-1, type=click.Path(dir_okay=True, allow_dash=True, readable=False)
    )
    return argument(files_from_options(func))


def role_options(func: Callable) -> Callable:
    """``--role ROLE`` and ``--role-share ROLE=PCT`` (repeatable): whose share of the pack
    budget applies, and overrides of the shares. The command gets ``role`` and
    ``role_shares`` (a tuple of pairs; ``dict()`` of it is what ``profiles.effective_role_shares``
    takes as overrides, the last one for a role winning)."""
    return _apply(
        [
            click.option(
                "--role",
                type=name_type(),
                default=None,
                shell_complete=complete("complete_role"),
                help="Role whose share of the pack budget applies [default: worker].",
            ),
            click.option(
                "--role-share",
                "role_shares",
                type=_types().RoleShare(),
                multiple=True,
                metavar="ROLE=PCT",
                help="A role's share of the budget in percent, 1-100 (repeatable; beats the "
                "profiles file's [roles]).",
            ),
        ]
    )(func)


def json_option(
    func: Callable | None = None, *, help: str = "Print one JSON document.", also: tuple = ()
):
    """``--json`` (``as_json``), ALSO its older names; ``@json_option`` or
    ``@json_option(help=…)``."""
    option = click.option("--json", *also, "as_json", is_flag=True, help=help)
    return option if func is None else option(func)


def output_option(func: Callable) -> Callable:
    """``-o/--output FILE``: what the command writes to stdout goes to FILE instead, by
    ``fsutil.write_output``'s rules (the same for every command that writes a document),
    when the command ends without an error -- or earlier, when the command calls
    ``outputs.deliver`` to have it written before it says what it wrote (ctx-compact's
    summary; its exit 4 still writes the file)."""
    import functools

    @functools.wraps(func)
    def run(*args, **kwargs):
        output = kwargs.pop("output")
        refuse_output_over_input(output, kwargs)
        with output_to(output):
            return func(*args, **kwargs)

    return click.option(
        "-o",
        "--output",
        "output",
        metavar="FILE",
        help="Write to FILE instead of stdout (a regular file is replaced atomically; a FIFO "
        "or /dev/stdout is written through; a directory or socket, one of the run's "
        "inputs or a file in the store is refused).",
    )(run)


def refuse_output_over_input(output: str | None, kw: dict) -> None:
    """A usage error, before anything is read or written, when -o OUTPUT is one of the
    run's inputs, KW being the command's arguments (``overwrite.input_named`` decides):
    ctx-excerpt's FILEs and --files-from, ctx-compact's transcript, ctx-read's and the
    others' standard input, ctx-repomap's directory; or when it is in the store, the
    command's --store (CTX_STORE, else the default root), by any name
    (``overwrite.store_file_named``). (ctx-pack's guard is the library's
    ``pack.inputs.OutputGuard``: it also knows the files a pack finds.)"""
    if output is None or output == "-":
        return
    from ctxtools.config import store_root
    from ctxtools.errors import UsageError
    from ctxtools.overwrite import empty_output, input_named, store_file_named

    empty_output(output)  # (-o '': an empty name)

    files = [f for f in (*(kw.get("files") or ()), kw.get("file")) if f not in (None, "-")]
    listed = kw.get("files_from")
    reads_stdin = (
        ("files" in kw and (not kw["files"] or "-" in kw["files"]) and not listed)
        or listed == "-"
        or ("ref" in kw and kw["ref"] in (None, "-"))
        or ("file" in kw and kw["file"] in (None, "-"))
    )
    found = input_named(
        output, files=files, files_from=listed, null=bool(kw.get("null")),
        reads_stdin=reads_stdin, tree=kw.get("directory"),
    )
    if found is not None:
        raise UsageError(
            f"-o {output} is an input of this run ({found}); nothing was written",
            hint="write to another file",
        )
    stored = store_file_named(output, store_root(kw.get("store")))
    if stored is not None:
        raise UsageError(
            f"-o {output} is {stored}; nothing was written",
            hint="write to a file outside the store",
        )


_EMPTY_STORE = "empty: give the store's directory"


def _store_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --store of blanks is a usage error, as an empty one is (its type's): it would make a
    store in the current directory. (A leading ``~`` is the home directory:
    ``config.store_root``, which every user of the value goes through.)"""
    if value is not None and not value.strip():
        raise click.BadParameter(_EMPTY_STORE, ctx, param)
    return value


def _store_dir(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """ctx-repomap's --store, whose cache every run opens: a file, or a path under one, is
    the store's own error (``StoreRoot.check_root``: the line ctx-stash gives, exit 1), not
    click's, which named --store when the value came from CTX_STORE. An empty or blank
    value is a usage error, as for every command (an empty CTX_STORE is unset: the default
    root)."""

    value = _store_path(ctx, param, value)
    if value and not ctx.resilient_parsing:
        from ctxtools.config import store_root

        root = store_root(value)
        if not root.is_dir():
            from ctxtools.store.root import StoreRoot

            StoreRoot(root).check_root()  # nothing there yet is fine: the first write makes it
    return value


def _complete_dir(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """A shell completes a directory there (click's type no longer says it: it would refuse a
    file in click's words)."""
    return click.Path(file_okay=False).shell_complete(ctx, param, incomplete)


def store_option(
    help: str = "Store root [env CTX_STORE; default ${XDG_CACHE_HOME:-~/.cache}/ctxtools].",
    *,
    cache_only: bool = False,
) -> Callable:
    """``--store DIR`` ($CTX_STORE). An empty or blank value is a usage error; an empty
    CTX_STORE is unset: the default root (``config.default_store_root``, which ignores a
    relative XDG_CACHE_HOME: docs/DESIGN.md says so, ctx-pack's --help has no line to spare).
    CACHE_ONLY (ctx-repomap, which keeps only its cache there): a root that is a file is the
    store's error before the run."""
    if cache_only:
        return click.option(
            "--store",
            "store",
            envvar="CTX_STORE",
            type=path_type(empty=_EMPTY_STORE),
            metavar="DIRECTORY",
            default=None,
            callback=_store_dir,
            shell_complete=_complete_dir,
            help=help,
        )
    return click.option(
        "--store",
        "store",
        envvar="CTX_STORE",
        type=path_type(empty=_EMPTY_STORE),  # the store itself says what else is wrong
        default=None,
        callback=_store_path,
        help=help,
    )


def store_options(func: Callable) -> Callable:
    """``--store DIR`` ($CTX_STORE) and ``--session NAME`` ($CTX_SESSION)."""
    return _apply(
        [
            store_option(),
            click.option(
                "--session",
                "session",
                envvar="CTX_SESSION",
                type=name_type(),
                default=defaults.SESSION,
                show_default=True,
                help="Session the handles belong to [env CTX_SESSION].",
            ),
        ]
    )(func)


def ruler_options(func: Callable) -> Callable:
    """The ruler: ``--encoding``, ``--tokenizer``, ``--heuristic``, ``--exact``
    (``ruler_from_options`` makes the ruler from them). What is wrong with them and can be
    known without loading a tokenizer is an error before the command runs, whether or not
    this run counts (ctx-excerpt and ctx-read count only with --tokens or --count)."""
    import functools

    @functools.wraps(func)
    def run(*args, **kwargs):
        check_ruler_options(kwargs)
        return func(*args, **kwargs)

    return _apply(
        [
            click.option(
                "--encoding",
                envvar="CTX_ENCODING",
                type=name_type(),
                default=None,
                shell_complete=complete("complete_encoding"),
                help="tiktoken encoding: cl100k_base (default) or o200k_base [env CTX_ENCODING].",
            ),
            click.option(
                "--tokenizer",
                type=path_type(),
                default=None,
                help="Count with a Hugging Face tokenizer.json (exact for that model).",
            ),
            click.option(
                "--heuristic",
                is_flag=True,
                help="1 token per CJK code point, 1 per 4 other characters; needs nothing.",
            ),
            click.option(
                "--exact",
                is_flag=True,
                help="Fail (exit 1) instead of falling back to the heuristic.",
            ),
        ]
    )(run)


def check_ruler_options(kw: dict) -> None:
    """``tokens.choice.check_choice`` on the ruler options in KW (nothing imported when none
    is given)."""
    picked = {k: kw.get(k) for k in ("encoding", "tokenizer", "heuristic", "exact")}
    if any(picked.values()):
        from ctxtools.tokens.choice import check_choice

        check_choice(**picked)


def int_option(
    name: str, default: int, help: str | None = None, *, max: int = defaults.MAX_COUNT
) -> Callable:
    """``NAME N``: a whole number from 0 to MAX (``types.Whole``) whose default --help
    shows."""
    return click.option(
        name, type=_types().Whole(0, max), default=default, show_default=True, help=help
    )


def whole(min: int = 0, max: int = defaults.MAX_COUNT):
    """The click type of a whole number from MIN to MAX (``types.Whole``): every integer
    option has both bounds, so that no value overflows further down."""
    return _types().Whole(min, max)


def model_option(help: str = "Model profile [env CTX_MODEL].") -> Callable:
    """``--model NAME`` ($CTX_MODEL)."""
    return click.option(
        "--model",
        envvar="CTX_MODEL",
        type=name_type(),
        default=None,
        help=help,
        shell_complete=complete("complete_model"),
    )


def limit_option(help: str = "Context window in tokens (instead of the model's).") -> Callable:
    """``--limit N``: the context window, instead of the model's."""
    return click.option(
        "--limit", "limit", type=whole(1, defaults.MAX_TOKENS), default=None, help=help
    )


def tokens_option(help: str, *, cls: type[click.Option] = click.Option) -> Callable:
    """``-t/--tokens N``: a budget in tokens of the ruler (``-t`` means this in every
    command: docs/options.md)."""
    return click.option(
        "-t", "--tokens", type=whole(1, defaults.MAX_TOKENS), default=None, help=help, cls=cls
    )


def profiles_file_option(help: str) -> Callable:
    """``--profiles-file FILE`` ($CTX_PROFILES): extra or overriding model profiles."""
    return click.option(
        "--profiles-file",
        envvar="CTX_PROFILES",
        type=path_type(dir_okay=False),
        default=None,
        help=help,
    )


def query_option(help: str) -> Callable:
    """``-q/--query TEXT``: what to rank or match toward (``-q`` is what a run is about in
    every command: docs/options.md)."""
    return click.option("-q", "--query", default=None, help=help)


def ignore_case_option(help: str) -> Callable:
    """``-i/--ignore-case``."""
    return click.option("-i", "--ignore-case", is_flag=True, help=help)


def explain_option(help: str) -> Callable:
    """``--explain``: what the run chose, its score and why, what it left out and why, on
    stderr (``ctxtools.explanation``: the same shape in every command that chooses)."""
    return click.option("--explain", is_flag=True, help=help)


def exclude_option(help: str) -> Callable:
    """``--exclude GLOB``, repeatable: files no listing shows (``ctxtools.pathfilter``)."""
    return click.option("--exclude", type=name_type(), multiple=True, metavar="GLOB", help=help)


def keep_going_option(help: str) -> Callable:
    """``--keep-going``: go on with the inputs that can be read."""
    return click.option("--keep-going", is_flag=True, help=help)


def jobs_option(help: str) -> Callable:
    """``--jobs N`` (None: the command decides)."""
    return click.option("--jobs", type=whole(1, defaults.MAX_JOBS), default=None, help=help)


def max_bytes_option(help: str, *, metavar: str | None = None) -> Callable:
    """``--max-bytes SIZE`` of an eviction budget (parsed by ``fsutil.parse_size``)."""
    return click.option(
        "--max-bytes", type=_types().Size(), default=None, metavar=metavar, help=help
    )


def max_entries_option(help: str) -> Callable:
    """``--max-entries N`` of an eviction budget."""
    return click.option("--max-entries", type=whole(0), default=None, help=help)


def strategy_option(help: str) -> Callable:
    """``--strategy lru|importance``: the eviction strategy (``ctxtools.evict``)."""
    return click.option(
        "--strategy",
        type=click.Choice(list(defaults.EVICT_STRATEGIES)),
        default=defaults.EVICT_STRATEGY,
        show_default=True,
        help=help,
    )
