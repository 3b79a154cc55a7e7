"""A Puppetfile read as r10k reads it, without running Ruby (no pygls here).

r10k evaluates a Puppetfile as Ruby in its DSL object (``R10K::ModuleLoader::Puppetfile::DSL``): the
declarations are ``mod(name, args = nil)``, ``forge(location)``, ``moduledir(location)`` and
(r10k 5.0+, a no-op) ``exclusion(name)``; any other method ends the evaluation with "unrecognized
declaration".  ``mod`` picks the first module type whose rule takes its arguments (``R10K::Module.register`` order: Git if ``:git``
is given or ``:type`` is git, then Svn, Local (``:local`` true), Forge (a version instead of a hash, or
``:type`` forge), Tarball); each type takes its own option keys (``setopts`` in
``lib/r10k/module/<type>.rb``: an unknown one is a warning, for tarballs an error).  The loader then
refuses two modules of one name (``validate_no_duplicate_names``).

:func:`parse` reads the text with tree-sitter's Ruby grammar (as server/analysis/ruby_index.py does) and
applies those rules statically: every problem r10k would stop at or warn about becomes a
:class:`Problem` with its place, not only the first (r10k stops at the first error).  Arguments that
are not literals (a variable, an interpolated string) are taken as r10k would take any value: nothing
is said about them.  Positions are UTF-8 byte offsets with their 0-based lines (:class:`Extent`); the
language server converts them (server/analysis/filekinds.py ``FileText``).
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field

from tree_sitter import Language, Node, Parser

ERROR, WARNING = "error", "warning"

# the DSL's declarations (name -> the number of arguments it takes: (least, most))
DECLARATIONS = {"mod": (1, 2), "forge": (1, 1), "moduledir": (1, 1), "exclusion": (1, 1)}
# Kernel methods a Puppetfile may call (Ruby finds them before the DSL's method_missing)
KERNEL_METHODS = frozenset(
    "puts print printf putc p pp warn raise fail require require_relative load format sprintf lambda proc "
    "loop abort exit exit! sleep rand srand Integer Float String Array Hash Rational Complex catch throw "
    "binding block_given? caller caller_locations freeze frozen? instance_variable_get "
    "instance_variable_set instance_variables instance_eval instance_exec __dir__ __method__ "
    "local_variables global_variables at_exit autoload eval gets readline readlines select system exec "
    "spawn open test trap send public_send respond_to? method methods class object_id nil? is_a? "
    "kind_of? instance_of? tap then yield_self dup clone inspect to_s hash display itself "
    "define_singleton_method singleton_class extend".split()
)

# the module types in r10k's registration order, with their ``setopts`` keys (lib/r10k/module/*.rb):
# key -> the instance variable it sets (two keys setting one variable conflict: a warning)
TYPES = ("git", "svn", "local", "forge", "tarball")
OPTIONS: dict[str, dict[str, str]] = {
    "forge": {"version": "expected_version", "source": "", "type": ""},
    "git": {
        "version": "desired_ref",
        "source": "remote",
        "type": "",
        "branch": "desired_ref",
        "tag": "desired_ref",
        "commit": "desired_ref",
        "ref": "desired_ref",
        "git": "remote",
        "default_branch": "default_branch",
        "default_branch_override": "default_override_ref",
    },
    "svn": {
        "source": "url",
        "version": "expected_revision",
        "type": "",
        "svn": "url",
        "rev": "expected_revision",
        "revision": "expected_revision",
        "username": "username",
        "password": "password",
    },
    "tarball": {
        "source": "source",
        "version": "checksum",
        "type": "",
        "overrides": "overrides",
        "checksum": "checksum",
    },
}
# keys taken before the type's own (the loader's ``install_path``, R10K::Module::Base's ``exclude_spec``
# and ``overrides``); R10K::Module::Local takes any key (it reads none)
COMMON_OPTIONS = ("install_path", "exclude_spec", "overrides")
# the class names r10k's messages use
CLASS_NAMES = {t: f"R10K::Module::{t.capitalize()}" for t in TYPES}

# what each option key means (completion and hover)
OPTION_DOCS: dict[str, str] = {
    "git": "URL of the Git repository to clone the module from",
    "ref": "Git ref to check out: a branch, tag or commit (`:control_branch`: the environment's branch)",
    "tag": "Git tag to check out",
    "branch": "Git branch to track (`:control_branch`: the environment's branch)",
    "commit": "Git commit to check out",
    "default_branch": "Git branch to use when `:branch` is `:control_branch` and the environment has no such branch",
    "default_branch_override": "Git branch that overrides `:default_branch` (normally set by r10k's deploy options)",
    "svn": "URL of the Subversion repository to check the module out from",
    "rev": "Subversion revision to check out",
    "revision": "Subversion revision to check out",
    "username": "Subversion user name",
    "password": "Subversion password",
    "local": "`true`: a module kept in the module directory by hand; r10k neither installs nor purges it",
    "type": "Module type: `forge`, `git`, `svn`, `local` or `tarball`",
    "version": "Version: the Forge release, the Git ref, the Subversion revision or the tarball's checksum",
    "source": "Where the module comes from (Git or Subversion URL, tarball URL)",
    "checksum": "SHA-256 checksum of the tarball",
    "install_path": "Directory to install the module into, relative to the environment (default: the moduledir)",
    "exclude_spec": "`true`: delete the module's spec directory after installing it",
    "overrides": "r10k's own settings for this module (not normally written in a Puppetfile)",
}

# a Forge release version (SemanticPuppet::Version, which PuppetForge::Util.version_valid? asks)
SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?"
    r"(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?\Z"
)
# R10K::Module::Base#parse_title (after PuppetForge::V3.normalize_name turned '/' into '-'); Ruby's \w
# is ASCII here
BARE_NAME = re.compile(r"([A-Za-z0-9_]+)\Z")
OWNER_NAME = re.compile(r"([A-Za-z0-9_]+)[-/]([A-Za-z0-9_]+)\Z")


@dataclass(frozen=True)
class Extent:
    """Where something is: UTF-8 byte offsets [start, end) and the 0-based lines of both ends."""

    start: int
    end: int
    line: int
    end_line: int

    def contains(self, offset: int) -> bool:
        return self.start <= offset <= self.end


@dataclass(frozen=True)
class Value:
    """An argument as written.  ``value``: a string's or a symbol's text (``:latest`` -> ``latest``),
    True/False for ``true``/``false``, None for ``nil`` or anything that is not a literal
    (``literal`` False: a variable, an interpolation, a call -- its value is not known here)."""

    text: str
    value: str | bool | None
    literal: bool
    symbol: bool
    extent: Extent

    @property
    def string(self) -> str | None:
        """The value when it is a string or a symbol."""
        return self.value if isinstance(self.value, str) else None


@dataclass(frozen=True)
class ModuleOption:
    key: str  # without the colon (``:git`` and ``git:`` are both ``git``)
    value: Value
    key_extent: Extent


@dataclass
class PuppetfileModule:
    """One ``mod`` declaration."""

    name: str  # as written: ``puppetlabs/stdlib``, ``puppetlabs-stdlib``, ``stdlib``
    owner: str | None  # ``puppetlabs`` (None: no owner written)
    short_name: str  # the module's name: its directory under the moduledir, what duplicates compare
    kind: str  # forge | git | svn | local | tarball, or "" when no type takes the arguments
    version: str | None  # the Forge version (``latest`` for :latest), Git ref/tag/branch/commit, revision
    options: dict[str, ModuleOption]  # the hash's options by key (a Forge version alone: none)
    extent: Extent  # the whole declaration
    name_extent: Extent
    version_value: Value | None = None  # the second argument when it is not a hash

    @property
    def install_path(self) -> str | None:
        opt = self.options.get("install_path")
        return opt.value.string if opt is not None else None


@dataclass(frozen=True)
class Problem:
    extent: Extent
    severity: str  # error (r10k stops there) | warning (r10k goes on and logs it)
    code: str
    message: str


@dataclass
class Puppetfile:
    modules: list[PuppetfileModule] = field(default_factory=list)
    forge: str | None = None  # the ``forge`` declaration's URL (r10k ignores it unless its settings allow)
    moduledir: str | None = None  # as written (relative: to the Puppetfile's directory); None: ``modules``
    problems: list[Problem] = field(default_factory=list)
    # the calls of the DSL's declarations (their name's extent), for hover on ``forge``/``moduledir``
    declarations: list[tuple[str, Extent, Extent]] = field(default_factory=list)

    def module_at(self, offset: int) -> PuppetfileModule | None:
        """The ``mod`` declaration at a byte offset (the innermost, when one was written inside another)."""
        found = [m for m in self.modules if m.extent.contains(offset)]
        return min(found, key=lambda m: m.extent.end - m.extent.start) if found else None

    def moduledir_path(self, basedir: str) -> str:
        """The directory r10k installs modules into, for a Puppetfile in ``basedir``."""
        return resolve_path(basedir, self.moduledir or "modules")

    def install_dir(self, module: PuppetfileModule, basedir: str) -> str:
        """The directory r10k installs ``module`` as (its install_path or the moduledir, then its name)."""
        where = module.install_path
        base = resolve_path(basedir, where) if where else self.moduledir_path(basedir)
        return os.path.join(base, module.short_name)


def resolve_path(base: str, path: str) -> str:
    """r10k's ``resolve_path``: an absolute path as it is, a relative one under ``base``; cleaned."""
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))


