"""puppet-xpp: parser, static validator, XPP (PRFC-23) compiler and language server for Puppet.

One import package, named after the distribution. Its subpackages keep the repository's top-level folders
(setuptools ``package-dir`` maps them), with one direction of dependency, as Puppet's ``pops/`` does:

- :mod:`puppet_xpp.grammar` (``grammar/``): lexer, grammar, parser, AST model, issue table, validator;
- :mod:`puppet_xpp.xpp` (``xpp/``): Pcore serialization, the ``.xpp`` envelope and layout, batch compile;
- :mod:`puppet_xpp.server` (``server/``): the language server and the ``puppet-xpp`` command line.

``grammar`` imports nothing of the others; ``xpp`` imports ``grammar``; ``server`` imports both.
"""

__version__ = "0.2.0"
