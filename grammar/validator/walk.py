"""The checker's walk: settings, reporting, and the one pre-order walk in Puppet's containment order that
calls each node's check (``check_<Class>`` of its nearest model class that has one, resolved once per
checker class).  ``validate`` walks a whole program (recursively, in C when grammar/_accel.c is built;
again without recursion when the model is nested deeper than Python's recursion limit); ``validate_part`` walks a part for the incremental
parser, stopping at the nodes it keeps.  ``self.path`` holds the ancestors of the node being checked.
"""

from __future__ import annotations

import sys
from typing import Any

from puppet_xpp.grammar import levels
from puppet_xpp.grammar.issues import ISSUES, Diagnostic
from puppet_xpp.grammar.validator.model import CONTAINMENT, TYPES, contents


def _c_walk() -> Any:
    """grammar/_accel.c's ``walk`` (:meth:`Walker._visit` in C), or None: the accelerator is not built, is
    an older build without it, or is disabled (PUPPET_XPP_PURE_PYTHON=1)."""
    from puppet_xpp.grammar.lexer import load_accelerator

    return getattr(load_accelerator(), "walk", None)


#: the C walk :meth:`Walker._walk` uses, or None (the Python one); looked up at every walk, so that tests
#: and benches may set it to None
C_WALK = _c_walk()


def _c_walk_stops() -> bool:
    from puppet_xpp.grammar.lexer import load_accelerator

    return bool(getattr(load_accelerator(), "WALK_STOP", 0))


#: whether C_WALK takes ``stop``/``stopped`` (:meth:`Walker.validate_part` walks in C then; an older build
#: of the accelerator: in Python)
C_WALK_STOPS = _c_walk_stops()


class Abort(Exception):
    """A heredoc syntax checker failed: Puppet raises it at once and validation stops."""

    def __init__(self, diagnostic: Any) -> None:
        self.diagnostic = diagnostic