# ----------------------------------------------------------------------------------------------- reading


@functools.cache
def ruby_language() -> Language:
    import tree_sitter_ruby

    return Language(tree_sitter_ruby.language())


def parse(text: str, basedir: str | None = None) -> Puppetfile:
    """The Puppetfile ``text`` (in the directory ``basedir`` when known: ``install_path`` must stay
    inside it).  Never raises for bad input: what r10k would reject is in ``problems``."""
    data = text.encode("utf-8", "surrogateescape")
    tree = Parser(ruby_language()).parse(data)
    reader = _Reader(data, basedir)
    reader.read(tree.root_node)
    return reader.out


def extent(node: Node) -> Extent:
    return Extent(node.start_byte, node.end_byte, node.start_point[0], node.end_point[0])


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "surrogateescape") if node is not None and node.text is not None else ""


ESCAPES = {"n": "\n", "t": "\t", "s": " ", "r": "\r", "0": "\0", "e": "\x1b", "a": "\a", "b": "\b"}


def value_of(node: Node) -> Value:
    """An argument's :class:`Value`."""
    ext = extent(node)
    text = node_text(node)
    kind = node.type
    if kind == "string":
        parts = []
        single = text.startswith("'") or text.startswith("%q")
        for c in node.named_children:
            if c.type == "string_content":
                raw = node_text(c)
                parts.append(raw.replace("\\\\", "\\").replace("\\'", "'") if single else raw)
            elif c.type == "escape_sequence":
                esc = node_text(c)[1:]
                parts.append(ESCAPES.get(esc, esc))
            else:  # an interpolation: not known here
                return Value(text, None, False, False, ext)
        return Value(text, "".join(parts), True, False, ext)
    if kind == "simple_symbol":
        return Value(text, text[1:], True, True, ext)
    if kind == "hash_key_symbol":
        return Value(text, text, True, True, ext)
    if kind == "delimited_symbol":
        inner = [c for c in node.named_children if c.type != "string_content"]
        if inner:
            return Value(text, None, False, True, ext)
        return Value(text, "".join(node_text(c) for c in node.named_children), True, True, ext)
    if kind in ("true", "false"):
        return Value(text, kind == "true", True, False, ext)
    if kind == "nil":
        return Value(text, None, True, False, ext)
    if kind in ("integer", "float"):
        return Value(text, text, True, False, ext)
    return Value(text, None, False, False, ext)


