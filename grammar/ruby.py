"""Ruby's text forms of values, where Puppet's output depends on them (one implementation each)."""

from __future__ import annotations

import math


def float_to_s(f: float) -> str:
    """Ruby's ``Float#to_s``: shortest round-trip digits; fixed notation when the decimal exponent is
    in -4 < e <= 15, else ``d.ddde+XX`` (also what Ruby's JSON writes)."""
    if f != f:
        return "NaN"
    if f in (math.inf, -math.inf):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0.0:
        return "-0.0" if math.copysign(1.0, f) < 0 else "0.0"
    r = repr(abs(f))
    mant, _, e = r.partition("e")
    exp = int(e) if e else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    decpt = len(ip) + exp - (len(ip + fp) - len(digits))
    digits = digits.rstrip("0") or "0"
    sign = "-" if f < 0 else ""
    if -4 < decpt <= 15:
        if decpt <= 0:
            s = "0." + "0" * (-decpt) + digits
        elif decpt >= len(digits):
            s = digits + "0" * (decpt - len(digits)) + ".0"
        else:
            s = digits[:decpt] + "." + digits[decpt:]
    else:
        s = digits[0] + "." + (digits[1:] or "0") + "e" + f"{decpt - 1:+03d}"
    return sign + s


def escape_slash(source: str) -> str:
    """A regexp source as Ruby's ``Regexp#inspect`` shows it: every unescaped ``/`` escaped."""
    if "/" not in source:
        return source
    out = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            out.append(source[i : i + 2])
            i += 2
            continue
        out.append("\\/" if c == "/" else c)
        i += 1
    return "".join(out)


def regexp_inspect(source: str) -> str:
    """Ruby's ``Regexp#inspect`` of a regexp without flags."""
    return "/" + escape_slash(source) + "/"
