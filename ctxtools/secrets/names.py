"""Secret files by name: ``secret_filename(relpath)`` says whether a file is a secret by
its name alone (``.env``, ``*.pem``, ``id_rsa``, ``.aws/credentials``…): such a file is not
read at all. ``secret_path(label, path)`` judges a file by the name it is shown under and by
the name of what it really is (a symbolic link is judged by its target too)."""

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
    low = path.lower()
    for ending, kind in PATH_KINDS:
        if low == ending or low.endswith("/" + ending):
            return kind
    if name in NAME_KINDS:
        return NAME_KINDS[name]
    if name == ".env" or name == ".envrc":
        return "dotenv"
    if name.startswith(".env."):
        return None if ENV_TEMPLATES.intersection(name[5:].split(".")) else "dotenv"
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
    a link into ``~/.aws/credentials`` is AWS credentials); None when neither is."""
    kind = secret_filename(label)
    if kind is not None or path is None:
        return kind
    return secret_filename(_real(os.fspath(path)).replace(os.sep, "/"))


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