STRING_KEY = "\0"  # before an option's key written as a string (``'git' =>``): r10k never reads it


def string_key_hint(key: str) -> str:
    return f"; '{key}' is a string: r10k reads options by symbol (:{key} => or {key}:)"


def parenthesized(call: Node) -> bool:
    """The call's arguments are in parentheses (``mod('x')``)."""
    args = call.child_by_field_name("arguments")
    return args is not None and node_text(args).startswith("(")


def command_call(node: Node) -> bool:
    """A call with arguments and without parentheses (``mod 'x'``): Ruby's command call."""
    return (
        node.type == "call" and node.child_by_field_name("arguments") is not None and not parenthesized(node)
    )


# where Ruby takes a call without parentheses (a command call): a statement, an assignment's value, a
# modifier's, ``and``/``or``/``not``, ``return``/``break``/``next``; anywhere else (an argument, an array
# element, an operand) it is a syntax error tree-sitter does not report
STATEMENT_PARENTS = frozenset(
    "program then else ensure begin body_statement block_body do parenthesized_statements interpolation "
    "assignment operator_assignment if_modifier unless_modifier while_modifier until_modifier "
    "rescue_modifier return break next".split()
)


def command_position(node: Node) -> bool:
    parent = node.parent
    if parent is None or parent.type in STATEMENT_PARENTS:
        return True
    operator = node_text(parent.child_by_field_name("operator"))
    return (parent.type == "binary" and operator in ("and", "or")) or (
        parent.type == "unary" and operator == "not"
    )


