"""The XPP document: one self-describing Pcore object, ``Xpp::ParseResult`` (research note §5.3, option B).

Layout of the payload (after the envelope of :mod:`xpp.envelope`)::

    OBJECT_START(n + 1)
      PCORE_OBJECT_START Pcore::ObjectType(1) { name => 'Xpp::ParseResult',
          attributes => { program     => { type => Any,                      value => undef },
                          diagnostics => { type => Array[Hash[String, Any]], value => [] } } }
      program        a Puppet::AST::Program written by type name, or nil when there is no AST
      diagnostics    an array of hashes (trailing defaults dropped: no diagnostics -> not written)

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
``write_xpp(program, diagnostics=(), fmt="msgpack", *, locator=None) -> bytes``
    the whole .xpp document (envelope + payload).  ``diagnostics`` items are
    :class:`grammar.issues.Diagnostic` objects (line/pos computed from ``locator`` or ``program.locator``)
    or record dicts as above.
``read_xpp(data) -> (Program | None, list[dict])``
    diagnostics come back as record dicts (lossless); :func:`to_diagnostic` turns one into a
    :class:`grammar.issues.Diagnostic`.  Any malformed input raises :class:`xpp.pcore.XppFormatError`.
``parse_result_payload(program, diagnostics, fmt)`` / ``read_payload(payload, fmt)``: the same without
the envelope.
"""

from __future__ import annotations

from puppet_xpp.grammar import ast as _ast
from puppet_xpp.xpp import envelope as _env
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
    "XppFormatError",
    "XppWriteError",
]

TYPE_NAME = "Xpp::ParseResult"
RECORD_KEYS = ("severity", "issue_code", "message", "arguments", "file", "offset", "length", "line", "pos")
_PROGRAM = _ast.TYPES["Program"]


def _type_value() -> PType:
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


def _data(v, where: str):
    """A copy of ``v`` as Puppet Data (str keys; scalars, lists, dicts).  Other objects become strings."""
    t = type(v)
    if v is None or t in (str, int, float, bool):
        return v
    if t in (list, tuple):
        return [_data(x, where) for x in v]
    if t is dict:
        return {str(k): _data(x, where) for k, x in v.items()}
    return str(v)


def diagnostic_record(d, locator=None) -> dict:
    """The record dict of a Diagnostic (or a validated copy of a record dict)."""
    if isinstance(d, dict):
        rec = _data(d, "diagnostic")
        return rec
    code = getattr(d, "code", None)
    if code is None:
        raise XppWriteError(f"not a diagnostic: {d!r}")
    offset = d.offset
    line = pos = None
    if locator is not None and offset is not None:
        try:
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


def to_diagnostic(rec: dict):
    """A :class:`grammar.issues.Diagnostic` for a record dict (line/pos are not kept: they derive from
    the offset and the Locator)."""
    from puppet_xpp.grammar.issues import Diagnostic

    return Diagnostic(
        code=rec.get("issue_code") or "",
        message=rec.get("message") or "",
        offset=rec.get("offset"),
        length=rec.get("length") or 0,
        severity=rec.get("severity") or "error",
        args=dict(rec.get("arguments") or {}),
        file=rec.get("file") or "",
    )


def parse_result_payload(program, diagnostics=(), fmt: str = "msgpack", *, locator=None) -> bytes:
    """The Pcore payload (no envelope) of an Xpp::ParseResult."""
    if program is not None and not isinstance(program, _PROGRAM):
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
    return dumps(IncludedObject(_type_value(), values), fmt)


def write_xpp(program, diagnostics=(), fmt: str = "msgpack", *, locator=None) -> bytes:
    """The .xpp document: envelope + Xpp::ParseResult payload."""
    return _env.wrap(parse_result_payload(program, diagnostics, fmt, locator=locator), fmt)


def _check_data(v):
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


def read_payload(payload, fmt: str = "msgpack"):
    """(Program | None, diagnostics) from a payload without envelope: an Xpp::ParseResult or a bare
    Program."""
    value = loads(payload, fmt)
    if isinstance(value, _PROGRAM):
        return value, []
    if not isinstance(value, PObject) or value.type_name != TYPE_NAME:
        what = value.type_name if isinstance(value, PObject) else type(value).__name__
        raise XppFormatError(f"XPP payload is not an {TYPE_NAME} or a Program (got {what})")
    attrs = value.attrs
    if "program" not in attrs or "diagnostics" not in attrs:
        raise XppFormatError(f"{TYPE_NAME} type lacks the program/diagnostics attributes")
    program = attrs["program"]
    if program is not None and not isinstance(program, _PROGRAM):
        raise XppFormatError(f"{TYPE_NAME}.program must be a Program or undef")
    diagnostics = attrs["diagnostics"]
    if type(diagnostics) is not list or any(type(d) is not dict for d in diagnostics):
        raise XppFormatError(f"{TYPE_NAME}.diagnostics must be an array of hashes")
    _check_data(diagnostics)
    return program, diagnostics


def read_xpp(data) -> tuple:
    """(Program | None, list of diagnostic record dicts) from an .xpp document."""
    fmt, _params, payload = _env.unwrap(data)
    return read_payload(payload, fmt)
