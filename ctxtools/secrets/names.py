"""Secret files by name: ``secret_filename(relpath)`` says whether a file is a secret by
its name alone (``.env``, ``*.pem``, ``id_rsa``, ``.aws/credentials``, and their copies
``.env~``, ``key.pem.bak``, ``terraform.tfstate.1``…): such a file is not read at all.
``secret_path(label, path)`` judges a file by the name it is shown under, by the name of
what it really is (a symbolic link is judged by its target too) and, for a name that is
not code's, by its first bytes (``secret_content``: a renamed or hard-linked dotenv)."""

from __future__ import annotations

import functools
import os
import re

# Templates that a project commits on purpose to show which variables exist; their
# content is still redacted like any file's, so a real key pasted into one is caught.
ENV_TEMPLATES = frozenset(
    {"example", "sample", "template", "tpl", "dist", "defaults", "default", "schema"}
)
SSH_KEY_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_xmss")
SUFFIX_KINDS = {
    ".pem": "PEM file",
    ".key": "private key file",
    ".p12": "pkcs12",
    ".pfx": "pkcs12",
    ".jks": "java keystore",
    ".keystore": "java keystore",
    ".ppk": "putty key",
    ".kdbx": "password database",
    ".tfstate": "terraform state",
}
NAME_KINDS = {
    ".netrc": "netrc",
    "_netrc": "netrc",
    ".pgpass": "pgpass",
    ".git-credentials": "git credentials",
    ".htpasswd": "htpasswd",
    ".pypirc": "pypirc",
    "credentials.json": "credentials",
    "terraform.tfstate.backup": "terraform state",
}
# (path ending, kind): files whose name alone is too common to judge without the directory.
PATH_KINDS = (
    (".aws/credentials", "aws credentials"),
    (".docker/config.json", "docker credentials"),
    (".kube/config", "kubeconfig"),
)
SECRETS_DATA_RE = re.compile(r"secrets?\.(ya?ml|json|toml|ini|env)")
# What editors, tools and people append to a copy of a file: server.key.orig, .env~,
# .netrc.bak, terraform.tfstate.1, .env_old, secrets.yaml.save...
BACKUP_RE = re.compile(
    r"(?:~|\.(?:bak|backup|orig|old|save|sav|prev|tmp|swp|copy|[0-9]{1,3})|[_-](?:old|bak|backup|copy))$"
)
# A dotenv by another name: env.txt, env-prod, env_local, dotenv; not env.py, env.js
# (code that reads the environment) nor environment.yml.
DOTENV_NAME_RE = re.compile(r"(?:dot)?env(?:[._-][a-z0-9._-]*)?")
CODE_SUFFIXES = frozenset(
    (
        ".py",
        ".pyi",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".go",
        ".rs",
        ".rb",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".php",
        ".lua",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".swift",
        ".md",
        ".rst",
        ".html",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".nix",
        ".d",
        ".j2",
        ".jinja",
        ".tpl",
        ".example",
        ".sample",
        ".template",
        ".dist",
        ".schema",
        ".lock",
    )
)
CLIENT_SECRET_RE = re.compile(r"client_secrets?[\w.-]*\.json")


def secret_filename(relpath: str) -> str | None:
    """The kind of secret RELPATH is by its name alone, or None.

    Secret: ``.env``, ``.env.*`` and ``*.env`` ("dotenv") except templates
    (``.env.example``, ``.env.sample``, ``.env.template``, ``.env.dist``…), ``.envrc``;
    ``*.pem``, ``*.key``, ``*.p12``/``*.pfx``, ``*.jks``/``*.keystore``, ``*.ppk``,
    ``*.kdbx``, ``*.tfstate``; ``id_rsa*``, ``id_dsa*``, ``id_ecdsa*``, ``id_ed25519*``
    (not ``*.pub``); ``.aws/credentials``, ``credentials.json``, ``client_secret*.json``,
    ``.netrc``, ``.pgpass``, ``.git-credentials``, ``.htpasswd``, ``.pypirc``,
    ``.docker/config.json``, ``.kube/config``, ``secrets.{yml,yaml,json,toml,ini}``.
    ``.npmrc`` is not a secret by name (most only name a registry): an ``_authToken`` in it
    is redacted by content instead. Names are compared case-insensitively.
    """
    path = relpath.replace("\\", "/").rstrip("/")
    name = path.rsplit("/", 1)[-1].lower()
    if not name:
        return None
    stem = BACKUP_RE.sub("", name)
    while stem != name and stem:  # a copy is what it is a copy of: key.pem.bak, .env~
        name, path = stem, path[: len(path) - (len(path.rsplit("/", 1)[-1]) - len(stem))]
        stem = BACKUP_RE.sub("", name)
    kind = _by_name(path, name)
    if kind is None and DOTENV_NAME_RE.fullmatch(name.lstrip(".")):
        suffix = name[name.rfind(".") :] if "." in name.lstrip(".") else ""
        if not (ENV_TEMPLATES.intersection(re.split(r"[._-]", name)) or suffix in CODE_SUFFIXES):
            kind = "dotenv"
    return kind


