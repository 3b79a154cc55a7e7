"""Semantic versions and version ranges as Puppet reads them (SemanticPuppet 1.0), without Ruby.

metadata.json's ``version`` must be a version ``SemanticPuppet::Version.valid?`` accepts, and each
dependency's ``version_requirement`` a range ``SemanticPuppet::VersionRange.parse`` accepts; whether an
installed module satisfies a dependency is that range's ``include?`` of the installed version (what
``puppet module list`` reports as unmet).  This module follows those rules, including their corners:

* a version may end with one newline (Ruby's ``\\Z``); a numeric pre-release identifier with a leading
  zero is refused by ``valid?`` and by every range that reads it;
* a range is split on ``||``, each part on white space (Ruby's ``split``: empty trailing parts dropped,
  a leading one kept -- so a part starting with a blank is refused); white space or a ``v`` after an
  operator is removed first; ``a - b`` is an inclusive range; ``~``, ``~>``, ``~=``, ``^``, ``x``/``X``/``*``
  wildcards and partial versions follow node-semver's meaning;
* what makes SemanticPuppet fail with something other than its parse error is refused too: ``^x`` and
  ``<=x`` (it calls a method that does not exist), three or more comparators of which two do not
  intersect (it intersects with nothing);
* a pre-release version is in a range only when a bound of the matching part is a pre-release of the
  same major.minor.patch (or the part is ``*``).

Ranges are kept as SemanticPuppet keeps them: each ``||`` part intersected into one range, then parts
that overlap or touch merged (the merged bounds decide which pre-releases a range admits; SemanticPuppet
fails on merging two parts with the same end, and so do we).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["Version", "VersionRange", "RangeError", "parse_version", "valid_version", "parse_range"]


class RangeError(ValueError):
    """A version or range SemanticPuppet does not accept (message says what)."""


_NUMERIC = r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
_PRE = r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
_BUILD = r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
_FULL = re.compile(_NUMERIC + _PRE + _BUILD + r"\n?\Z")  # Ruby's \Z: before one final newline

Identifier = int | str


@dataclass(frozen=True)
class Version:
    """A semantic version; ``major`` may be infinite (SemanticPuppet's ``Version::MAX``)."""

    major: float
    minor: int
    patch: int
    prerelease: tuple[Identifier, ...] | None = None
    build: tuple[str, ...] | None = None

    @property
    def stable(self) -> bool:
        return not self.prerelease

    def key(self) -> tuple[float, int, int]:
        return (self.major, self.minor, self.patch)

    def compare(self, other: Version) -> int:
        """-1, 0 or 1 by SemanticPuppet's order (build metadata ignored)."""
        if self.key() != other.key():
            return -1 if self.key() < other.key() else 1
        mine, yours = self.prerelease, other.prerelease
        if mine is None:
            return 0 if yours is None else 1
        if yours is None:
            return -1
        for index, x in enumerate(mine):
            if index >= len(yours):
                return 1
            y = yours[index]
            if isinstance(x, int):
                cmp = (x > y) - (x < y) if isinstance(y, int) else -1
            elif isinstance(y, int):
                cmp = 1
            else:
                cmp = (x > y) - (x < y)
            if cmp:
                return cmp
        return (len(mine) > len(yours)) - (len(mine) < len(yours))

    def next_patch(self) -> Version:
        return Version(self.major, self.minor, self.patch + 1)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease is not None:
            text += "-" + ".".join(str(p) for p in self.prerelease)
        if self.build is not None:
            text += "+" + ".".join(self.build)
        return text


MIN = Version(0, 0, 0, ())
MAX = Version(math.inf, 0, 0)


def _prerelease(text: str | None) -> tuple[Identifier, ...] | None:
    """Pre-release identifiers (numbers as int); a number with a leading zero is refused."""
    if text is None:
        return None
    out: list[Identifier] = []
    for part in text.split("."):
        if part.isascii() and part.isdigit():
            if len(part) > 1 and part.startswith("0"):
                raise RangeError("numeric pre-release identifiers must not have leading zeroes")
            out.append(int(part))
        else:
            out.append(part)
    return tuple(out)


def valid_version(text: str) -> bool:
    """``SemanticPuppet::Version.valid?``."""
    match = _FULL.match(text)
    if match is None:
        return False
    pre = match.group(4)
    return pre is None or not any(re.fullmatch(r"0[0-9]+", p) for p in pre.split("."))


def parse_version(text: str) -> Version:
    """``SemanticPuppet::Version.parse``; RangeError when it raises."""
    match = _FULL.match(text)
    if match is None:
        raise RangeError(f"'{text}' is not a semantic version")
    major, minor, patch, pre, build = match.groups()
    return Version(
        int(major),
        int(minor),
        int(patch),
        _prerelease(pre),
        None if build is None else tuple(build.split(".")),
    )


# ------------------------------------------------------------------------------------------------ ranges


@dataclass(frozen=True)
class Comparator:
    """One bound or an exact version: op is ``>``, ``>=``, ``<``, ``<=``, ``=`` or ``*`` (everything)."""

    op: str
    version: Version = MIN

    def includes(self, v: Version) -> bool:
        if self.op == "=":  # SemanticPuppet's EqRange: Version#== (build metadata counts)
            return v == self.version
        c = v.compare(self.version)
        return {">": c > 0, ">=": c >= 0, "<": c < 0, "<=": c <= 0, "*": True}[self.op]

    @property
    def begin(self) -> Version:
        return self.version if self.op in (">", ">=", "=") else MIN

    @property
    def end(self) -> Version:
        return self.version if self.op in ("<", "<=", "=") else MAX

    @property
    def exclude_begin(self) -> bool:
        return self.op == ">"

    @property
    def exclude_end(self) -> bool:
        return self.op == "<"

    @property
    def lower_bound(self) -> bool:
        return self.op == ">" or (self.op in (">=", "=") and self.version != MIN)

    @property
    def upper_bound(self) -> bool:
        return self.op == "<" or (self.op in ("<=", "=") and self.version != MAX)

    def test_prerelease(self, v: Version) -> bool:
        if self.op == "*":
            return True
        return not self.version.stable and self.version.key() == v.key()


@dataclass(frozen=True)
class SimpleRange:
    """One ``||`` part: a single comparator, or a min and a max (SemanticPuppet's MinMaxRange)."""

    low: Comparator
    high: Comparator | None = None  # None: ``low`` alone

    def parts(self) -> tuple[Comparator, ...]:
        return (self.low,) if self.high is None else (self.low, self.high)

    def includes(self, v: Version) -> bool:
        return all(c.includes(v) for c in self.parts())

    @property
    def begin(self) -> Version:
        return self.low.begin

    @property
    def end(self) -> Version:
        return (self.high or self.low).end

    @property
    def exclude_begin(self) -> bool:
        return self.low.exclude_begin

    @property
    def exclude_end(self) -> bool:
        return (self.high or self.low).exclude_end

    @property
    def lower_bound(self) -> bool:
        return self.low.lower_bound

    @property
    def upper_bound(self) -> bool:
        return (self.high or self.low).upper_bound

    def test_prerelease(self, v: Version) -> bool:
        return any(c.test_prerelease(v) for c in self.parts())

    def intersection(self, other: SimpleRange) -> SimpleRange | None:
        """``AbstractRange#intersection``: None when the two do not overlap."""
        if self.low.op == "*" and self.high is None:
            return other
        cmp = self.begin.compare(other.end)
        if cmp > 0:
            return None
        if cmp == 0:
            return None if self.exclude_begin or other.exclude_end else _eq(self.begin)
        cmp = other.begin.compare(self.end)
        if cmp > 0:
            return None
        if cmp == 0:
            return None if other.exclude_begin or self.exclude_end else _eq(other.begin)
        cmp = self.begin.compare(other.begin)
        low = other if cmp < 0 else self if cmp > 0 else (self if self.exclude_begin else other)
        cmp = self.end.compare(other.end)
        high = other if cmp > 0 else self if cmp < 0 else (self if self.exclude_end else other)
        if not high.upper_bound:
            return low
        if not low.lower_bound:
            return high
        return SimpleRange(low.low, high.high or high.low)

    def merge(self, other: SimpleRange, whole: str) -> SimpleRange | None:
        """``AbstractRange#merge`` (``AllRange#merge``): one range covering both when they overlap or
        touch, else None.  SemanticPuppet fails (a name error) on overlapping ranges with the same end."""
        if self.low.op == "*" and self.high is None:
            return self
        if self.includes(other.begin) or other.includes(self.begin):
            cmp = self.begin.compare(other.begin)
            if cmp < 0:
                low, exclude_begin = self.begin, self.exclude_begin
            elif cmp > 0:
                low, exclude_begin = other.begin, other.exclude_begin
            else:
                low, exclude_begin = self.begin, self.exclude_begin and other.exclude_begin
            cmp = self.end.compare(other.end)
            if cmp == 0:
                raise RangeError(f'"{whole}": SemanticPuppet fails on two parts that end at the same version')
            high, exclude_end = (self.end, self.exclude_end) if cmp > 0 else (other.end, other.exclude_end)
            return _one(">" if exclude_begin else ">=", low).intersection(
                _one("<" if exclude_end else "<=", high)
            )
        if self.exclude_end and not other.exclude_begin and self.end == other.begin:
            return _from_to(self, other)
        if other.exclude_end and not self.exclude_begin and other.end == self.begin:
            return _from_to(other, self)
        if not self.exclude_end and not other.exclude_begin and self.end.next_patch() == other.begin:
            return _from_to(self, other)
        if not other.exclude_end and not self.exclude_begin and other.end.next_patch() == self.begin:
            return _from_to(other, self)
        return None


def _from_to(a: SimpleRange, b: SimpleRange) -> SimpleRange | None:
    low = _one(">" if a.exclude_begin else ">=", a.begin)
    return low.intersection(_one("<" if b.exclude_end else "<=", b.end))


def _merge_all(ranges: list[SimpleRange], whole: str) -> list[SimpleRange]:
    """``VersionRange#initialize``: the parts merged while any two merge (in SemanticPuppet's order,
    which decides the bounds a merged part keeps, and so which pre-releases it admits)."""
    merged = True
    while len(ranges) > 1 and merged:
        merged = False
        result: list[SimpleRange] = []
        while ranges:
            unmerged: list[SimpleRange] = []
            memo = ranges.pop()
            for other in ranges:
                combined = memo.merge(other, whole)
                if combined is None:
                    unmerged.append(other)
                else:
                    merged = True
                    memo = combined
            result.append(memo)
            ranges = unmerged
        ranges = result[::-1]
    return ranges or [_NOTHING]


def _eq(v: Version) -> SimpleRange:
    return SimpleRange(Comparator("=", v))


def _one(op: str, v: Version) -> SimpleRange:
    return SimpleRange(Comparator(op, v))


def _min_max(low: Version, high: Version) -> SimpleRange:
    return SimpleRange(Comparator(">=", low), Comparator("<", high))


_ALL = SimpleRange(Comparator("*"))
_NOTHING = _one("<", MIN)


@dataclass(frozen=True)
class VersionRange:
    """A parsed range: the ``||`` parts that can match something."""

    text: str
    ranges: tuple[SimpleRange, ...]

    def includes(self, v: Version) -> bool:
        """``VersionRange#include?``."""
        return any(r.includes(v) and (v.stable or r.test_prerelease(v)) for r in self.ranges)


_NR = r"0|[1-9][0-9]*"
_XR = r"(x|X|\*|" + _NR + r")"
_XR_NC = r"(?:x|X|\*|" + _NR + r")"
_PART = r"(?:[0-9A-Za-z-]+)"
_PARTS = _PART + r"(?:\." + _PART + r")*"
_QUALIFIER = r"(?:-(" + _PARTS + r"))?(?:\+(" + _PARTS + r"))?"
_QUALIFIER_NC = r"(?:-" + _PARTS + r")?(?:\+" + _PARTS + r")?"
_PARTIAL = _XR_NC + r"(?:\." + _XR_NC + r"(?:\." + _XR_NC + _QUALIFIER_NC + r")?)?"
_SIMPLE = re.compile(r"([<>=~^]|<=|>=|~>|~=)?(" + _PARTIAL + r")\Z")
_HYPHEN = re.compile(r"(" + _PARTIAL + r")\s+-\s+(" + _PARTIAL + r")\Z", re.ASCII)
_PARTIAL_EXPR = re.compile(_XR + r"(?:\." + _XR + r"(?:\." + _XR + _QUALIFIER + r")?)?\Z")
_LOGICAL_OR = re.compile(r"\s*\|\|\s*", re.ASCII)
_SPACES = re.compile(r"\s+", re.ASCII)
_AFTER_OPERATOR = re.compile(r"([><=~^])(?:\s+|\s*v)", re.ASCII)

_Partial = tuple[int | None, int | None, int | None, str | None, str | None]


def _ruby_split(pattern: re.Pattern[str], text: str) -> list[str]:
    """Ruby's ``String#split(regexp)``: trailing empty fields are dropped."""
    parts = pattern.split(text)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _partial(text: str, whole: str) -> _Partial:
    match = _PARTIAL_EXPR.match(text)
    if match is None:
        raise RangeError(f'unparsable version range: "{whole}"')

    def digit(s: str | None) -> int | None:
        return None if s is None or s in ("x", "X", "*") else int(s)

    return digit(match.group(1)), digit(match.group(2)), digit(match.group(3)), match.group(4), match.group(5)


def _full(major: int, minor: int, patch: int, pre: str | None, build: str | None) -> Version:
    return Version(major, minor, patch, _prerelease(pre), None if build is None else tuple(build.split(".")))


def _bound(p: _Partial) -> Version:
    """``parse_version``: missing parts are 0."""
    return _full(p[0] or 0, p[1] or 0, p[2] or 0, p[3], p[4])


def _patch_updates(p: _Partial, tilde_or_caret: bool = True) -> SimpleRange:
    major, minor, patch, pre, build = p
    if major is None:
        return _ALL
    if minor is None:
        return _min_max(Version(major, 0, 0), Version(major + 1, 0, 0))
    if patch is None:
        return _min_max(Version(major, minor, 0), Version(major, minor + 1, 0))
    version = _full(major, minor, patch, pre, build)
    if not tilde_or_caret:
        return _eq(version)
    return _min_max(version, Version(major, minor + 1, 0))


def _minor_updates(p: _Partial, whole: str) -> SimpleRange:
    major, minor, patch, pre, build = p
    if major is None:
        raise RangeError(f'"{whole}": SemanticPuppet fails on a caret range without a major version')
    if minor is None:
        return _min_max(Version(major, 0, 0), Version(major + 1, 0, 0))
    if patch is None:
        return _min_max(Version(major, minor, 0), Version(major + 1, 0, 0))
    if pre is None:  # (SemanticPuppet keeps the build metadata only with a pre-release here)
        return _min_max(Version(major, minor, patch), Version(major + 1, 0, 0))
    return _min_max(_full(major, minor, patch, pre, build), Version(major + 1, 0, 0))


def _simple(op: str | None, operand: str, whole: str) -> SimpleRange:
    p = _partial(operand, whole)
    major, minor, patch, pre, build = p
    if op in ("~", "~>", "~="):
        return _patch_updates(p)
    if op == "^":
        return _patch_updates(p) if major == 0 else _minor_updates(p, whole)
    if op == ">":
        if major is None:
            return _NOTHING
        if minor is None:
            return _one(">=", Version(major + 1, 0, 0))
        if patch is None:
            return _one(">=", Version(major, minor + 1, 0))
        return _one(">", _full(major, minor, patch, pre, build))
    if op == ">=":
        return _one(">=", _bound(p))
    if op == "<":
        return _one("<", _bound(p))
    if op == "<=":
        if major is None:
            raise RangeError(f'"{whole}": SemanticPuppet fails on <= without a major version')
        if minor is None:
            return _one("<", Version(major + 1, 0, 0))
        if patch is None:
            return _one("<", Version(major, minor + 1, 0))
        return _one("<=", _full(major, minor, patch, pre, build))
    return _patch_updates(p, tilde_or_caret=False)


def parse_range(text: str) -> VersionRange:
    """``SemanticPuppet::VersionRange.parse``; RangeError when it fails (with any exception)."""
    range_set = _AFTER_OPERATOR.sub(r"\1", text)
    alternatives = _ruby_split(_LOGICAL_OR, range_set)
    if not alternatives:
        return VersionRange(text, (_ALL,))
    out: list[SimpleRange] = []
    for alternative in alternatives:
        hyphen = _HYPHEN.match(alternative)
        if hyphen is not None:
            low = _bound(_partial(hyphen.group(1), text))
            high = _bound(_partial(hyphen.group(2), text))
            combined = _one(">=", low).intersection(_one("<=", high))
        else:
            simples = []
            for simple in _ruby_split(_SPACES, alternative):
                match = _SIMPLE.match(simple)
                if match is None:
                    raise RangeError(f'unparsable version range: "{text}"')
                simples.append(_simple(match.group(1), match.group(2), text))
            combined = simples[0] if len(simples) == 1 else _intersect_all(simples, text)
        if combined is not None:
            out.append(combined)
    return VersionRange(text, tuple(_merge_all(list(dict.fromkeys(out)), text)))


def _intersect_all(simples: list[SimpleRange], whole: str) -> SimpleRange | None:
    """``MinMaxRange.create``: the intersection of the comparators, left to right; SemanticPuppet fails
    when an intersection is empty and another comparator follows."""
    if not simples:
        return None
    memo: SimpleRange | None = simples[0]
    for index, simple in enumerate(simples[1:], start=1):
        if memo is None:
            raise RangeError(
                f'"{whole}": SemanticPuppet fails on comparators that match nothing before another one'
                f" (at {index + 1})"
            )
        memo = memo.intersection(simple)
    return memo
