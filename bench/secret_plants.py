"""Plants for bench_secrets.py: a credential of every rule of a public rule set, written
into each place a model can be shown it.

``rule_secrets(toml_path)`` reads a gitleaks-style rule file (``[[rules]]`` with ``id``
and ``regex``; the file is fetched at run time and never committed) and makes, for each
rule, one random string that its regex's secret group (the first capturing group, or
the whole pattern) matches: a walk over the parsed pattern choosing at random in each
class, alternation and repeat. ``PLACES`` renders a (key name, value) pair the way each
place shows it (a source line, a dotenv line, a diff hunk's ``+`` line, the map's ``N:``
prefix, a notebook cell, a compose list, a URL query...).
"""

from __future__ import annotations

import random
import re
import string

try:  # Python 3.11+
    from re import _constants as C
    from re import _parser as P
except ImportError:  # pragma: no cover
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

PRINTABLE = string.ascii_letters + string.digits
MAX_REPEAT = 24  # an open-ended repeat ({16,}, +, *) is drawn up to min + this


def _go_to_python(regex: str) -> str:
    """A Go (RE2) pattern in Python's syntax, as far as generation needs."""
    regex = regex.replace(r"\z", r"\Z").replace("(?-i:", "(?:")
    return re.sub(r"\\p\{[^}]*\}", "a", regex)


_CATEGORY_CHARS = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_WORD: PRINTABLE + "_",
    C.CATEGORY_NOT_DIGIT: string.ascii_letters,
    C.CATEGORY_NOT_WORD: "-",
    C.CATEGORY_NOT_SPACE: PRINTABLE,
}


def _category(cat, rng: random.Random) -> str:
    if cat == C.CATEGORY_DIGIT:
        return rng.choice(string.digits)
    if cat == C.CATEGORY_SPACE:
        return " "
    if cat == C.CATEGORY_WORD:
        return rng.choice(PRINTABLE + "_")
    return rng.choice(PRINTABLE)  # a negated category: any letter or digit is outside


def _in(items, rng: random.Random) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        if op == C.NEGATE:
            negate = True
        elif op == C.LITERAL:
            chars.append(chr(av))
        elif op == C.RANGE:
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op == C.CATEGORY:
            chars.extend(_CATEGORY_CHARS.get(av, ""))
    if negate:
        allowed = [c for c in PRINTABLE + "+/=.~" if c not in chars]
        return rng.choice(allowed or ["~"])
    # Prefer letters and digits: a class that also holds quotes or spaces would otherwise
    # make values no real provider issues.
    good = [c for c in chars if c.isalnum() or c in "_-+/.=~"]
    return rng.choice(good or chars)


def _gen(parsed, rng: random.Random, group: int | None, out: list[str], inside: bool) -> None:
    for op, av in parsed:
        if op == C.LITERAL:
            if inside:
                out.append(chr(av))
        elif op == C.NOT_LITERAL:
            if inside:
                out.append(rng.choice([c for c in PRINTABLE if ord(c) != av]))
        elif op == C.CATEGORY:
            if inside:
                out.append(_category(av, rng))
        elif op == C.ANY:
            if inside:
                out.append(".")  # an unescaped dot of a host name, mostly
        elif op == C.IN:
            if inside:
                out.append(_in(av, rng))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            hi = min(hi, lo + MAX_REPEAT) if hi != C.MAXREPEAT else lo + MAX_REPEAT
            n = rng.randint(lo, max(lo, hi)) if inside else lo
            for _ in range(n):
                _gen(sub, rng, group, out, inside)
        elif op == C.SUBPATTERN:
            gid, _add, _del, sub = av
            _gen(sub, rng, group, out, inside or gid == group)
        elif op == C.BRANCH:
            _gen(rng.choice(av[1]), rng, group, out, inside)
        elif op == getattr(C, "ATOMIC_GROUP", None):
            _gen(av, rng, group, out, inside)
        # AT (anchors), ASSERT, ASSERT_NOT, GROUPREF: nothing to write


