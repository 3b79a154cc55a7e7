"""Puppet 7 language front end: lexer, lark grammar, parser, AST model, validator."""

import sys

# The AST may be up to grammar.parser.MAX_DEPTH (2000) levels deep, as Puppet accepts; recursive consumers
# (PN, equality) need a few frames per level. Python 3.11+ does not use the C stack for these frames.
if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)
