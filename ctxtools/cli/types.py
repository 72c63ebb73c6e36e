"""The click parameter types of the ctx-* options: values checked or parsed at parse time,
so that a bad one is a usage error (exit 2) naming the option (``cli.decorators`` loads
them only when a command declares an option of one)."""

from __future__ import annotations

import click


class FiniteFloat(click.ParamType):
    """A float option that must be a finite number within [MIN, MAX] (either bound optional).

    click.FloatRange lets ``nan`` through (every comparison with nan is false) and accepts
    ``inf``; an option such as ``--fail-over nan`` would then silently never fire.
    """

    name = "number"

    def __init__(self, min: float | None = None, max: float | None = None):
        self.min = min
        self.max = max

    def convert(self, value, param, ctx):
        import math

        if isinstance(value, float) and math.isfinite(value):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number", param, ctx)
            if not math.isfinite(number):
                self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.min is not None and number < self.min:
            self.fail(f"{value!r} is below the minimum of {self.min:g}", param, ctx)
        if self.max is not None and number > self.max:
            self.fail(f"{value!r} is above the maximum of {self.max:g}", param, ctx)
        return number


class Above(FiniteFloat):
    """A finite number above LOW (exclusive) and at most MAX: nan, inf and LOW itself fail."""

    def __init__(self, low: float, max: float | None = None):
        super().__init__(min=low, max=max)

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if number <= self.min:
            self.fail(f"{value!r} is not above {self.min:g}", param, ctx)
        return number


class _Named:
    """The value of an option that names something (a model, an encoding, a role, a file, a
    directory, a glob, a program): an empty one is a usage error, ``invalid value for
    '--model': empty``, not the option left out -- ``--model "$MODEL"`` with MODEL unset
    silently got the default. (An empty environment variable never gets here: click takes
    ``CTX_MODEL=`` as unset.) EMPTY is what the error says instead of ``empty``."""

    def __init__(self, *args, empty: str = "empty", **kwargs):
        super().__init__(*args, **kwargs)
        self.empty = empty

    def convert(self, value, param, ctx):
        if value == "":
            self.fail(self.empty, param, ctx)
        return super().convert(value, param, ctx)


class Name(_Named, click.types.StringParamType):
    """A name (a model, an encoding, a role, a glob, a command): any text but the empty one.
    --help shows it as TEXT, as a plain string option."""

    name = "text"


class NamedPath(_Named, click.Path):
    """``click.Path`` (its keywords), but an empty name is a usage error (see ``_Named``):
    ``--root ''`` was the working directory, ``--profiles-file ''`` no file at all."""


class _Parsed(click.ParamType):
    """A value that a library function parses: its ``UsageError`` becomes click's usage error
    (exit 2, naming the option). A value that is not a string is already parsed."""

    def parse(self, text: str):
        raise NotImplementedError

    def message(self, text: str, exc: Exception) -> str:
        return str(exc)

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        from ctxtools.errors import UsageError

        try:
            return self.parse(value)
        except UsageError as exc:
            self.fail(self.message(value, exc), param, ctx)


class RoleShare(_Parsed):
    """``ROLE=PCT`` as a ``(role, pct)`` pair (``profiles.parse_role_share`` says what is valid)."""

    name = "ROLE=PCT"

    def parse(self, text: str):
        from ctxtools.profiles import parse_role_share

        return parse_role_share(text)


class Size(_Parsed):
    """A size in bytes: ``524288``, ``512K``, ``1M`` (``fsutil.parse_size``; a fraction of a
    byte is dropped: ``1.5`` is 1), at least MIN bytes."""

    name = "SIZE"

    def __init__(self, min: int = 0):
        self.min = min

    def parse(self, text: str) -> int:
        from ctxtools.fsutil import parse_size

        return parse_size(text)

    def convert(self, value, param, ctx):
        size = super().convert(value, param, ctx)
        if size < self.min:
            unit = "byte" if self.min == 1 else "bytes"
            self.fail(f"{value!r} is below the minimum of {self.min:,} {unit}", param, ctx)
        return size

    def message(self, text: str, exc: Exception) -> str:
        if "maximum" in str(exc):
            shown = text if len(text) <= 24 else f"a {len(text.strip())}-character size"
            return f"{shown} is over the maximum of 1T"
        return f"{text!r} is not a size (e.g. 524288, 512K, 1M)"


class Whole(click.IntRange):
    """A whole number from MIN to MAX (both bounds required, so that no value can overflow a
    C size, a float or an allocation further down): ``--limit 1e400`` is a usage error that
    says the bound instead of a traceback. A value past the bounds is shown short."""

    name = "integer"

    def __init__(self, min: int, max: int):
        super().__init__(min=min, max=max)

    def _describe_range(self) -> str:
        """--help shows a bound that means something (1<=x<=64); the ceiling every count
        shares (``defaults.MAX_COUNT``) is said once in docs/options.md, not on every line."""
        from ctxtools.defaults import MAX_COUNT, MAX_TOKENS

        if self.max >= min(MAX_COUNT, MAX_TOKENS):
            return f"x>={self.min}"
        return f"{self.min}<=x<={self.max}"

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            text, number = str(value), value
        else:
            text = str(value).strip()
            digits = text.lstrip("+-").lstrip("0")
            if digits.isdigit() and len(digits) > 24:  # also past int()'s digit limit
                shown = f"a {len(digits)}-digit {'negative ' if text[0] == '-' else ''}number"
                past = "below the minimum" if text[0] == "-" else "above the maximum"
                bound = self.min if text[0] == "-" else self.max
                self.fail(f"{shown} is {past} of {bound:,}", param, ctx)
            try:
                number = int(text)
            except ValueError:
                shown = text if len(text) <= 24 else f"{text[:12]}… ({len(text)} characters)"
                self.fail(f"{shown!r} is not a whole number", param, ctx)
        if number < self.min:
            self.fail(f"{number} is below the minimum of {self.min:,}", param, ctx)
        if number > self.max:
            self.fail(f"{number} is above the maximum of {self.max:,}", param, ctx)
        return number
