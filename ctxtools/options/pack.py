"""ctx-pack's options: the click options (``cli.pack``), ``PackRequest``'s fields
(``pack.request``) and the ``pack`` MCP tool (``mcp.schema``, ``mcp.code``) are made from
this table. An option is added here, once.

A repository's URL as a FILE is the command line's too (``mcp.code.pack`` refuses one):
the server reads only under its roots, and a fetch would run the user's git, with their
credentials, on an agent's word.
"""

from __future__ import annotations

from ctxtools import defaults
from ctxtools.options import (
    BOOLEAN,
    COPY,
    EXPLAIN,
    FILES_FROM,
    INTEGER,
    JOBS,
    JSON,
    MEMORY,
    MODEL,
    OUTPUT,
    PATHS,
    PROFILES,
    RULER_OPTS,
    SECRETS,
    STANDARD_OPTS,
    STORE,
    STRING,
    STRINGS,
    TOKENS,
    Opt,
    arg,
)

SKILLS = "skills are the user's set-up, not a call's"

PACK: tuple[Opt, ...] = (
    Opt("files", decl="input_files", mcp=PATHS),
    Opt("files_from", decl="input_files", cli_only=FILES_FROM),
    Opt("null", decl="input_files", cli_only=FILES_FROM),
    Opt(
        "task",
        ("-q", "--task"),
        "What the model is to do (last, verbatim); '-' reads it from stdin.",
        click={"default": None},
        mcp=arg(STRING, "What the model is to do (last, verbatim)."),
    ),
    Opt(
        "model",
        help="Model profile [env CTX_MODEL; neither --model nor --limit: the default profile, "
        "16,384 tokens, as for ctx-compact and ctx-count --budget].",
        decl="model_option",
        field="model",
        mcp=MODEL,
    ),
    Opt(
        "role",
        decl="role_options",
        field="role",
        mcp=arg(STRING, "Role whose share of the budget applies [default: worker]."),
    ),
    Opt(
        "role_shares",
        decl="role_options",
        cli_only="role shares are the user's set-up (the profiles file's [roles]); a call "
        "names a role or a budget",
    ),
    Opt(
        "tokens",
        help="The whole budget in tokens, instead of the model's and the role's.",
        decl="tokens_option",
        field="tokens",
        mcp=arg(INTEGER, "The whole budget, instead of the model's and role's.", **TOKENS),
    ),
    Opt(
        "limit",
        decl="limit_option",
        field="context_limit",
        cli_only="tokens gives a call's budget; the window is the model's",
    ),
    Opt(
        "root",
        ("--root",),
        "The repository: instructions, the map, @-mentions and --changed are read here.",
        type=("named_path", {"file_okay": False}),
        click={"default": ".", "show_default": True},
        field="root",
        cli_only="the root is the server's root that holds the first path",
    ),
    Opt(
        "changed",
        ("--changed",),
        "Add the files changed against REV (HEAD when no REV), untracked included, "
        "each with its diff hunks.",
        type=("name",),
        click={"is_flag": False, "flag_value": "HEAD", "default": None, "metavar": "[REV]"},
        field="changed",
        mcp=arg(STRING, "Add the files changed against this git revision (HEAD, origin/main)."),
    ),
    Opt(
        "fmt",
        ("-f", "--format"),
        "Output format (json: sections, files, tokens, drops, and the Markdown text).",
        type=("choice", ("markdown", "xml", "json")),
        click={"default": "markdown", "show_default": True},
        mcp=arg(STRING, "Output format.", "format", enum=["markdown", "xml", "json"]),
    ),
    Opt("as_json", help="Same as --format json.", decl="json_option", cli_only=JSON),
    Opt(
        "output",
        ("-o", "--output"),
        "Write the pack to FILE instead of stdout, replaced atomically; a FILE the pack "
        "reads is refused (the manual has the rules for FIFOs, devices and links).",
        # (a directory is refused when it is written, exit 1, as every command's -o is)
        type=("path", {"allow_dash": True}),
        click={"default": None, "metavar": "FILE"},
        field="output",
        cli_only=OUTPUT,
    ),
    Opt(
        "copy",
        help="Also copy the pack to the clipboard (wl-copy, xclip, xsel, pbcopy or clip.exe, "
        "found on PATH); it still goes to stdout, or to -o FILE. Not with --split.",
        decl="copy_flag",
        cli_only=COPY,
    ),
    Opt(
        "split",
        ("--split",),
        "Write the pack as parts of at most TOKENS tokens, cut at file and definition "
        "boundaries; with -o FILE: FILE.1.md, FILE.2.md ... (FILE less .md).",
        type=("whole", defaults.SPLIT_MIN, defaults.MAX_TOKENS),
        click={"default": None, "metavar": "TOKENS"},
        cli_only="parts are for pasting into a chat window; a long reply is paged through "
        "read calls already",
    ),
    Opt(
        "explain",
        ("--explain",),
        "Show the budget, tokens per section and file, and what was dropped, on stderr.",
        click={"is_flag": True},
        cli_only=EXPLAIN,
    ),
    Opt(
        "include_readme",
        ("--include-readme",),
        "README.md joins the instructions.",
        click={"is_flag": True},
        field="include_readme",
        mcp=arg(BOOLEAN, "README.md joins the instructions.", default=False),
    ),
    Opt(
        "skills_dir",
        ("--skills",),
        "A directory of skills (each */SKILL.md, with name and description).",
        type=("named_path", {"file_okay": False}),
        click={"default": None},
        field="skills_dir",
        cli_only=SKILLS,
    ),
    Opt(
        "pin_skills",
        ("--pin-skill",),
        "Include this skill's full body (repeatable).",
        type=("name",),
        click={"multiple": True, "metavar": "NAME"},
        field="pin_skills",
        cli_only=SKILLS,
    ),
    Opt(
        "skill_max_expanded",
        ("--skill-max-expanded",),
        "Skills whose full body may go in.",
        type=("whole", 0, defaults.MAX_COUNT),
        click={"default": defaults.SKILL_MAX_EXPANDED, "show_default": True},
        field="skill_max_expanded",
        cli_only=SKILLS,
    ),
    Opt(
        "skill_disclosure",
        ("--skill-disclosure",),
        "auto: bodies when earned; cards: one-line cards only; full: bodies of the matches.",
        type=("choice", ("auto", "cards", "full")),
        click={"default": "auto", "show_default": True},
        field="skill_disclosure",
        cli_only=SKILLS,
    ),
    Opt(
        "memory",
        help="Memory files or directories (.md, .txt, .rst): their sections that match the "
        "task go in (repeatable).",
        decl="memory_option",
        field="memory",
        cli_only=MEMORY,
    ),
    Opt(
        "memory_tokens",
        ("--memory-tokens",),
        "Tokens the memory section may take [default: 15% of the budget].",
        type=("whole", 1, defaults.MAX_TOKENS),
        click={"default": None},
        field="memory_tokens",
        cli_only=MEMORY,
    ),
    Opt("retrieval", decl="retrieval_options", cli_only=MEMORY),
    Opt("embed_cmd", decl="retrieval_options", field="embed_cmd", cli_only=MEMORY),
    Opt("embed_timeout", decl="retrieval_options", field="embed_timeout", cli_only=MEMORY),
    Opt("min_score", decl="retrieval_options", field="min_score", cli_only=MEMORY),
    Opt(
        "identifiers_only",
        ("--identifiers-only",),
        "Paths and signatures instead of bodies (as for roles explorer, context, docs).",
        click={"is_flag": True},
        field="identifiers_only",
        mcp=arg(BOOLEAN, "Paths and signatures, no bodies.", default=False),
    ),
    Opt(
        "include",
        ("--include",),
        "Files of a directory that match GLOB are candidates even when the noise rules "
        "leave them out (catalogues, lock files, data, generated, vendored, minified); "
        "repeatable.",
        type=("name",),
        click={"multiple": True, "metavar": "GLOB"},
        field="include",
        mcp=arg(STRINGS, "Globs of files that are candidates even when the noise rules say no."),
    ),
    Opt(
        "exclude",
        help="Files that match GLOB are never candidates, nor on the map (also: a .ctxignore "
        "file at the root, gitignore syntax); repeatable.",
        decl="exclude_option",
        field="exclude",
        mcp=arg(STRINGS, "Globs of files that are never candidates."),
    ),
    Opt(
        "no_map",
        ("--no-map",),
        "Leave the repository map out.",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "Leave the repository map out.", default=False),
    ),
    Opt(
        "jobs",
        help="Processes; 1: the least memory [default: 2 for 500-4,000 code files, 2+ CPUs].",
        decl="jobs_option",
        field="jobs",
        cli_only=JOBS,
    ),
    Opt(
        "fill",
        ("--fill",),
        "Fill the budget past the relevance floor and the files' 36,000-token ceiling.",
        click={"is_flag": True},
        field="fill",
        mcp=arg(
            BOOLEAN,
            "Fill the budget past the relevance floor and the files' 36,000-token "
            "ceiling (by default the pack stops where what is left is worth too little).",
            default=False,
        ),
    ),
    Opt(
        "allow_drop",
        ("--allow-drop",),
        "A named file that cannot fit even as signatures is dropped, not an error.",
        click={"is_flag": True},
        field="allow_drop",
        mcp=arg(BOOLEAN, "A named file that cannot fit is dropped.", default=False),
    ),
    Opt(
        "keep_going",
        help="Pack the rest when some paths are missing.",
        decl="keep_going_option",
        field="keep_going",
        mcp=arg(BOOLEAN, "Pack the rest when some paths are missing.", default=False),
    ),
    Opt(
        "allow_secrets",
        ("--allow-secrets",),
        "Do not skip secret files or redact secrets (the pack goes to a provider!).",
        click={"is_flag": True},
        field="allow_secrets",
        cli_only=SECRETS,
    ),
    Opt(
        "profiles_file",
        help="A TOML file of extra/overriding model profiles [env CTX_PROFILES].",
        decl="profiles_file_option",
        field="profiles_file",
        cli_only=PROFILES,
    ),
    *RULER_OPTS,
    Opt("store", decl="store_options", field="store", cli_only=STORE),
    Opt("session", decl="store_options", field="session", cli_only=STORE),
    *STANDARD_OPTS,
)

# The pack tool's arguments in the order agents have seen them; a new one follows them.
MCP_ORDER = (
    "task",
    "paths",
    "tokens",
    "model",
    "role",
    "changed",
    "include",
    "exclude",
    "format",
    "identifiers_only",
    "include_readme",
    "no_map",
    "fill",
    "allow_drop",
    "keep_going",
)
