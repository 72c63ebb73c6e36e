"""Model profiles and the pack budget.

A profile says how big a model's window is, how much it may write (``max_output``), how
many agent turns it gets (``max_turns``, where known) and which tiktoken encoding measures
it. Profiles are data (``ctxtools/data/profiles.toml``), extended or overridden by a user
TOML file of the same shape (``--profiles-file FILE`` or ``$CTX_PROFILES``), which may also
hold a ``[roles]`` table of role shares (``reviewer = 90``).

Resolution of a model name: exact name -> the longest profile name the model name holds as
whole words (``o3-pro`` is ``o3``, ``qwen3-coder:30b`` is ``qwen3-coder``,
``anthropic/claude-sonnet-4-5-20250929`` is ``claude-sonnet-4-5``) -> the longest family
substring -> a size bucket (``1.5b``, ``3b``, ``7b``, ``14b``, ``32b``) -> the default.
``describe_match`` says in words which rule matched.

Role shares: ``ROLE_SHARES`` (DESIGN.md), overridden by the user file's ``[roles]`` and then
by ``--role-share ROLE=PCT``; ``pack_budget(limit, role, role_shares=...)`` takes them.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ctxtools.defaults import (  # token reserves of DESIGN.md ("Pack budget")
    RESERVE_RESPONSE,
    RESERVE_SYSTEM,
    RESERVE_TOOLS,
    SLACK_PERCENT,
)
from ctxtools.errors import CtxError, InputError, NotFoundError, UsageError

FLOOR = 512
WARN_PERCENT = 80
COMPACT_PERCENT = 90

ROLE_SHARES: dict[str, int] = {
    "worker": 100,
    "corrector": 100,
    "deep": 100,
    "reviewer": 85,
    "tester": 85,
    "architect": 70,
    "planner": 70,
    "splitter": 70,
    "explorer": 60,
    "context": 60,
    "docs": 60,
    "coordinator": 50,
    "memory": 50,
    "placeholder": 100,
}
DEFAULT_ROLE_SHARE = 75
# Roles kept for the orchestrators that send them but not offered to users (completion,
# the documented list): "placeholder" is a slot an orchestrator fills later, at 100%.
UNLISTED_ROLES = frozenset({"placeholder"})

_ROLE_RE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_SIZE_RE = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")


@dataclass(frozen=True)
class Profile:
    name: str  # the model name asked for
    context_limit: int
    max_output: int
    encoding: str
    approximate: bool  # counts with this encoding are estimates for this model
    matched_by: str  # "exact", "name", "family", "size", "default"
    matched: str  # the key that matched (model, family substring, size bucket, "default")
    max_turns: int | None = None  # agent turns the profile allows, where the data says

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class ProfileTable:
    models: dict[str, dict]
    families: dict[str, dict]
    sizes: dict[str, dict]  # bucket -> entry (context_limit, max_output, max_turns)
    default: dict
    sources: list[str]
    roles: dict[str, int] = field(default_factory=dict)  # role shares from [roles] tables


def _check_entry(where: str, entry: object) -> dict:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a table")
    from ctxtools.defaults import MAX_TOKENS

    out = dict(entry)
    for key in ("context_limit", "max_output", "max_turns"):
        value = out.get(key)
        if key in out and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TOKENS
        ):
            raise InputError(f"{where}: {key} must be a whole number from 1 to {MAX_TOKENS:,}")
    if "encoding" in out and not isinstance(out["encoding"], str):
        raise InputError(f"{where}: encoding must be a string")
    if "local_tokenizer" in out and not isinstance(out["local_tokenizer"], str):
        raise InputError(f"{where}: local_tokenizer must be a string")
    return out


def _merge(table: ProfileTable, data: dict, source: str) -> None:
    for section in ("models", "families"):
        block = data.get(section, {})
        if not isinstance(block, dict):
            raise InputError(f"{source}: [{section}] must be a table")
        target = getattr(table, section)
        for name, entry in block.items():
            where = f"{source}: {section}.{name}"
            merged = dict(target.get(name.lower(), {}))
            merged.update(_check_entry(where, entry))
            if "context_limit" not in merged:  # a new name: it has no window to inherit
                raise InputError(f"{where}: needs context_limit", hint="e.g. context_limit = 32768")
            target[name.lower()] = merged
    sizes = data.get("sizes", {})
    if not isinstance(sizes, dict):
        raise InputError(f"{source}: [sizes] must be a table")
    for bucket, entry in sizes.items():
        where = f"{source}: sizes.{bucket}"
        if isinstance(entry, int) and not isinstance(entry, bool):  # "7b" = 8192: the window
            if entry <= 0:
                raise InputError(f"{where} must be a positive integer")
            entry = {"context_limit": entry}
        merged = dict(table.sizes.get(bucket.lower(), {}))
        merged.update(_check_entry(where, entry))
        if "context_limit" not in merged:
            raise InputError(f"{where}: needs context_limit")
        table.sizes[bucket.lower()] = merged
    if "default" in data:
        table.default.update(_check_entry(f"{source}: default", data["default"]))
    roles = data.get("roles", {})
    if not isinstance(roles, dict):
        raise InputError(f"{source}: [roles] must be a table")
    for role, share in roles.items():
        key = role.strip().lower()
        if not _ROLE_RE.fullmatch(key):
            raise InputError(f"{source}: roles.{role}: not a role name", hint="e.g. reviewer = 90")
        if isinstance(share, bool) or not isinstance(share, int) or not 1 <= share <= 100:
            raise InputError(
                f"{source}: roles.{role} must be a whole percent from 1 to 100",
                hint="e.g. reviewer = 90",
            )
        table.roles[key] = share
    table.sources.append(source)


def load_profiles(user_file: str | os.PathLike | None = None) -> ProfileTable:
    """The shipped profiles, extended by USER_FILE (or ``$CTX_PROFILES``) when given."""
    table = ProfileTable({}, {}, {}, {}, [], {})
    # (the package's own file, read by its path: importlib.resources costs a pack 6 ms)
    shipped = (Path(__file__).resolve().parent / "data" / "profiles.toml").read_bytes()
    _merge(table, tomllib.loads(shipped.decode("utf-8")), "built-in")
    path = user_file or os.environ.get("CTX_PROFILES") or None
    if path:
        p = Path(path)
        raw = _read_profiles_file(p, str(path))
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: not a valid TOML profiles file: {exc}") from None
        _merge(table, data, str(p))
    return table


MAX_PROFILES_BYTES = 1 << 20  # a profiles file is a few KB; more is not one


def _read_profiles_file(p: Path, shown: str) -> bytes:
    """The bytes of the profiles file P (SHOWN in messages): a regular file, or a pipe
    (``--profiles-file <(...)``) or /dev/null; at most MAX_PROFILES_BYTES of it."""
    from ctxtools.fsutil import read_at_most

    try:
        with open(p, "rb") as fh:
            raw = read_at_most(fh, MAX_PROFILES_BYTES + 1)
    except FileNotFoundError:
        raise NotFoundError(f"profiles file not found: {shown}") from None
    except IsADirectoryError:
        raise InputError(f"profiles file is a directory: {shown}") from None
    except OSError as exc:
        raise InputError(f"profiles file cannot be read: {shown} ({exc.strerror})") from None
    if len(raw) > MAX_PROFILES_BYTES:
        raise InputError(
            f"{shown}: over {MAX_PROFILES_BYTES // (1 << 20)} MB, not a profiles file"
        )
    return raw


def _profile(name: str, entry: dict, base: dict, matched_by: str, matched: str) -> Profile:
    full = dict(base)
    full.update(entry)
    turns = full.get("max_turns")
    encoding = str(full.get("encoding", "cl100k_base"))
    approximate = bool(full.get("approximate", False))
    local = full.get("local_tokenizer")
    if local:  # the model's own tokenizer, when the package that ships it is installed
        from ctxtools.tokens.local import available

        if available(local):
            encoding, approximate = local, False
    return Profile(
        name=name,
        context_limit=int(full["context_limit"]),
        max_output=int(full.get("max_output", 4096)),
        encoding=encoding,
        approximate=approximate,
        matched_by=matched_by,
        matched=matched,
        max_turns=int(turns) if turns is not None else None,
    )


def _holds_name(key: str, name: str) -> bool:
    """Whether KEY holds the profile NAME as whole words: NAME starts KEY or follows a
    character that is not a letter or digit (``openai/``, ``ft:``, ``anthropic.``), and
    ends KEY or is followed by one that is neither a letter, a digit nor a dot (``-pro``,
    ``:30b``, ``-20250929``): ``gpt-4`` is not in ``gpt-4.5`` nor ``o3`` in ``o3x``."""
    start = key.find(name)
    while start >= 0:
        end = start + len(name)
        before = key[start - 1] if start else ""
        after = key[end] if end < len(key) else ""
        if not before.isalnum() and not (after.isalnum() or after == "."):
            return True
        start = key.find(name, start + 1)
    return False


def describe_match(profile: Profile) -> str:
    """Which rule gave PROFILE, in words: for ``--budget`` and ``--explain``."""
    how = profile.matched_by
    if how == "exact":
        return f"the profile {profile.matched}"
    if how == "name":
        return f"the profile {profile.matched} (the longest profile name in the model name)"
    if how == "family":
        return f"the family {profile.matched} (no profile name in the model name)"
    if how == "size":
        return f"the size bucket {profile.matched} (no profile or family name matched)"
    return "the default profile (no profile, family or size matched)"


def resolve(model: str, table: ProfileTable | None = None) -> Profile:
    """The profile of MODEL: exact -> the longest profile name in it as whole words ->
    the longest family substring -> size bucket -> default."""
    if not model or not model.strip():
        raise UsageError("empty model name")
    table = table or load_profiles()
    key = model.strip().lower()
    base = {"approximate": False, "max_output": 4096, "encoding": "cl100k_base"}
    if key in table.models:
        return _profile(model, table.models[key], base, "exact", key)
    names = sorted((m for m in table.models if _holds_name(key, m)), key=lambda m: (-len(m), m))
    if names:
        return _profile(model, table.models[names[0]], base, "name", names[0])
    # The longest family name that occurs in the model name wins; ties by name.
    families = sorted((f for f in table.families if f in key), key=lambda f: (-len(f), f))
    if families:
        fam = families[0]
        return _profile(model, table.families[fam], base, "family", fam)
    for match in _SIZE_RE.finditer(key):
        bucket = match.group(1) + "b"
        if bucket in table.sizes:
            return _profile(model, table.sizes[bucket], table.default, "size", bucket)
    return _profile(model, {}, table.default, "default", "default")


def unknown_model_note(
    model: str, profile: Profile, table: ProfileTable | None = None
) -> str | None:
    """The note for MODEL when no profile of its own gave PROFILE (``matched_by`` size or
    default), with the closest profile names of TABLE: a typo (``gpt4o``) would otherwise
    get the default window in silence. None when a profile, its name or a family matched."""
    if profile.matched_by not in ("default", "size"):
        return None
    import difflib

    names = sorted((table or load_profiles()).models)
    near = difflib.get_close_matches(model.strip().lower(), names, n=2, cutoff=0.75)
    hint = f" (closest: {', '.join(near)})" if near else ""
    return (
        f"note: no profile for {model!r}{hint}; using the {profile.matched} profile "
        f"({profile.context_limit:,} tokens)"
    )


def list_profiles(table: ProfileTable | None = None) -> list[dict]:
    """Every named model and family, the size buckets and the default, for
    ``ctx-count --profiles`` (sorted, deterministic)."""
    table = table or load_profiles()
    base = {"approximate": False, "max_output": 4096, "encoding": "cl100k_base"}
    blocks: list[tuple[str, str, dict, dict]] = []
    for kind, block in (("model", table.models), ("family", table.families)):
        blocks.extend((kind, name, block[name], base) for name in sorted(block))
    for bucket in sorted(table.sizes, key=_bucket_order):
        blocks.append(("size", bucket, table.sizes[bucket], table.default))
    blocks.append(("default", "default", {}, table.default))
    rows = []
    for kind, name, entry, under in blocks:
        p = _profile(name, entry, under, kind, name)
        rows.append(
            {
                "name": name,
                "kind": kind,
                "context_limit": p.context_limit,
                "max_output": p.max_output,
                "max_turns": p.max_turns,
                "encoding": p.encoding,
                "approximate": p.approximate,
            }
        )
    return rows


def _bucket_order(bucket: str) -> tuple[float, str]:
    try:
        return float(bucket[:-1]), bucket
    except ValueError:  # a user's bucket that is not a number of billions
        return math.inf, bucket


def parse_role_share(text: str) -> tuple[str, int]:
    """``ROLE=PCT`` (``reviewer=90``, ``reviewer=90%``) as ``("reviewer", 90)``.

    PCT is a whole percent from 1 to 100: a role never gets more than the whole budget."""
    role, sep, pct = text.partition("=")
    role = role.strip().lower()
    pct = pct.strip().removesuffix("%").strip()
    if not sep or not _ROLE_RE.fullmatch(role):
        raise UsageError(f"{text!r} is not ROLE=PCT", hint="e.g. --role-share reviewer=90")
    if not pct.isascii() or not pct.isdigit() or not 1 <= int(pct) <= 100:
        raise UsageError(
            f"{text!r}: the share must be a whole percent from 1 to 100",
            hint="e.g. --role-share reviewer=90",
        )
    return role, int(pct)


def effective_role_shares(
    table: ProfileTable | None = None, overrides: Mapping[str, int] | None = None
) -> dict[str, int]:
    """The role shares in force: DESIGN.md's, then TABLE's ``[roles]``, then OVERRIDES
    (``--role-share``), each beating the one before."""
    shares = dict(ROLE_SHARES)
    if table is not None:
        shares.update(table.roles)
    if overrides:
        shares.update({k.strip().lower(): v for k, v in overrides.items()})
    return shares


def unknown_role(
    role: str | None, table: ProfileTable | None = None, overrides: Mapping[str, int] | None = None
) -> str | None:
    """What to say of ROLE when neither DESIGN.md's table, TABLE's ``[roles]`` nor OVERRIDES
    (``--role-share``) names it (a typo gets the default share and a worker's pack in
    silence otherwise); None for a known role or none."""
    if not role:
        return None
    key = role.strip().lower()
    known = set(effective_role_shares(table, overrides)) | UNLISTED_ROLES
    if key in known:
        return None
    import difflib

    near = difflib.get_close_matches(key, sorted(known - UNLISTED_ROLES), n=1, cutoff=0.75)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return (f"--role {role!r} is not a known role ({hint}a profiles file's [roles] or "
            f"--role-share names one): packed as a worker's, in {DEFAULT_ROLE_SHARE}% of the "
            "budget (an unnamed role's share; a worker has 100%)")


def role_share(role: str | None, shares: Mapping[str, int] | None = None) -> int:
    """A role's share of the budget, in percent: from SHARES when it names the role (an
    override, see ``effective_role_shares``), else DESIGN.md's table; no role is a worker."""
    key = (role or "worker").strip().lower()
    if shares and key in shares:
        return int(shares[key])
    return ROLE_SHARES.get(key, DEFAULT_ROLE_SHARE)


