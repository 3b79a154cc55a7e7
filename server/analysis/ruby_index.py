"""What a module's Ruby code defines, read statically with tree-sitter's Ruby grammar (Ruby is never
run: the language server must not execute a module's code, and needs no Ruby at run time).

* ``lib/puppet/functions/**/*.rb``: 4.x ``create_function`` with each ``dispatch`` and its
  ``param``/``optional_param``/``repeated_param``/``block_param``/``return_type`` (no dispatch: the
  method named like the function gives the signature, as Puppet infers it);
* ``lib/puppet/parser/functions/*.rb``: legacy 3.x ``newfunction`` (``:arity``, ``:type``, ``:doc``);
* ``lib/puppet/type/*.rb``: ``Puppet::Type.newtype`` (``newparam``/``newproperty``, namevar,
  ``newvalues``/``defaultto``, ``desc``, ``ensurable``), the attribute-defining calls found by following
  the type's code through helpers, mixins and re-openings (server/analysis/ruby_mixins.py; a type whose
  attributes cannot all be known is marked ``open_attrs``), and ``Puppet::ResourceApi.register_type``;
* ``lib/facter/*.rb``: custom fact names (``Facter.add``).

A parse error leaves the rest of the file usable (tree-sitter recovers); an unreadable file gives [].
A tree-sitter parser is made per file (it costs under a microsecond); the helper files a type follows
are parsed once per (path, size, modification time) (:func:`ruby_mixins.parsed`).
No pygls imports here.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator

from tree_sitter import Node

from puppet_xpp.server.analysis import ruby_mixins
from puppet_xpp.server.analysis.symbols import Attr, Param, Signature, Span, Sym


def kind_of_path(path: str) -> str | None:
    """Which Ruby API a file under a module's lib/ follows, from its location (None: not indexed)."""
    p = path.replace(os.sep, "/")
    if not p.endswith(".rb"):
        return None
    if "/lib/puppet/functions/" in p:
        return "ruby4"
    if "/lib/puppet/parser/functions/" in p:
        return "ruby3"
    if "/lib/puppet/type/" in p:
        return "type"
    if "/lib/facter/" in p:
        return "fact"
    return None


def helper_files(type_path: str) -> str:
    """The files a type file's attributes may come from besides itself, as ``path:size:mtime`` lines:
    every Ruby file under its module's ``lib/`` outside the API directories the index reads anyway
    (``puppet/type``, ``puppet/provider``, ``puppet/functions``, ``puppet/parser``, ``facter``) -- where
    helpers live (``puppet_x/``, ``puppet/util/``, ...) -- and under the other modules' ``lib/puppet_x/``
    (a helper shared across modules).  The index cache re-reads the type when this changes
    (server/analysis/index_cache.py's ``depends``)."""
    roots = ruby_mixins.lib_roots(type_path)
    lib = roots[0]
    skip = {os.path.join(lib, "puppet", d) for d in ("type", "provider", "functions", "parser")}
    skip.add(os.path.join(lib, "facter"))
    lines: list[str] = []
    for top in (lib, *_shared_helper_dirs(tuple(roots[1:]))):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) not in skip)
            for f in sorted(filenames):
                if f.endswith(".rb"):
                    p = os.path.join(dirpath, f)
                    try:
                        st = os.stat(p)
                    except OSError:
                        continue
                    lines.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(lines)


@functools.lru_cache(maxsize=64)
def _shared_helper_dirs(libs: tuple[str, ...]) -> tuple[str, ...]:
    """The ``lib/puppet_x`` directories among the other modules' ``libs`` (looked for once per listing
    of the module path)."""
    return tuple(d for d in (os.path.join(lib, "puppet_x") for lib in libs) if os.path.isdir(d))


def index_ruby_file(path: str, refused: list[str] | None = None) -> list[Sym]:
    """Index entries of one Ruby file ([] when unreadable or not an API file), read by the one
    source-reading rule (:func:`xpp.sources.read_bytes`: a FIFO, a device or a file over the size limit
    is skipped, why going to ``refused`` when given)."""
    from puppet_xpp.xpp.sources import read_bytes

    kind = kind_of_path(path)
    if kind is None:
        return []
    raw = read_bytes(path)
    if raw.data is None:
        if refused is not None and raw.diagnostic is not None:
            refused.append(raw.diagnostic.message)
        return []
    return index_ruby_source(raw.data, path, kind)


