"""Model profiles and the pack budget.

A profile says how big a model's window is, how much it may write, and which tiktoken
encoding measures it. Profiles are data (``ctxtools/data/profiles.toml``), extended or
overridden by a user TOML file of the same shape (``--profiles FILE`` or ``$CTX_PROFILES``).

Resolution of a model name: exact name -> the longest family substring -> a size bucket
(``1.5b``, ``3b``, ``7b``, ``14b``, ``32b``) -> the default.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from ctxtools.errors import InputError, NotFoundError, UsageError

# Token reserves of DESIGN.md ("Pack budget").
RESERVE_SYSTEM = 500
RESERVE_TOOLS = 900
RESERVE_RESPONSE = 2048
SLACK_PERCENT = 10
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
}
DEFAULT_ROLE_SHARE = 75

_SIZE_RE = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")


@dataclass(frozen=True)
class Profile:
    name: str  # the model name asked for
    context_limit: int
    max_output: int
    encoding: str
    approximate: bool  # counts with this encoding are estimates for this model
    matched_by: str  # "exact", "family", "size", "default"
    matched: str  # the key that matched (model, family substring, size bucket, "default")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class ProfileTable:
    models: dict[str, dict]
    families: dict[str, dict]
    sizes: dict[str, int]
    default: dict
    sources: list[str]


def _check_entry(where: str, entry: object) -> dict:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a table")
    out = dict(entry)
    for key in ("context_limit", "max_output"):
        if key in out and (not isinstance(out[key], int) or out[key] <= 0):
            raise InputError(f"{where}: {key} must be a positive integer")
    if "encoding" in out and not isinstance(out["encoding"], str):
        raise InputError(f"{where}: encoding must be a string")
    return out


def _merge(table: ProfileTable, data: dict, source: str) -> None:
    for section in ("models", "families"):
        block = data.get(section, {})
        if not isinstance(block, dict):
            raise InputError(f"{source}: [{section}] must be a table")
        target = getattr(table, section)
        for name, entry in block.items():
            merged = dict(target.get(name.lower(), {}))
            merged.update(_check_entry(f"{source}: {section}.{name}", entry))
            target[name.lower()] = merged
    sizes = data.get("sizes", {})
    if not isinstance(sizes, dict):
        raise InputError(f"{source}: [sizes] must be a table")
    for bucket, limit in sizes.items():
        if not isinstance(limit, int) or limit <= 0:
            raise InputError(f"{source}: sizes.{bucket} must be a positive integer")
        table.sizes[bucket.lower()] = limit
    if "default" in data:
        table.default.update(_check_entry(f"{source}: default", data["default"]))
    table.sources.append(source)


def load_profiles(user_file: str | os.PathLike | None = None) -> ProfileTable:
    """The shipped profiles, extended by USER_FILE (or ``$CTX_PROFILES``) when given."""
    table = ProfileTable({}, {}, {}, {}, [])
    shipped = resources.files("ctxtools").joinpath("data/profiles.toml").read_bytes()
    _merge(table, tomllib.loads(shipped.decode("utf-8")), "built-in")
    path = user_file or os.environ.get("CTX_PROFILES") or None
    if path:
        p = Path(path)
        if not p.is_file():
            raise NotFoundError(f"profiles file not found: {path}")
        try:
            data = tomllib.loads(p.read_bytes().decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: not a valid TOML profiles file: {exc}") from None
        _merge(table, data, str(p))
    return table


def _profile(name: str, entry: dict, base: dict, matched_by: str, matched: str) -> Profile:
    full = dict(base)
    full.update(entry)
    return Profile(
        name=name,
        context_limit=int(full["context_limit"]),
        max_output=int(full.get("max_output", 4096)),
        encoding=str(full.get("encoding", "cl100k_base")),
        approximate=bool(full.get("approximate", False)),
        matched_by=matched_by,
        matched=matched,
    )


def resolve(model: str, table: ProfileTable | None = None) -> Profile:
    """The profile of MODEL: exact -> family substring -> size bucket -> default."""
    if not model or not model.strip():
        raise UsageError("empty model name")
    table = table or load_profiles()
    key = model.strip().lower()
    base = {"approximate": False, "max_output": 4096, "encoding": "cl100k_base"}
    if key in table.models:
        return _profile(model, table.models[key], base, "exact", key)
    # The longest family name that occurs in the model name wins; ties by name.
    families = sorted((f for f in table.families if f in key), key=lambda f: (-len(f), f))
    if families:
        fam = families[0]
        return _profile(model, table.families[fam], base, "family", fam)
    for match in _SIZE_RE.finditer(key):
        bucket = match.group(1) + "b"
        if bucket in table.sizes:
            entry = {"context_limit": table.sizes[bucket]}
            return _profile(model, entry, table.default, "size", bucket)
    return _profile(model, {}, table.default, "default", "default")


def list_profiles(table: ProfileTable | None = None) -> list[dict]:
    """Every named model and family, for ``ctx-count --profiles`` (sorted, deterministic)."""
    table = table or load_profiles()
    base = {"approximate": False, "max_output": 4096, "encoding": "cl100k_base"}
    rows = []
    for kind, block in (("model", table.models), ("family", table.families)):
        for name in sorted(block):
            p = _profile(name, block[name], base, kind, name)
            rows.append(
                {
                    "name": name,
                    "kind": kind,
                    "context_limit": p.context_limit,
                    "max_output": p.max_output,
                    "encoding": p.encoding,
                    "approximate": p.approximate,
                }
            )
    for bucket in sorted(table.sizes, key=lambda b: float(b[:-1])):
        d = table.default
        rows.append(
            {
                "name": bucket,
                "kind": "size",
                "context_limit": table.sizes[bucket],
                "max_output": int(d.get("max_output", 4096)),
                "encoding": str(d.get("encoding", "cl100k_base")),
                "approximate": bool(d.get("approximate", True)),
            }
        )
    d = table.default
    rows.append(
        {
            "name": "default",
            "kind": "default",
            "context_limit": int(d["context_limit"]),
            "max_output": int(d.get("max_output", 4096)),
            "encoding": str(d.get("encoding", "cl100k_base")),
            "approximate": bool(d.get("approximate", True)),
        }
    )
    return rows


def role_share(role: str | None) -> int:
    """A role's share of the budget, in percent."""
    if not role:
        return ROLE_SHARES["worker"]
    return ROLE_SHARES.get(role.strip().lower(), DEFAULT_ROLE_SHARE)


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


def pack_budget(
    context_limit: int,
    role: str | None = None,
    *,
    reserve_system: int = RESERVE_SYSTEM,
    reserve_tools: int = RESERVE_TOOLS,
    reserve_response: int = RESERVE_RESPONSE,
    slack_percent: int = SLACK_PERCENT,
    floor: int = FLOOR,
) -> Budget:
    """The tokens a pack may use (DESIGN.md):

    available = (context_limit - reserve_system - reserve_tools - reserve_response
                 - slack_percent% of context_limit) x role share, never below ``floor``.
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
    share = role_share(role)
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