# the fields and nodes where an identifier names no method called: a call's method (read with the
# call), a definition's name, a pattern's or a key's binding, a parameter, an assignment's target
NOT_CALLED_FIELDS = ("method", "name", "pattern", "key")
BINDING_PARENTS = frozenset(
    "left_assignment_list destructured_left_assignment rest_assignment exception_variable "
    "hash_pattern array_pattern find_pattern keyword_pattern".split()
)


def method_call(node: Node) -> bool:
    """The identifier is evaluated as a method call when no local variable of that name exists (Ruby's
    vcall: ``foo``, ``foo.bar``'s ``foo``, an argument ``x``): the caller checks the variables."""
    parent = node.parent
    if (
        parent is None
        or parent.type == "ERROR"
        or parent.type in BINDING_PARENTS
        or "parameters" in parent.type
    ):
        return False
    if any(parent.child_by_field_name(f) == node for f in NOT_CALLED_FIELDS):
        return parent.type == "pair" and parent.child_by_field_name("key") == node  # ``ref => x``: a call

    return not (
        parent.type in ("assignment", "operator_assignment") and parent.child_by_field_name("left") == node
    )


def key_of(pair: Node) -> tuple[str, bool] | None:
    """A hash pair's key and whether it is a symbol (r10k looks options up by symbol: a string key
    ``'git' =>`` is no option), or None when the key is not a literal."""
    key = pair.child_by_field_name("key")
    if key is None:
        return None
    value = value_of(key)
    if not value.literal or not isinstance(value.value, str):
        return None
    # ``"ref": x`` is a symbol key too (the colon after a string)
    colon = any(c.type == ":" for c in pair.children if not c.is_named)
    return value.value, value.symbol or colon