def index_ruby_source(data: bytes, path: str, kind: str | None = None) -> list[Sym]:
    """Index entries of Ruby source ``data`` read as the file ``path`` (``kind``: which API, else from
    the path)."""
    kind = kind or kind_of_path(path)
    try:
        root = ruby_mixins.parse(data)
    except Exception:  # never let one file stop the indexing
        return []
    r = _Reader(data, path, root)
    out: list[Sym | None] = []
    readers: dict[tuple[str, str | None], Callable[[Node], Sym | None]] = {
        ("create_function", "ruby4"): r.function4,
        ("newfunction", "ruby3"): r.function3,
        ("newtype", "type"): r.native_type,
        ("register_type", "type"): r.resource_api_type,
        ("add", "fact"): r.fact,
    }
    for call in ruby_mixins.calls(root):
        read = readers.get((ruby_mixins.method_name(call), kind))
        if read is None or (
            kind == "fact" and ruby_mixins.text(call.child_by_field_name("receiver")) != "Facter"
        ):
            continue
        try:
            out.append(read(call))
        except Exception:  # an unexpected shape costs that definition only, never the file or the index
            continue
    return [s for s in out if s is not None]


# ----------------------------------------------------------------------------------------------- tree helpers


def _comment_before(n: Node) -> str:
    """The contiguous ``#`` comment block right above `n` (YARD docs)."""
    lines = []
    prev = n.prev_named_sibling
    row = n.start_point[0]
    while prev is not None and prev.type == "comment" and prev.end_point[0] >= row - 1:
        lines.append(ruby_mixins.text(prev))
        row = prev.start_point[0]
        prev = prev.prev_named_sibling
    # a do-block's first statement: comments are children of the block, before the body
    if not lines and n.parent is not None and n.parent.type in ("body_statement", "block_body"):
        prev = n.parent.prev_named_sibling
        row = n.start_point[0]
        while prev is not None and prev.type == "comment" and prev.end_point[0] >= row - 1:
            lines.append(ruby_mixins.text(prev))
            row = prev.start_point[0]
            prev = prev.prev_named_sibling
    lines.reverse()
    out = []
    for x in lines:
        x = x[1:] if x.startswith("#") else x
        out.append(x[1:] if x.startswith(" ") else x)
    return "\n".join(out).strip()


def _dedent(text: str) -> str:
    lines = text.strip("\n").splitlines()
    ind = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[ind:] for x in lines).strip()


def _pairs(n: Node | None) -> dict[str, Node | None]:
    """key -> value node of a hash or of an argument list's trailing hash."""
    out: dict[str, Node | None] = {}
    if n is None:
        return out
    kids = n.named_children if n.type in ("hash", "argument_list") else []
    for c in kids:
        if c.type == "pair":
            k = ruby_mixins.name_of(c.child_by_field_name("key"))
            if k is not None:
                out[k] = c.child_by_field_name("value")
    return out


_LITERALS = frozenset(
    ("simple_symbol", "delimited_symbol", "string", "regex", "integer", "float", "true", "false", "nil")
)
_ENUM = re.compile(r"^\s*Enum\[(.*)\]\s*$", re.S)
_OPTIONAL = re.compile(r"^\s*Optional\[(.*)\]\s*$", re.S)


