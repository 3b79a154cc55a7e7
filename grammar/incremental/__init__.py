"""Incremental reparsing (for the language server; no pygls imports), kept next to the parser.

The result of every update equals a full ``grammar.parser.parse`` of the current text (same Program,
same node positions, same definitions, same diagnostics) -- tests/test_incremental.py checks that
with random edit sequences -- but the work done is proportional to the statements an edit touches,
at any depth: an edit inside a class, define, node, ``if``/``case``, lambda or resource body reparses
only the statements of the innermost enclosing statement list that it touches.

* **Statement lists** (``reparser``).  The full parse runs ``grammar.parser``'s own LR driver with a
  ``watch`` (``state.Recorder``) that records every statement list (the program's and each ``{ }``
  body's): the LR stack below the list (states and values), the list of raw statements (before
  Puppet's call transform), the lookahead token after each statement, the closing token, the
  transformed list the AST holds and the diagnostics of that transform.
* **Lexing** (``lex``).  Only a window of lines around the edit is re-lexed, from an anchor line
  where the lexer is in its initial state to one after the edit; tokens outside the changed middle
  keep their identity (the records refer to them).
* **Parsing** (``reparser``).  The innermost list around the changed tokens is resumed, with the
  same driver, from the last statement boundary before them with the stack a full parse has there,
  and stopped at the first later boundary of that list where the old parse had one on the same
  (unchanged) lookahead token, or at the list's end.  The statements after it are reused; the list
  is transformed again and spliced into the AST in place.  Syntax errors inside bodies recover
  exactly as in a full parse (the same driver).  When the run leaves the list (a brace changed) or a
  node around it ends inside the reparsed statements, the enclosing list reparses the statement
  holding it instead.  A `{` after the change whose body did not change (same LR state after it) is
  not reparsed: its old statements are pushed whole (an edit in a class's parameter list reparses
  the header only).
* **Broken text and quotes** (``broken``, ``plain``, ``bodies``).  Statements that a syntax error
  swallowed (recovery skipped to the list's end) are set aside (``state.Ghost``) and found again by
  the edit that repairs it.  A syntax error at the top level or a hard lexer error keeps the
  incremental state as it was and shows a plain parse of the current tokens, resumed at the last
  boundary before the change; the next edit reparses from that state over both edits.  Too deep
  nesting, a window that cannot be lexed on its own and EPP use a full parse.
* **Positions** (``state.Positions``).  Nodes after an edit move lazily: the statements after it are
  marked (O(statements), not O(nodes)) and the marks are applied when the AST is handed out
  (``program``); the nodes around the edit grow.  Puppet's locations are not always nested (an
  operator stands after its left operand, a call's lambda and an if's else lie after the node's
  end): the walk goes by where subtrees start.
* **Validation** (``validate``; :meth:`IncrementalParser.validation_diagnostics`): every statement of
  every list is a unit whose diagnostics (with those below it) are cached until an edit replaces it
  or happens inside it (grammar.validator's ``Checker.validate_part`` validates a unit in its
  context, stopping at the units below it); the program-level checks run each time.  The validator
  is ``grammar.check.checker``'s for the parser's configuration.

Modules: ``reparser`` (IncrementalParser: the public API, the full parse, the reparse of statement
lists, the results), ``state`` (the records and helpers the others share), ``lex`` (Relexer: the
lexing window), ``broken`` (BrokenText: the paths and state of broken text), ``plain`` (the records
of the plain parses shown while the text is broken), ``bodies`` (the bodies a plain parse takes whole
from the last keystroke's), ``validate`` (validation by units).  The parser holds a Relexer and a
BrokenText, each with its own state; they read the parser's public attributes.

Public API (the language server's)::

    p = IncrementalParser(text, config)       # config: grammar.check.CheckConfig
    p.edit(start_byte, end_byte, new_text)    # any number of edits, then
    p.update()                                # -> reparses what changed
    p.program, p.tokens, p.locator, p.parse_diagnostics(), p.validation_diagnostics()
    p.stats                                   # what the last update did (for tests and the benchmark)
"""

from puppet_xpp.grammar.incremental.reparser import IncrementalParser

__all__ = ["IncrementalParser"]