class _Reader:
    """One reading of a Puppetfile's tree (its state is the result)."""

    def __init__(self, data: bytes, basedir: str | None) -> None:
        self.data = data
        self.basedir = basedir
        self.out = Puppetfile()
        self.assigned: set[str] = set()
        self.defined: set[str] = set()

    def problem(self, node: Node | Extent, severity: str, code: str, message: str) -> None:
        ext = node if isinstance(node, Extent) else extent(node)
        self.out.problems.append(Problem(ext, severity, code, message))

    def read(self, root: Node) -> None:
        self.names(root)
        self.syntax(root)
        self.statements(root)
        self.duplicates()
        self.out.problems.sort(key=lambda p: (p.extent.start, p.extent.end))

    def names(self, root: Node) -> None:
        """Local variables assigned and methods defined anywhere (not undefined declarations)."""
        stack = [root]
        while stack:
            n = stack.pop()
            if n.type in ("assignment", "operator_assignment"):
                left = n.child_by_field_name("left")
                targets = [] if left is None else [left] if left.type == "identifier" else left.named_children
                self.assigned.update(node_text(c) for c in targets if c.type == "identifier")
            elif n.type in ("method", "singleton_method"):
                self.defined.add(node_text(n.child_by_field_name("name")))
            elif (
                n.type == "identifier"
                and n.parent is not None
                and (
                    "parameters" in n.parent.type
                    or n.parent.type in BINDING_PARENTS
                    or n.parent.type == "for"
                )
            ):
                self.assigned.add(node_text(n))
            stack.extend(n.named_children)

    def syntax(self, root: Node) -> None:
        """Ruby's syntax errors: where tree-sitter could not read the text (each outermost error)."""
        if not root.has_error:
            return
        stack = [root]
        while stack:
            n = stack.pop()
            if n.is_missing:
                self.problem(n, ERROR, "PUPPETFILE_SYNTAX_ERROR", f"syntax error: missing '{n.type}'")
                continue
            if n.type == "ERROR":
                first = n.children[0] if n.children else n
                what = node_text(first).splitlines()[0][:40] if node_text(first) else "end of file"
                self.problem(
                    n, ERROR, "PUPPETFILE_SYNTAX_ERROR", f"syntax error: Ruby cannot read this (at '{what}')"
                )
                continue
            if n.has_error:
                stack.extend(reversed(n.children))

    def statements(self, root: Node) -> None:
        """Every declaration and every method called, wherever it is (in a condition, a loop, an
        argument...), outside syntax errors."""
        stack = [root]
        while stack:
            n = stack.pop()
            if n.type == "ERROR":
                continue
            if n.type == "call" and command_call(n) and not command_position(n):
                self.problem(
                    n,
                    ERROR,
                    "PUPPETFILE_SYNTAX_ERROR",
                    "syntax error: a call without parentheses where Ruby takes none "
                    "(a comma ending the line before?)",
                )
            elif n.type == "call" and n.child_by_field_name("receiver") is None:
                self.call(n)
            elif n.type == "identifier" and method_call(n):
                self.unknown(n, node_text(n))
            elif n.type == "match_pattern" and value_of(n.child_by_field_name("value") or n).symbol:
                self.pattern_match(n)
            stack.extend(reversed(n.named_children))

    def pattern_match(self, n: Node) -> None:
        """``:tag => 'x'`` on a line of its own (a comma missing before it): Ruby 3's rightward pattern
        match of the symbol, which fails (NoMatchingPatternError, with Ruby's message when the pattern
        is a literal)."""
        value = value_of(n.child_by_field_name("value") or n)
        pattern = value_of(n.child_by_field_name("pattern") or n)
        why = ""
        if pattern.literal and isinstance(pattern.value, str):
            shown = f":{pattern.value}" if pattern.symbol else json.dumps(pattern.value)
            why = f" ({value.text}: {shown} === {value.text} does not return true)"
        self.problem(
            n,
            ERROR,
            "PUPPETFILE_PATTERN_MATCH",
            f"'{node_text(n)}' on its own is no option: Ruby matches it as a pattern and fails{why}; "
            "a comma missing at the end of the line before?",
        )

    def unknown(self, node: Node, name: str) -> None:
        """A method no declaration, Kernel or this file defines: r10k's method_missing (a declaration
        called without arguments: the wrong number of them)."""
        if name in self.assigned or name in self.defined:
            return
        if name in DECLARATIONS:
            self.arity(node, name, 0)
            return
        if name in KERNEL_METHODS:
            return
        self.problem(node, ERROR, "PUPPETFILE_UNKNOWN_DECLARATION", f"unrecognized declaration '{name}'")

    def arity(self, node: Node, name: str, given: int) -> bool:
        """Whether the declaration ``name`` takes ``given`` arguments (else Ruby's ArgumentError)."""
        least, most = DECLARATIONS[name]
        if least <= given <= most:
            return True
        expected = f"{least}..{most}" if least != most else str(least)
        self.problem(
            node,
            ERROR,
            "PUPPETFILE_WRONG_ARGUMENTS",
            f"wrong number of arguments (given {given}, expected {expected}) in '{name}'",
        )
        return False

    def call(self, n: Node) -> None:
        method = n.child_by_field_name("method")
        name = node_text(method)
        if name not in DECLARATIONS:
            self.unknown(method if method is not None else n, name)
            return
        if n.has_error:
            return  # a syntax error inside (said once, where it is)
        args_node = n.child_by_field_name("arguments")
        args = [a for a in args_node.named_children if a.type != "comment"] if args_node is not None else []
        self.out.declarations.append((name, extent(method if method is not None else n), extent(n)))
        if any(a.type in ("splat_argument", "hash_splat_argument", "block_argument") for a in args):
            return  # how many arguments a splat passes is not known here
        positional = [a for a in args if a.type != "pair"]
        pairs = [a for a in args if a.type == "pair"]
        if pairs and positional and positional[-1].start_byte > pairs[0].start_byte:
            late = next(a for a in positional if a.start_byte > pairs[0].start_byte)
            hint = " (a comma ending the line before?)" if late.type == "call" else ""
            self.problem(
                late, ERROR, "PUPPETFILE_SYNTAX_ERROR", f"syntax error: an argument after the options{hint}"
            )
            return
        if not self.arity(n, name, len(positional) + (1 if pairs else 0)):
            return
        if name == "mod":
            self.mod(n, positional, pairs)
        elif name in ("forge", "moduledir"):
            value = value_of(positional[0])
            if value.literal and not isinstance(value.value, str):
                self.problem(positional[0], ERROR, "PUPPETFILE_BAD_ARGUMENT", f"'{name}' takes a string")
            elif name == "forge":
                self.out.forge = value.string
            else:
                self.out.moduledir = value.string

    def mod(self, n: Node, positional: list[Node], pairs: list[Node]) -> None:
        if not positional:  # ``mod :git => ...``: the hash is the name
            self.problem(
                n, ERROR, "PUPPETFILE_MODULE_NAME", "a module's name is a string ('owner/name' or 'name')"
            )
            return
        name_node = positional[0]
        name_value = value_of(name_node)
        if not name_value.literal:
            return  # a name computed at run time: nothing known of this module
        if not isinstance(name_value.value, str) or name_value.symbol:
            self.problem(
                name_node,
                ERROR,
                "PUPPETFILE_MODULE_NAME",
                "a module's name is a string ('owner/name' or 'name')",
            )
            return
        title = name_value.value
        options: dict[str, ModuleOption] = {}
        version_value: Value | None = None
        hash_nodes = pairs
        if len(positional) == 2 and positional[1].type == "hash":
            hash_nodes = [c for c in positional[1].named_children if c.type == "pair"]
            if any(c.type not in ("pair", "comment") for c in positional[1].named_children):
                return  # a splat in the hash: its options are not known here
        elif len(positional) == 2:
            version_value = value_of(positional[1])
        for pair in hash_nodes:
            key = key_of(pair)
            value_node = pair.child_by_field_name("value")
            if key is None or value_node is None:
                return  # a key computed at run time: r10k's choice of type is not known here
            key_name, symbol = key
            if not symbol:  # a string key: r10k reads options by symbol (said where that matters)
                key_name = STRING_KEY + key_name  # never one of r10k's keys
            options[key_name] = ModuleOption(
                key_name, value_of(value_node), extent(pair.child_by_field_name("key") or pair)
            )
        has_hash = bool(pairs) or (len(positional) == 2 and version_value is None)
        written = "{" + ", ".join(node_text(pair) for pair in hash_nodes) + "}"
        kind = self.kind(title, options, has_hash, n, written)
        owner, short = self.title(title, name_node, kind)
        module = PuppetfileModule(
            title, owner, short, kind, None, options, extent(n), extent(name_node), version_value
        )
        module.version = version_of(module)
        self.out.modules.append(module)
        if kind:
            self.check_options(module)

    def kind(
        self, title: str, options: dict[str, ModuleOption], has_hash: bool, n: Node, written: str
    ) -> str:
        """The module type r10k picks (R10K::Module.with_implementation), "" when none takes these
        arguments (an error) or the choice depends on a value not known here."""
        if not has_hash:
            return "forge"  # a version (or nothing): the DSL makes it {type: 'forge', version: ...}
        type_option = options.get("type")
        type_name: str | None = None
        if type_option is not None:
            if not type_option.value.literal:
                return ""
            type_name = str(type_option.value.value) if type_option.value.value is not None else ""
        local = options.get("local")
        for candidate in TYPES:
            if candidate in ("git", "svn") and candidate in options:
                return candidate
            if candidate == "local" and local is not None:
                if not local.value.literal:
                    return ""
                if local.value.value not in (None, False):
                    return "local"
            if type_name == candidate:
                return candidate
        self.problem(
            n,
            ERROR,
            "PUPPETFILE_NO_MODULE_TYPE",
            f"Module {title} with args {written} doesn't have an implementation. (Are you using the right "
            "arguments?) A module takes :git, :svn, :local or a :type (forge, git, svn, local, tarball)"
            + "".join(
                string_key_hint(k.removeprefix(STRING_KEY)) for k in options if k.startswith(STRING_KEY)
            ),
        )
        return ""

    def title(self, title: str, node: Node, kind: str) -> tuple[str | None, str]:
        """(owner, name) of a module's title, with R10K::Module::Base's (and Forge's) rule."""
        match = OWNER_NAME.match(title)
        if match is not None:
            return match.group(1), match.group(2)
        bare = BARE_NAME.match(title)
        if bare is not None and kind != "forge":
            return None, title
        if kind == "forge":
            message = f"Forge module names must match 'owner/modulename', instead got {title}"
        else:
            message = f"Module name ({title}) must match either 'modulename' or 'owner/modulename'"
        self.problem(node, ERROR, "PUPPETFILE_MODULE_NAME", message)
        short = re.split(r"[-/]", title)[-1]
        return None, short or title

    def check_options(self, module: PuppetfileModule) -> None:
        kind = module.kind
        version = module.version_value
        if version is None and kind == "forge":
            opt = module.options.get("version")
            version = opt.value if opt is not None else None
        if kind == "forge" and version is not None and version.literal:
            value = version.value
            ok = (
                value is None
                or (version.symbol and value == "latest")
                or (isinstance(value, str) and not version.symbol and SEMVER.match(value) is not None)
            )
            if not ok:
                shown = value if isinstance(value, str) else version.text
                self.problem(
                    version.extent,
                    ERROR,
                    "PUPPETFILE_FORGE_VERSION",
                    f"Module version {shown} is not a valid Forge module version",
                )
        install = module.options.get("install_path")
        if install is not None and self.basedir is not None and install.value.string is not None:
            where = resolve_path(self.basedir, install.value.string)
            base = os.path.normpath(self.basedir)
            if not where.startswith(base):  # r10k's test: the path starts with the directory
                self.problem(
                    install.value.extent,
                    ERROR,
                    "PUPPETFILE_INSTALL_PATH",
                    f"Puppetfile cannot manage content '{module.name}' outside of containing environment: "
                    f"{where} is not within {base}",
                )
        if kind == "git":
            remotes = [module.options[k].value for k in ("git", "source") if k in module.options]
            if all(v.literal and v.value is None for v in remotes):  # none given, or nil
                self.problem(
                    module.name_extent,
                    ERROR,
                    "PUPPETFILE_NO_REPOSITORY",
                    f"Git module {module.name} has no repository (:git => URL): r10k fails on it "
                    "(its cache is named after the URL)",
                )
        if kind == "local":
            return  # R10K::Module::Local reads no option
        allowed = OPTIONS[kind]
        seen: dict[str, str] = {}
        for key, option in module.options.items():
            if key in COMMON_OPTIONS and key not in allowed:
                continue
            if key not in allowed:
                shown = key.removeprefix(STRING_KEY)
                hint = string_key_hint(shown) if key.startswith(STRING_KEY) else ""
                self.problem(
                    option.key_extent,
                    ERROR if kind == "tarball" else WARNING,
                    "PUPPETFILE_UNKNOWN_OPTION",
                    f"{CLASS_NAMES[kind]} cannot handle option '{shown}'{hint}",
                )
                continue
            var = allowed[key]
            if not var:
                continue
            if var in seen:
                self.problem(
                    option.key_extent,
                    WARNING,
                    "PUPPETFILE_OPTION_CONFLICT",
                    f"{CLASS_NAMES[kind]} parameters '{seen[var]}' and '{key}' conflict. "
                    "Specify one or the other, but not both",
                )
            seen[var] = key

    def duplicates(self) -> None:
        """The loader's rule (validate_no_duplicate_names): one module per name, whatever its owner."""
        first: dict[str, PuppetfileModule] = {}
        for module in self.out.modules:
            earlier = first.setdefault(module.short_name, module)
            if earlier is module:
                continue
            self.problem(
                module.name_extent,
                ERROR,
                "PUPPETFILE_DUPLICATE_MODULE",
                "Puppetfiles cannot contain duplicate module names. Remove the duplicates of the following "
                f"modules: {module.short_name} (first declared on line {earlier.extent.line + 1})",
            )


def version_of(module: PuppetfileModule) -> str | None:
    """What the declaration pins: the Forge version, the Git ref, the Subversion revision, the checksum."""
    if module.version_value is not None:
        return module.version_value.string
    keys = {
        "forge": ("version",),
        "git": ("ref", "tag", "commit", "branch", "version"),
        "svn": ("rev", "revision", "version"),
        "tarball": ("version", "checksum"),
    }.get(module.kind, ())
    for key in keys:
        option = module.options.get(key)
        if option is not None:
            return option.value.string if option.value.literal else option.value.text
    return None