class _Reader:
    def __init__(self, data: bytes, path: str, root: Node | None = None):
        self.data = data
        self.path = path
        self.root = root
        self._heredocs: list[tuple[int, Node]] | None = None

    # -- positions and strings ----------------------------------------------------------------------

    def pos(self, node: Node) -> tuple[int, int]:
        """(line, UTF-16 column) of a node's start."""
        row, col = node.start_point
        ls = node.start_byte - col
        return row, len(self.data[ls : node.start_byte].decode("utf-8", "replace").encode("utf-16-le")) // 2

    def span(self, node: Node) -> Span:
        a = self.pos(node)
        row, col = node.end_point
        if row != node.start_point[0]:
            return a, (a[0], a[1] + 1)
        return a, (row, a[1] + len(self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")))

    def string(self, n: Node | None) -> str | None:
        """A string literal's text: plain/chained strings, heredocs (dedented), `+` concatenations."""
        if n is None:
            return None
        if n.type == "heredoc_beginning":
            return self._heredoc(n)
        if n.type == "binary" and n.child_by_field_name("operator") is not None:
            if ruby_mixins.text(n.child_by_field_name("operator")) == "+":
                a = self.string(n.child_by_field_name("left"))
                b = self.string(n.child_by_field_name("right"))
                if a is not None and b is not None:
                    return a + b
            return None
        if n.type == "parenthesized_statements" and n.named_child_count == 1:
            return self.string(n.named_children[0])
        if n.type in ("string", "chained_string"):
            return "".join(ruby_mixins.text(c) for c in _walk_strings(n))
        return ruby_mixins.name_of(n)

    def _heredoc(self, beginning: Node) -> str | None:
        """A heredoc's text: tree-sitter puts the body apart from its ``<<~TAG``, so the file's
        beginnings and bodies are paired in order (once per file)."""
        if self._heredocs is None:
            root = beginning
            while root.parent is not None:
                root = root.parent
            stack = [root]
            begs: list[Node] = []
            bodies: list[Node] = []
            while stack:
                x = stack.pop()
                if x.type == "heredoc_beginning":
                    begs.append(x)
                elif x.type == "heredoc_body":
                    bodies.append(x)
                stack.extend(reversed(x.named_children))
            begs.sort(key=lambda x: x.start_byte)
            bodies.sort(key=lambda x: x.start_byte)
            self._heredocs = list(zip([b.start_byte for b in begs], bodies))
        for start, body in self._heredocs:
            if start == beginning.start_byte:
                parts = [
                    ruby_mixins.text(c)
                    for c in body.named_children
                    if c.type in ("heredoc_content", "escape_sequence")
                ]
                return _dedent("".join(parts))
        return None

    def sym(
        self,
        kind: str,
        name: str,
        node: Node,
        doc: str = "",
        *,
        signatures: list[Signature] | None = None,
        attrs: list[Attr] | None = None,
        origin: str = "puppet",
    ) -> Sym:
        rng = self.span(node)
        return Sym(
            name,
            kind,
            self.path,
            rng,
            rng,
            doc,
            signatures=signatures or [],
            attrs=attrs or [],
            origin=origin,
        )

    # -- functions ----------------------------------------------------------------------------------

    def path_function_name(self, api: str) -> str:
        p = self.path.replace(os.sep, "/")
        marker = "/lib/puppet/functions/" if api == "ruby4" else "/lib/puppet/parser/functions/"
        rest = p.split(marker, 1)[-1]
        return rest[:-3].replace("/", "::") if rest.endswith(".rb") else rest

    def function4(self, call: Node) -> Sym | None:
        args = ruby_mixins.args(call)
        name = ruby_mixins.name_of(args[0]) if args else None
        name = name or self.path_function_name("ruby4")
        stmt = _statement_of(call)
        doc = _comment_before(stmt)
        sigs = []
        body = ruby_mixins.block_body(call)
        for st in body:
            if st.type == "call" and ruby_mixins.method_name(st) == "dispatch":
                sigs.append(self.dispatch(st))
        if not sigs:  # no dispatch: Puppet dispatches to the method named like the function
            short = name.rsplit("::", 1)[-1]
            for st in body:
                if st.type == "method" and ruby_mixins.text(st.child_by_field_name("name")) == short:
                    sigs.append(self.method_signature(st))
                    break
        pdocs = _yard_params(doc)
        for sg in sigs:
            for p in sg.params:
                if not p.doc:
                    p.doc = pdocs.get(p.name, "")
        anchor = call.child_by_field_name("method") or call
        return self.sym("function", name, anchor, doc, signatures=sigs, origin="ruby4")

    def dispatch(self, call: Node) -> Signature:
        params: list[Param] = []
        ret = ""
        pdocs = _yard_params(_comment_before(call))
        for st in ruby_mixins.block_body(call):
            if st.type == "identifier":
                continue
            if st.type != "call":
                continue
            m = ruby_mixins.method_name(st)
            a = ruby_mixins.args(st)
            if m == "return_type":
                ret = self.string(a[0]) or "" if a else ""
                continue
            kinds = {
                "param": "required",
                "required_param": "required",
                "optional_param": "optional",
                "repeated_param": "repeated",
                "optional_repeated_param": "repeated",
                "required_repeated_param": "repeated",
                "block_param": "block",
                "required_block_param": "block",
                "optional_block_param": "optional_block",
            }
            if m not in kinds:
                continue
            typ, nm = "", None
            if m.endswith("block_param"):
                if len(a) >= 2:
                    typ, nm = self.string(a[0]) or "", ruby_mixins.name_of(a[1])
                elif len(a) == 1:
                    nm = ruby_mixins.name_of(a[0])
                    if nm is not None and a[0].type == "string":  # block_param 'Callable' (no name)
                        typ, nm = nm, "block"
                typ = typ or "Callable"
                nm = nm or "block"
            elif len(a) >= 2:
                typ, nm = self.string(a[0]) or "", ruby_mixins.name_of(a[1])
            if nm is None:
                continue
            params.append(Param(nm, typ, "", pdocs.get(nm, ""), kinds[m]))
        return Signature(params, ret, call.start_point[0])

    def method_signature(self, meth: Node) -> Signature:
        params: list[Param] = []
        ps = meth.child_by_field_name("parameters")
        for p in ps.named_children if ps is not None else ():
            if p.type == "identifier":
                params.append(Param(ruby_mixins.text(p), "Any"))
            elif p.type == "optional_parameter":
                params.append(
                    Param(ruby_mixins.text(p.child_by_field_name("name")), "Any", "", "", "optional")
                )
            elif p.type == "splat_parameter":
                params.append(
                    Param(
                        ruby_mixins.text(p.child_by_field_name("name")) or "args", "Any", "", "", "repeated"
                    )
                )
            elif p.type == "block_parameter":
                params.append(
                    Param(
                        ruby_mixins.text(p.child_by_field_name("name")) or "block",
                        "Callable",
                        "",
                        "",
                        "optional_block",
                    )
                )
        return Signature(params, "", meth.start_point[0])

    def function3(self, call: Node) -> Sym | None:
        args = ruby_mixins.args(call)
        if not args:
            return None
        name = ruby_mixins.name_of(args[0]) or self.path_function_name("ruby3")
        opts = _pairs(call.child_by_field_name("arguments"))
        doc = self.string(opts.get("doc")) or _comment_before(_statement_of(call))
        arity_s = ruby_mixins.name_of(opts.get("arity")) if opts.get("arity") is not None else None
        try:
            arity = int(arity_s) if arity_s is not None else -1
        except ValueError:
            arity = -1
        rvalue = ruby_mixins.name_of(opts.get("type")) == "rvalue"
        if arity >= 0:
            params = [Param(f"arg{i + 1}", "Any") for i in range(arity)]
        else:
            params = [Param(f"arg{i + 1}", "Any") for i in range(-arity - 1)]
            params.append(Param("args", "Any", "", "", "repeated"))
        sig = Signature(params, "Any" if rvalue else "", call.start_point[0])
        anchor = call.child_by_field_name("method") or call
        return self.sym("function", name, anchor, doc, signatures=[sig], origin="ruby3")

    # -- resource types -----------------------------------------------------------------------------

    def native_type(self, call: Node) -> Sym | None:
        args = ruby_mixins.args(call)
        name = ruby_mixins.name_of(args[0]) if args else None
        if not name:
            return None
        doc = ""
        for st in ruby_mixins.block_body(call):
            if st.type == "assignment" and ruby_mixins.text(st.child_by_field_name("left")) == "@doc":
                doc = self.string(st.child_by_field_name("right")) or doc
            elif st.type == "call" and ruby_mixins.method_name(st) == "desc":
                a = ruby_mixins.args(st)
                doc = (self.string(a[0]) or doc) if a else doc
        root = self.root if self.root is not None else ruby_mixins.parse(self.data)
        code = ruby_mixins.follow_type(name, call, ruby_mixins.RubyFile(self.path, self.data, root))
        attrs: list[Attr] = []
        readers: dict[str, _Reader] = {self.path: self}
        metaparameters = _metaparameters()
        for d in code.definitions:
            if d.name in metaparameters:
                continue
            reader = readers.get(d.file.path)
            if reader is None:
                reader = readers[d.file.path] = _Reader(d.file.data, d.file.path, d.file.root)
            at = reader.definition(d)
            if d.file.path != self.path:
                at.line = -1  # defined in another file: no position in the type's
            known = next((i for i, x in enumerate(attrs) if x.name == at.name), None)
            if known is None:
                attrs.append(at)
            else:  # a re-definition replaces the attribute (Puppet keeps the last class of that name)
                attrs[known] = at
        for x in attrs:  # Puppet's key attributes: the namevars and a parameter called name, always
            if x.name == "name" and x.kind == "param":
                x.namevar = True
        if not any(x.name == "provider" for x in attrs) and self._has_providers(name):
            attrs.append(Attr("provider", "param"))
        anchor = call.child_by_field_name("method") or call
        sym = self.sym("resource_type", name, anchor, doc, attrs=attrs, origin="native")
        sym.open_attrs = code.open
        return sym

    def definition(self, d: ruby_mixins.Definition) -> Attr:
        """The attribute a ``newparam``/``newproperty``/``newcheck``/``ensurable`` call (in this
        reader's file) defines."""
        line = d.node.start_point[0]
        if d.method == "ensurable":
            if d.node.type == "identifier":
                return Attr("ensure", "property", values=("present", "absent"), line=line)
            vals = self._values(ruby_mixins.block_body(d.node)) or ("present", "absent")
            return Attr("ensure", "property", values=vals, line=line)
        return self._attr(d.node, d.name, "property" if d.method == "newproperty" else "param")

    def _has_providers(self, name: str) -> bool:
        """Puppet adds a `provider` parameter to a type that has providers (lib/puppet/provider/<type>/)."""
        d = os.path.join(os.path.dirname(os.path.dirname(self.path)), "provider", name)
        try:
            return any(f.endswith(".rb") for f in os.listdir(d))
        except OSError:
            return False

    def _attr(self, call: Node, name: str, kind: str) -> Attr:
        opts = _pairs(call.child_by_field_name("arguments"))
        namevar = (
            ruby_mixins.name_of(opts.get("namevar")) == "true" if opts.get("namevar") is not None else False
        )
        at = Attr(name, kind, namevar, line=call.start_point[0])
        parent = opts.get("parent")
        if parent is not None and ruby_mixins.text(parent).endswith("Parameter::Boolean"):
            at.values = ("true", "false", "yes", "no")  # Puppet::Parameter::Boolean's values
        body = ruby_mixins.block_body(call)
        for st in body:
            if st.type == "identifier" and ruby_mixins.text(st) == "isnamevar":
                at.namevar = True
            elif st.type == "call":
                m = ruby_mixins.method_name(st)
                a = ruby_mixins.args(st)
                if m == "desc" and a:
                    at.doc = self.string(a[0]) or ""
                elif m == "isnamevar":
                    at.namevar = True
                elif m == "defaultto" and a:
                    at.default = _value_text(a[0])
        at.values = self._values(body) or at.values
        if kind == "property":
            at.namevar = False  # only parameters are key attributes
        return at

    def _values(self, body: list[Node]) -> tuple[str, ...]:
        vals: list[str] = []
        for st in body:
            if st.type == "call" and ruby_mixins.method_name(st) in ("newvalues", "newvalue"):
                a = ruby_mixins.args(st)
                if ruby_mixins.method_name(st) == "newvalue":
                    a = a[:1]
                for v in a:
                    if v.type not in _LITERALS:
                        continue  # computed (a splat, a call): unknown without running Ruby
                    t = _value_text(v)
                    if t not in vals:
                        vals.append(t)
        return tuple(vals)

    def resource_api_type(self, call: Node) -> Sym | None:
        opts = _pairs(call.child_by_field_name("arguments"))
        if not opts:
            args = ruby_mixins.args(call)
            if args and args[0].type == "hash":
                opts = _pairs(args[0])
        name = self.string(opts.get("name"))
        if not name:
            return None
        doc = self.string(opts.get("docs")) or self.string(opts.get("desc")) or ""
        attrs: list[Attr] = []
        table = opts.get("attributes")
        # attributes computed (a constant, a merge, a `**splat` or a computed key): the set is open
        computed = table is None or table.type != "hash"
        for c in table.named_children if table is not None and not computed else ():
            if c.type == "comment":
                continue
            if c.type != "pair" or ruby_mixins.name_of(c.child_by_field_name("key")) is None:
                computed = True
        for k, v in _pairs(table).items():
            if v is None:  # (error recovery) unreadable: the type is left out, as for any bad shape
                return None
            o = _pairs(v)
            typ = self.string(o.get("type")) or ""
            behaviour = ruby_mixins.name_of(o.get("behaviour")) or ""
            inner = _OPTIONAL.sub(r"\1", typ)  # the Resource API reads Optional[T]'s values as T's
            m = _ENUM.match(inner)
            vals = tuple(x.strip().strip("'\"") for x in m.group(1).split(",")) if m else ()
            if not vals and inner.strip() == "Boolean":
                vals = ("true", "false")
            d = o.get("default")
            attrs.append(
                Attr(
                    k,
                    "param"
                    if behaviour in ("namevar", "parameter", "init_only", "read_only")
                    else "property",
                    behaviour == "namevar",
                    vals,
                    _value_text(d) if d is not None else "",
                    typ,
                    self.string(o.get("desc")) or "",
                    v.start_point[0],
                )
            )
        anchor = call.child_by_field_name("method") or call
        sym = self.sym("resource_type", name, anchor, doc, attrs=attrs, origin="resource_api")
        sym.open_attrs = computed
        return sym

    def fact(self, call: Node) -> Sym | None:
        args = ruby_mixins.args(call)
        name = ruby_mixins.name_of(args[0]) if args else None
        if not name:
            return None
        return self.sym("fact", name, call, "")


def _walk_strings(n: Node) -> Iterator[Node]:
    for c in n.named_children:
        if c.type in ("string_content", "escape_sequence"):
            yield c
        elif c.type == "string":
            yield from _walk_strings(c)


def _value_text(n: Node) -> str:
    """An allowed or default value as Puppet shows it: symbols and strings bare, nil as '', regular
    expressions (/…/ or %r{…}) as /source/ with their flags."""
    if n.type == "regex":
        t = ruby_mixins.text(n)
        body = "".join(
            ruby_mixins.text(c) for c in n.named_children if c.type in ("string_content", "escape_sequence")
        )
        flags = t[len(t.rstrip("imxounse")) :]
        return f"/{body}/{flags}"
    if n.type == "nil":
        return ""
    v = ruby_mixins.name_of(n)
    return v if v is not None else ruby_mixins.text(n)


def _metaparameters() -> frozenset[str]:
    from puppet_xpp.server.analysis.builtins import metaparameters

    return frozenset(metaparameters())


def _statement_of(call: Node) -> Node:
    """The statement holding `call` (YARD comments sit above it, e.g. ``Puppet::Functions.create_function``)."""
    n = call
    while n.parent is not None and n.parent.type not in ("program", "body_statement", "block_body"):
        n = n.parent
    return n


def _yard_params(doc: str) -> dict[str, str]:
    """@param NAME text (YARD), continuation lines included."""
    out: dict[str, str] = {}
    cur = None
    for line in doc.splitlines():
        m = re.match(r"\s*@param\s+(?:\[[^\]]*\]\s*)?(\w+)\s*(?:\[[^\]]*\]\s*)?(.*)", line)
        if m:
            cur = m.group(1)
            out[cur] = m.group(2).strip()
        elif cur and line.strip() and not line.strip().startswith("@"):
            out[cur] = (out[cur] + " " + line.strip()).strip()
        else:
            cur = None
    return out