class Walker:
    """The checker's settings, reporting and walk; the checks are its subclasses' ``check_<Class>`` methods
    (:class:`puppet_xpp.grammar.validator.checks.Checker`)."""

    tasks = False

    def __init__(
        self,
        *,
        strict: Any = None,
        file: Any = None,
        modulepath: Any = (),
        manifest: Any = None,
        level: Any = None,
    ) -> None:
        lv = levels.level(level)
        self.level = lv.name
        self.newer = lv.newer_checker
        self.strict = levels.resolve_strict(lv.name, strict)
        self.file = file
        self.modulepath = tuple(modulepath or ())
        self.manifest = manifest
        self.diagnostics: list[Diagnostic] = []
        self.logged: list[Diagnostic] = []  # what Puppet logs during validation (pp/epp heredoc checks)
        self.path: list[Any] = []
        self.file_namespace: str | None = None  # namespace_for_file of file, once asked (Rules.namespace)
        # where a node is, when its offset may be stale (the incremental parser moves statements
        # lazily, and sets this to where its position marks put a node); None: its offset
        self.offset_of: Any = None

    # -- reporting

    def accept(self, code: str, node: Any, **args: Any) -> None:
        if code == "DUPLICATE_KEY":
            if self.strict == "off":
                return
            severity = self.strict
        else:
            severity = ISSUES[code].severity
        if severity == "ignore":
            return
        length = getattr(node, "length", 0) or 0
        self.diagnostics.append(
            Diagnostic.make(code, self.where(node), length, args, severity, self.file or "")
        )

    def where(self, node: Any) -> Any:
        """The offset a diagnostic of node reports (offset_of's answer when one is set)."""
        offset = getattr(node, "offset", None)
        if offset is not None and self.offset_of is not None:
            offset = self.offset_of(node)
        return offset

    def check_top_construct_in_module(self, program: Any) -> None:
        """The module-location rule for what a program holds at its top, checked after the program
        itself and before the walk (:class:`puppet_xpp.grammar.validator.rules.Rules` has it)."""
        raise NotImplementedError

    # -- driver

    def validate(self, program: Any) -> list[Diagnostic]:
        try:
            try:
                self._run(program, self._walk)
            except RecursionError:
                # a model nested deeper than Python's recursion limit: start again without recursion
                limit = sys.getrecursionlimit()
                sys.setrecursionlimit(max(limit, 50000))
                try:
                    self._run(program, self._walk_iteratively)
                finally:
                    sys.setrecursionlimit(limit)
        except Abort as e:
            return self.logged + [e.diagnostic]
        return self.logged + self.diagnostics

    def _run(self, program: Any, walk: Any) -> None:
        self.diagnostics = []
        self.logged = []
        self.path = []
        self.check(program)
        self.check_top_construct_in_module(program)
        walk(program)

    def validate_part(self, node: Any, path: list[Any], stop: Any = frozenset()) -> tuple[Any, ...]:
        """Validate ``node`` and what is below it as validate() does where ``path`` (Program first)
        holds it, except below the nodes whose id() is in ``stop``: those are neither checked nor
        entered but returned with their path (the incremental parser keeps their diagnostics; for the
        Program, check_top_construct_in_module is the caller's).  Returns (logged, diagnostics, the
        diagnostic that aborted validation or None, [(stopped node, its path)]).  In C when the
        accelerator is built (:data:`C_WALK`: the same calls in the same order; the incremental parser
        validates the statements of a broken body with it), else (or nested beyond the recursion limit)
        in Python."""
        c_walk = C_WALK if C_WALK_STOPS else None
        if c_walk is not None:
            if not isinstance(stop, (set, frozenset)):
                stop = frozenset(stop)  # (the C walk looks ids up in a set)
            try:
                return self._validate_part(node, path, stop, c_walk)
            except RecursionError:
                pass  # (validated again below, without recursion)
        return self._validate_part(node, path, stop, None)

    def _validate_part(self, node: Any, path: list[Any], stop: Any, c_walk: Any) -> tuple[Any, ...]:
        self.diagnostics = []
        self.logged = []
        self.path = path = list(path)
        stopped: list[tuple[Any, list[Any]]] = []
        try:
            self.check(node)
            if c_walk is not None:
                c_walk(self, node, self._checks(), CONTAINMENT, path, stop or None, stopped)
                return self.logged, self.diagnostics, None, stopped
            path.append(node)
            stack = [iter(contents(node))]
            while stack:
                child = next(stack[-1], None)
                if child is None:
                    stack.pop()
                    path.pop()
                elif id(child) in stop:
                    stopped.append((child, list(path)))
                else:
                    self.check(child)
                    kids = contents(child)
                    if kids:
                        path.append(child)
                        stack.append(iter(kids))
        except Abort as e:
            return self.logged, self.diagnostics, e.diagnostic, stopped
        return self.logged, self.diagnostics, None, stopped

    @classmethod
    def _checks(cls) -> dict[type, Any]:
        """check method per model class (None when Puppet's check is a no-op), resolved once per checker class."""
        table: dict[type, Any] | None = cls.__dict__.get("_check_table")
        if table is None:
            table = {}
            for t in TYPES.values():
                m = None
                for k in t.__mro__:
                    name = k.__dict__.get("_name")
                    if name is not None:
                        m = getattr(cls, "check_" + name, None)
                        if m is not None:
                            break
                table[t] = m
            setattr(cls, "_check_table", table)  # noqa: B010 (set once per checker class)
        return table

    def _walk(self, node: Any) -> None:
        """Pre-order walk below ``node`` (recursive; the fast path): grammar/_accel.c's ``walk`` when it is
        built (the same calls in the same order, a third of a validation's time spared), else
        :meth:`_visit`."""
        if C_WALK is not None:
            C_WALK(self, node, self._checks(), CONTAINMENT, self.path)
        else:
            self._visit(node, self._checks(), CONTAINMENT, self.path)

    def _visit(self, node: Any, checks: Any, cont: Any, path: list[Any]) -> None:
        # (a method, not a closure calling itself: that is a reference cycle holding the checker,
        # freed only by the cyclic GC, whose full passes pause the language server for 100-250 ms)
        path.append(node)
        for f, is_list in cont[type(node)]:
            v = getattr(node, f)
            if v is None:
                continue
            if is_list:
                for c in v:
                    t = type(c)
                    fn = checks[t]
                    if fn is not None:
                        fn(self, c)
                    if cont[t]:
                        self._visit(c, checks, cont, path)
            else:
                t = type(v)
                fn = checks[t]
                if fn is not None:
                    fn(self, v)
                if cont[t]:
                    self._visit(v, checks, cont, path)
        path.pop()

    def _walk_iteratively(self, root: Any) -> None:
        path = self.path
        path.append(root)
        stack = [iter(contents(root))]
        check = self.check
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                path.pop()
                continue
            check(child)
            kids = contents(child)
            if kids:
                path.append(child)
                stack.append(iter(kids))

    def check(self, o: Any) -> None:
        fn = self._checks().get(type(o))
        if fn is not None:
            fn(self, o)

    def container(self, index: Any = -1) -> Any:
        path = self.path
        return path[index] if -len(path) <= index < len(path) else None