def secret_for(regex: str, secret_group: int | None, seed: str) -> str | None:
    """A random string that REGEX's secret group matches, or None if it cannot be made."""
    rng = random.Random(seed)
    try:
        parsed = P.parse(_go_to_python(regex))
    except (re.error, ValueError, OverflowError):
        return None
    groups = parsed.state.groups - 1
    group = secret_group if secret_group is not None else (1 if groups >= 1 else None)
    out: list[str] = []
    _gen(parsed, rng, group, out, group is None)
    value = "".join(out)
    return value or None


def rule_secrets(toml_path: str) -> list[tuple[str, str, list[str]]]:
    """(rule id, a secret its regex matches, the rule's keywords) for each rule of the
    gitleaks-style file."""
    import tomllib

    with open(toml_path, "rb") as fh:
        data = tomllib.load(fh)
    out = []
    for rule in data.get("rules", []):
        regex = rule.get("regex")
        if not regex:
            continue
        value = secret_for(regex, rule.get("secretGroup"), rule["id"])
        if value:
            out.append((rule["id"], value, rule.get("keywords", [])))
    return out


def key_names(rule_id: str) -> tuple[str, str, str]:
    """(UPPER_SNAKE, lower_snake, camelCase) key names a config would give rule_id's
    credential: ``sendgrid-api-token`` -> SENDGRID_API_TOKEN, sendgrid_api_token,
    sendgridApiToken."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", rule_id) if w]
    return (
        "_".join(words).upper(),
        "_".join(words).lower(),
        words[0].lower() + "".join(w.capitalize() for w in words[1:]),
    )


# place -> a template of (U: UPPER_SNAKE key, L: lower_snake key, K: camelCase key, V: value)
PLACES: dict[str, str] = {
    "py assignment": '{L} = "{V}"\n',
    "py dict": "CONFIG = {{'{L}': '{V}', 'debug': False}}\n",
    "dotenv": "{U}={V}\n",
    "dotenv export": 'export {U}="{V}"\n',
    "yaml": "service:\n  {L}: {V}\n",
    "json": '{{\n  "{K}": "{V}",\n  "region": "eu"\n}}\n',
    "toml": '[service]\n{L} = "{V}"\n',
    "diff hunk": "@@ -1,2 +1,3 @@\n DEBUG=1\n+{U}={V}\n",
    "map prefix": "settings.env\n1:{U}={V}\n",
    "excerpt gutter": "41\tDEBUG = True\n42\t{L} = '{V}'\n",  # quoting.numbered's form
    "ipynb cell": '   "source": [\n    "{L} = \\"{V}\\"\\n",\n   ]\n',
    "compose list": "    environment:\n      - {U}={V}\n",
    "mid-line": "RUN env {U}={V} ./deploy.sh\n",
    "after escape": '"cmd": "set -e\\n{U}={V}\\nrun"\n',
    "js object": "const cfg = {{ {K}: '{V}' }};\n",
    "xml element": "<config><{K}>{V}</{K}></config>\n",
    "properties": "app.{L}={V}\n",
    "ini": "[default]\n{L} = {V}\n",
    "shell flag": "deploy --{L} {V} --verbose\n",
    "go const": 'const {K} = "{V}"\n',
}
# Places where only the value's own format can tell it (no key names it); counted for the
# formats that have one (a rule whose regex needs no keyword before the value).
BARE_PLACES: dict[str, str] = {
    "log line": "2024-05-01 INFO using {V} for the upload\n",
    "prose": "The key {V} was rotated.\n",
}


def has_own_format(keywords: list[str], value: str) -> bool:
    """Whether a rule's secret carries its own format: one of the rule's keywords (which
    gitleaks uses as a prefilter) is part of the secret itself (``ghp_`` of a GitHub
    token), not of the key before it (``cohere`` of ``COHERE_API_KEY``)."""
    low = value.lower()
    return any(k.lower() in low for k in keywords)
