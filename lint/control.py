"""Control comments: ``# lint:ignore:NAME [reason]`` ... ``# lint:endignore`` (a block), or a
``lint:ignore:NAME`` comment after code on the same line (that line only). Several ``lint:ignore:`` words
may stand in one comment; the words after them are the reason. As in puppet-lint 3.0.1, ``all`` is not a
wildcard: ``lint:ignore:all`` only ignores a check named ``all`` (there is none).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from puppet_xpp.lint.tokens import Tok

_CONTROL = re.compile(r"lint:(ignore:\w+|endignore)", re.ASCII)
COMMENTS = frozenset({"COMMENT", "MLCOMMENT", "SLASH_COMMENT"})
_WORD = re.compile(r"lint:(ignore|endignore)")


@dataclass
class Overrides:
    """check name -> line -> reason; plus the warnings about unbalanced comments."""

    lines: dict[str, dict[int, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def reason(self, check: str, line: int) -> str | None:
        return self.lines.get(check, {}).get(line)


def parse(tokens: Sequence[Tok]) -> Overrides:
    out = Overrides()
    stack: list[list[tuple[int, str, str]]] = []
    for tok in tokens:
        if tok.type not in COMMENTS or "lint:" not in tok.value or not _CONTROL.match(tok.value.strip()):
            continue
        words = tok.value.strip().split()
        controls: list[str] = []
        reason: list[str] = []
        for i, w in enumerate(words):
            if _WORD.match(w):
                controls.append(w)
            else:
                reason = words[i:]
                break
        why = " ".join(reason)
        opened: list[tuple[int, str, str]] = []
        for c in controls:
            parts = c.split(":")
            if parts[1] == "ignore":
                name = parts[2] if len(parts) > 2 else ""
                if tok.prev is not None and tok.prev.type not in ("NEWLINE", "INDENT"):
                    out.lines.setdefault(name, {})[tok.line] = why
                else:
                    opened.append((tok.line, why, name))
            else:
                top = stack.pop() if stack else None
                if top is None:
                    out.warnings.append(
                        f"WARNING: lint:endignore comment with no opening lint:ignore:<check> comment found on line {tok.line}"
                    )
                    continue
                for start, why0, name in top:
                    for line in range(start, tok.line + 1):
                        out.lines.setdefault(name, {})[line] = why0
        if opened:
            stack.append(opened)
    for opened in stack:
        line, _why, name = opened[0]
        out.warnings.append(
            f"WARNING: lint:ignore:{name} comment on line {line} with no closing lint:endignore comment"
        )
    return out
