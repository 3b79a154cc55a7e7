"""The XPP document: one self-describing Pcore object, ``Xpp::ParseResult`` (research note §5.3, option B).

Layout of the payload (after the envelope of :mod:`xpp.envelope`)::

    OBJECT_START(n + 1)
      PCORE_OBJECT_START Pcore::ObjectType(1) { name => 'Xpp::ParseResult',
          attributes => { program     => { type => Any,                      value => undef },
                          diagnostics => { type => Array[Hash[String, Any]], value => [] } } }
      program        a Puppet::AST::Program written by type name, or nil when there is no AST
      diagnostics    an array of hashes (trailing defaults dropped: no diagnostics -> not written)

``program`` is kept whenever the parser produced one, also when validation found errors (PRFC-23: "an AST
plus any warnings or errors"); it is nil only when parsing failed (a syntax error, invalid UTF-8).  A
runtime must still refuse a result holding an error diagnostic the way Puppet does (log the warnings,
raise the recorded error), so an AST is never evaluated when Puppet would have refused the source.

Envelope parameters written with every document (the payload stays exactly Puppet's serialization, so
this project's additions live in the envelope layer, :mod:`xpp.envelope`)::

    puppet-version  8 | 7 | 7_23   the language level the file was validated at ("7.23" -> 7_23: the
                                   PRFC-23 grammar allows no '.' in a value)
    strict          off | warning | error    Puppet's ``strict`` setting in effect
    tasks           true | false   Puppet's ``tasks`` mode (plans are validated in tasks mode)
    source-sha256   hex SHA-256 of the source bytes (a stale .xpp without a program is detectable)
    checksum        sha256-<hex> of the payload (verified by every reader)

Each is optional when reading (absent = not recorded, not checked).  A runtime whose settings differ from
the recorded ones parses the source instead: the validation result could differ.

The type is *included*, so a stock Puppet 7 reads the document without any Ruby code of ours: its
Deserializer creates the ``Xpp::ParseResult`` type (and a dynamic class) from the stream, and the Program
inside is a real ``Puppet::Pops::Model::Program`` (verified by the oracle ops in
``tests/conformance/ruby/ops/pcore.rb``).  The reader also accepts a bare Program payload (option A).

A diagnostic record is a hash with String keys (valid Puppet ``Data``):

=============  ======================================================================================
severity       "error" | "warning" | "deprecation"
issue_code     Puppet issue code, e.g. "SYNTAX_ERROR"
message        the rendered message
arguments      Hash[String, Data]: the issue's arguments (to re-render or translate the message)
file           the source path (``Locator.file``)
offset,length  byte position in the source, as in the AST (offset nil when unknown)
line, pos      1-based line and character column (nil when unknown)
=============  ======================================================================================

Python API
----------
``write_xpp(program, diagnostics=(), fmt="msgpack", *, locator=None, settings=None, source=None) -> bytes``
    the whole .xpp document (envelope + payload).  ``settings``: ``{"puppet_version": "8"|"7"|"7.23",
    "strict": "off"|"warning"|"error", "tasks": bool}`` (any key may be left out: not recorded);
    ``source``: the source text or bytes whose SHA-256 is recorded (default: the Locator's string).  ``diagnostics`` items are
    :class:`grammar.issues.Diagnostic` objects (line/pos computed from ``locator`` or ``program.locator``)
    or record dicts as above.
``read_xpp(data) -> (Program | None, list[dict])``; ``read_document(data) -> XppDocument`` adds the
    recorded ``settings`` (same keys as for writing), ``source_sha256`` and the envelope ``params``;
    diagnostics come back as record dicts (lossless); :func:`to_diagnostic` turns one into a
    :class:`grammar.issues.Diagnostic`.  Any malformed input raises :class:`xpp.pcore.XppFormatError`.
``parse_result_payload(program, diagnostics, fmt)`` / ``read_payload(payload, fmt)``: the same without
the envelope.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.xpp import envelope
from puppet_xpp.xpp.pcore import IncludedObject, PObject, PType, XppFormatError, XppWriteError, dumps, loads

__all__ = [
    "TYPE_NAME",
    "RECORD_KEYS",
    "write_xpp",
    "read_xpp",
    "parse_result_payload",
    "read_payload",
    "diagnostic_record",
    "to_diagnostic",
    "read_document",
    "XppDocument",
    "settings_params",
    "source_digest",
    "XppFormatError",
    "XppWriteError",
]

TYPE_NAME = "Xpp::ParseResult"
RECORD_KEYS = ("severity", "issue_code", "message", "arguments", "file", "offset", "length", "line", "pos")


def type_value() -> PType:
    """The ``Pcore::ObjectType`` value of ``Xpp::ParseResult``, included before the values of every document
    (so that a stock Puppet reads it: see the module docstring)."""
    return PType(
        "Pcore::ObjectType",
        [
            {
                "name": TYPE_NAME,
                "attributes": {
                    "program": {"type": PType("Pcore::AnyType"), "value": None},
                    "diagnostics": {
                        "type": PType(
                            "Pcore::ArrayType", [PType("Pcore::HashType", [PType("Pcore::StringType")])]
                        ),
                        "value": [],
                    },
                },
            }
        ],
    )


def _data(v: Any, where: str) -> Any:
    """A copy of ``v`` as Puppet Data (str keys; scalars, lists, dicts).  Other objects become strings."""
    t = type(v)
    if v is None or t in (str, int, float, bool):
        return v
    if t in (list, tuple):
        return [_data(x, where) for x in v]
    if t is dict:
        return {str(k): _data(x, where) for k, x in v.items()}
    return str(v)


def diagnostic_record(d: Diagnostic | dict[str, Any], locator: ast.Locator | None = None) -> dict[str, Any]:
    """The record dict of a Diagnostic (or a validated copy of a record dict)."""
    if isinstance(d, dict):
        rec: dict[str, Any] = _data(d, "diagnostic")
        return rec
    code = getattr(d, "code", None)
    if code is None:
        raise XppWriteError(f"not a diagnostic: {d!r}")
    offset = d.offset
    line = pos = None
    if locator is not None:
        try:  # (a diagnostic logged by a heredoc's syntax checker has a line but no offset)
            line, pos = d.line_col(locator)
        except Exception:  # an offset outside the text: keep the record, without line/pos
            line = pos = None
    file = d.file or (locator.file if locator is not None else "") or ""
    return {
        "severity": d.severity,
        "issue_code": code,
        "message": d.message,
        "arguments": _data(dict(d.args or {}), "arguments"),
        "file": file,
        "offset": offset,
        "length": d.length,
        "line": line,
        "pos": pos,
    }


def to_diagnostic(rec: dict[str, Any]) -> Diagnostic:
    """A :class:`grammar.issues.Diagnostic` for a record dict (line/pos are not kept: they derive from
    the offset and the Locator)."""
    return Diagnostic(
        code=rec.get("issue_code") or "",
        message=rec.get("message") or "",
        offset=rec.get("offset"),
        length=rec.get("length") or 0,
        severity=rec.get("severity") or "error",
        args=dict(rec.get("arguments") or {}),
        file=rec.get("file") or "",
    )


def parse_result_payload(
    program: ast.Program | None,
    diagnostics: Iterable[Diagnostic | dict[str, Any]] = (),
    fmt: str = "msgpack",
    *,
    locator: ast.Locator | None = None,
) -> bytes:
    """The Pcore payload (no envelope) of an Xpp::ParseResult."""
    if program is not None and not isinstance(program, ast.Program):
        raise XppWriteError(f"program must be a Program or None, not {type(program).__name__}")
    if locator is None and program is not None:
        locator = program.locator
    records = [diagnostic_record(d, locator) for d in diagnostics]
    values = [program, records]
    # trailing attribute values equal to their defaults are not written (as Puppet's ObjectWriter does)
    if not records:
        values.pop()
        if program is None:
            values.pop()
    return dumps(IncludedObject(type_value(), values), fmt)


# settings key -> (envelope parameter, Python value -> parameter value)
def _level_param(v: Any) -> str | None:
    return v.replace(".", "_") if v in ("8", "7", "7.23") else None


def _strict_param(v: Any) -> str | None:
    return v if v in ("off", "warning", "error") else None


def _tasks_param(v: Any) -> str | None:
    return ("true" if v else "false") if type(v) is bool else None


_SETTINGS: dict[str, tuple[str, Callable[[Any], str | None]]] = {
    "puppet_version": ("puppet-version", _level_param),
    "strict": ("strict", _strict_param),
    "tasks": ("tasks", _tasks_param),
}
SOURCE_PARAM = "source-sha256"


def settings_params(settings: dict[str, Any] | None) -> dict[str, str]:
    """The envelope parameters recording ``settings`` (see the module docstring)."""
    out = {}
    for k, v in (settings or {}).items():
        if v is None:
            continue
        if k not in _SETTINGS:
            raise XppWriteError(f"unknown setting {k!r} (expected {', '.join(_SETTINGS)})")
        name, conv = _SETTINGS[k]
        pv = conv(v)
        if pv is None:
            raise XppWriteError(f"bad value for setting {k!r}: {v!r}")
        out[name] = pv
    return out


def _settings_from(params: dict[str, str]) -> dict[str, Any]:
    """The settings recorded in envelope ``params`` (inverse of :func:`settings_params`)."""
    out: dict[str, Any] = {}
    for k, (name, _conv) in _SETTINGS.items():
        v = params.get(name)
        if v is None:
            continue
        if k == "tasks":
            if v not in ("true", "false"):
                raise XppFormatError(f"XPP envelope: tasks={v} (expected true or false)")
            out[k] = v == "true"
        else:
            out[k] = v.replace("_", ".") if k == "puppet_version" else v
    return out


def source_digest(source: str | bytes) -> str:
    """Hex SHA-256 of the source bytes (text is encoded as the parser read it: UTF-8, surrogateescape)."""
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogateescape")
    return hashlib.sha256(source).hexdigest()


def write_xpp(
    program: ast.Program | None,
    diagnostics: Iterable[Diagnostic | dict[str, Any]] = (),
    fmt: str = "msgpack",
    *,
    locator: ast.Locator | None = None,
    settings: dict[str, Any] | None = None,
    source: str | bytes | None = None,
) -> bytes:
    """The .xpp document: envelope (recorded settings, source digest, payload checksum) + payload."""
    params = settings_params(settings)
    if source is None:
        loc = locator if locator is not None else getattr(program, "locator", None)
        source = loc.string if loc is not None else None
    if source is not None:
        params[SOURCE_PARAM] = source_digest(source)
    payload = parse_result_payload(program, diagnostics, fmt, locator=locator)
    return envelope.wrap(payload, fmt, checksum=True, params=params)


def _check_data(v: Any) -> None:
    """Raise XppFormatError unless ``v`` is Data with String hash keys (iterative: input may be deep)."""
    stack = [v]
    while stack:
        x = stack.pop()
        t = type(x)
        if x is None or t in (str, int, float, bool):
            continue
        if t is list:
            stack.extend(x)
        elif t is dict:
            for k, y in x.items():
                if type(k) is not str:
                    raise XppFormatError("diagnostic hash keys must be strings")
                stack.append(y)
        else:
            raise XppFormatError(f"diagnostics must be data, found {type(x).__name__}")


def read_payload(payload: bytes, fmt: str = "msgpack") -> tuple[ast.Program | None, list[dict[str, Any]]]:
    """(Program | None, diagnostics) from a payload without envelope: an Xpp::ParseResult or a bare
    Program."""
    value = loads(payload, fmt)
    if isinstance(value, ast.Program):
        return value, []
    if not isinstance(value, PObject) or value.type_name != TYPE_NAME:
        what = value.type_name if isinstance(value, PObject) else type(value).__name__
        raise XppFormatError(f"XPP payload is not an {TYPE_NAME} or a Program (got {what})")
    attrs = value.attrs
    if "program" not in attrs or "diagnostics" not in attrs:
        raise XppFormatError(f"{TYPE_NAME} type lacks the program/diagnostics attributes")
    program = attrs["program"]
    if program is not None and not isinstance(program, ast.Program):
        raise XppFormatError(f"{TYPE_NAME}.program must be a Program or undef")
    diagnostics = attrs["diagnostics"]
    if type(diagnostics) is not list or any(type(d) is not dict for d in diagnostics):
        raise XppFormatError(f"{TYPE_NAME}.diagnostics must be an array of hashes")
    _check_data(diagnostics)
    return program, diagnostics


@dataclass
class XppDocument:
    program: ast.Program | None  # None: the parse made no AST
    diagnostics: list[dict[str, Any]]  # record dicts
    settings: dict[str, Any] = field(default_factory=dict)  # as recorded: puppet_version, strict, tasks
    source_sha256: str | None = None
    params: dict[str, str] = field(default_factory=dict)  # every envelope parameter


def read_xpp(data: bytes) -> tuple[ast.Program | None, list[dict[str, Any]]]:
    """(Program | None, list of diagnostic record dicts) from an .xpp document."""
    fmt, _params, payload = envelope.unwrap(data)
    return read_payload(payload, fmt)


def read_document(data: bytes) -> XppDocument:
    """Everything an .xpp document holds; raises XppFormatError on any malformed input."""
    fmt, params, payload = envelope.unwrap(data)
    program, diagnostics = read_payload(payload, fmt)
    return XppDocument(program, diagnostics, _settings_from(params), params.get(SOURCE_PARAM), params)