def _by_name(path: str, name: str) -> str | None:
    low = path.lower()
    for ending, kind in PATH_KINDS:
        if low == ending or low.endswith("/" + ending):
            return kind
    if name in NAME_KINDS:
        return NAME_KINDS[name]
    if name == ".env" or name == ".envrc":
        return "dotenv"
    if name.startswith((".env.", ".env-", ".env_", ".envrc.")):
        words = re.split(r"[._-]", name[5:])
        return None if ENV_TEMPLATES.intersection(words) else "dotenv"
    if name.endswith(".env") and len(name) > 4:
        stem = name[:-4].rstrip(".")
        return None if stem.rsplit(".", 1)[-1] in ENV_TEMPLATES else "dotenv"
    if name.startswith(SSH_KEY_PREFIXES):
        return None if name.endswith(".pub") else "ssh key"
    dot = name.rfind(".")
    if dot > 0 or (dot == 0 and name.count(".") == 1 and name[1:] in ("pem", "key")):
        kind = SUFFIX_KINDS.get(name[dot:])
        if kind:
            return kind
    if name.endswith(".tfstate.backup"):
        return "terraform state"
    if SECRETS_DATA_RE.fullmatch(name) or CLIENT_SECRET_RE.fullmatch(name):
        return "credentials"
    return None


def secret_path(label: str, path: str | os.PathLike | None) -> str | None:
    """The kind of secret a file shown as LABEL is, judged by LABEL and, when PATH is
    given, by the real path it resolves to (a link ``settings.txt -> .env`` is a dotenv;
    a link into ``~/.aws/credentials`` is AWS credentials) and by its content
    (``secret_content``: a renamed or hard-linked ``.env``); None when none is."""
    kind = secret_filename(label)
    if kind is not None or path is None:
        return kind
    kind = secret_filename(_real(os.fspath(path)).replace(os.sep, "/"))
    return kind if kind is not None else secret_content(path, label)


def _real(path: str) -> str:
    """os.path.realpath(PATH), resolving each directory once (a pack judges thousands of
    files of a few hundred directories): the directory's real path, plus the name, unless
    the name itself is a link."""
    head, name = os.path.split(os.path.abspath(path))
    if not name or os.path.islink(path):
        return os.path.realpath(path)
    return os.path.join(_real_dir(head), name)


@functools.lru_cache(maxsize=4096)
def _real_dir(path: str) -> str:
    return os.path.realpath(path)


SNIFF_BYTES = 4096
_DOTENV_LINE = re.compile(rb"(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*=[^\n]*")
_CREDENTIAL_KEY = re.compile(
    rb"(?i)(?:pass(?:word|wd|phrase)?|pwd|secret|token|api_?key|_key|credentials?|dsn)="
)


def _head(path: str | os.PathLike) -> bytes:
    """The first SNIFF_BYTES of the file at PATH (fewer when it is shorter), read without
    a Python file object: a pack sniffs thousands of files."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        head = os.read(fd, SNIFF_BYTES)
        while head and len(head) < SNIFF_BYTES:  # (a short read is not the end)
            more = os.read(fd, SNIFF_BYTES - len(head))
            if not more:
                break
            head += more
        return head
    finally:
        os.close(fd)


def secret_content(path: str | os.PathLike, label: str = "") -> str | None:
    """``"dotenv"`` when the file at PATH (shown as LABEL) is a dotenv by its content,
    whatever its name (``git mv .env config.txt``, a hard link to ``.env``): its first
    SNIFF_BYTES hold only ``KEY=value`` lines (``export`` allowed), comments and blank
    lines, and a key names a credential (``DB_PASSWORD=``, ``API_TOKEN=``…). Files whose
    name says they are code or a known format (``.py``, ``.sh``, ``.yaml``…) are not
    read. None otherwise, or when the file cannot be read."""
    name = (label or os.fspath(path)).replace("\\", "/").rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    if dot > 0 and name[dot:] in CODE_SUFFIXES:
        return None
    try:
        head = _head(path)
    except OSError:
        return None
    if b"\0" in head:
        return None
    lines = head.split(b"\n")
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    assigned = credential = False
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        if not _DOTENV_LINE.fullmatch(line):
            return None
        assigned = True
        credential = credential or _CREDENTIAL_KEY.search(line.split(b"=", 1)[0] + b"=") is not None
    return BY_CONTENT_DOTENV if assigned and credential else None


BY_CONTENT_DOTENV = "dotenv (by its content)"


def secret_note(kind: str) -> tuple[str, str]:
    """(what a secret file was known by, "name" or "content"; its KIND without saying it
    again): a renamed ``.env`` found by its lines is "a secret by its content (dotenv)",
    not "a secret by its name (dotenv (by its content))"."""
    if kind == BY_CONTENT_DOTENV:
        return "content", "dotenv"
    return "name", kind
