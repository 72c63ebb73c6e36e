"""Keep credentials out of what goes to a model: secret files by name, secrets by content.

``names``: ``secret_filename(relpath)`` says whether a file is a secret by its name alone
(``.env``, ``*.pem``, ``id_rsa``, ``.aws/credentials``…): such a file is not read at all;
``secret_path(label, path)`` judges a symbolic link by its target's name too.
``scan``: ``redact(text)`` replaces each secret found in a text by
``[secret redacted: KIND]`` and says what it replaced, with 1-based line numbers, by the
rule table of ``rules`` (a provider's token format, a private-key block, a password in a
URL, a credential-looking value assigned to a password-like key).

``output``: the pass every output meant for a model goes through where it is printed
(``redact_output``, ``redact_doc`` for JSON documents, ``RedactingWriter`` for streams).

The names are loaded on first use, so ``import ctxtools.secrets`` costs nothing.
"""

from ctxtools.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "names": ("secret_filename", "secret_path"),
        "scan": ("KINDS", "MARKER", "Finding", "find_secrets", "redact"),
        "output": ("OutputRedactor", "RedactingWriter", "redact_doc", "redact_output"),
    },
)
__all__ = [
    "KINDS",
    "MARKER",
    "Finding",
    "OutputRedactor",
    "RedactingWriter",
    "find_secrets",
    "redact",
    "redact_doc",
    "redact_output",
    "secret_filename",
    "secret_path",
]