@dataclass(frozen=True)
class Budget:
    context_limit: int
    reserve_system: int
    reserve_tools: int
    reserve_response: int
    slack_percent: int
    slack: int
    role: str
    role_share: int
    before_share: int
    computed: int
    floor: int
    available: int
    floored: bool

    def as_dict(self) -> dict:
        return asdict(self)

    def floor_error(
        self, hint: str = "use a model with a larger window, another --role, or --tokens N"
    ) -> CtxError:
        """The one rule of the floor: a budget computed below it is no budget. ctx-pack
        refuses to pack and ``ctx-count --budget`` exits 1 with this same line (it showed
        "available 512 (floor)" where ctx-pack refused)."""
        b = self
        return CtxError(
            f"the pack budget is {b.computed:,} tokens, below the floor of {b.floor:,}: "
            f"window {b.context_limit:,} - system {b.reserve_system:,} - tools "
            f"{b.reserve_tools:,} - response {b.reserve_response:,} - slack {b.slack:,} "
            f"= {b.before_share:,}, x {b.role_share}% ({b.role})",
            hint=hint,
        )


def pack_budget(
    context_limit: int,
    role: str | None = None,
    *,
    role_shares: Mapping[str, int] | None = None,
    reserve_system: int = RESERVE_SYSTEM,
    reserve_tools: int = RESERVE_TOOLS,
    reserve_response: int = RESERVE_RESPONSE,
    slack_percent: int = SLACK_PERCENT,
    floor: int = FLOOR,
) -> Budget:
    """The tokens a pack may use (DESIGN.md):

    available = (context_limit - reserve_system - reserve_tools - reserve_response
                 - slack_percent% of context_limit) x role share, never below ``floor``.

    ROLE_SHARES overrides role shares (``effective_role_shares()`` builds it from a profiles
    table and ``--role-share``); without it, DESIGN.md's table applies.
    """
    for label, value in (
        ("context limit", context_limit),
        ("reserve-system", reserve_system),
        ("reserve-tools", reserve_tools),
        ("reserve-response", reserve_response),
    ):
        if value < 0 or (label == "context limit" and value == 0):
            raise UsageError(f"{label} must be positive, got {value}")
    if not 0 <= slack_percent < 100:
        raise UsageError(f"slack percent must be from 0 to 99, got {slack_percent}")
    slack = math.ceil(context_limit * slack_percent / 100)
    before = context_limit - reserve_system - reserve_tools - reserve_response - slack
    share = role_share(role, role_shares)
    computed = max(0, before) * share // 100
    available = max(floor, computed)
    return Budget(
        context_limit=context_limit,
        reserve_system=reserve_system,
        reserve_tools=reserve_tools,
        reserve_response=reserve_response,
        slack_percent=slack_percent,
        slack=slack,
        role=(role or "worker").strip().lower(),
        role_share=share,
        before_share=before,
        computed=computed,
        floor=floor,
        available=available,
        floored=computed < floor,
    )


def usage_percent(tokens: int, context_limit: int) -> float:
    return 100.0 * tokens / context_limit if context_limit else 0.0


def usage_status(percent: float) -> str:
    """``ok`` below 80%, ``warn`` from 80%, ``compact`` from 90% of the window."""
    if percent >= COMPACT_PERCENT:
        return "compact"
    if percent >= WARN_PERCENT:
        return "warn"
    return "ok"
