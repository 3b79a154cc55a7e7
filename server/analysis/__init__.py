"""The language server's analysis core: documents, features, the workspace and reference indexes, lint.

Nothing here imports pygls or lsprotocol (an import-linter contract holds it): the functions take and
return plain data, and ``puppet_xpp.server.lsp`` converts at the protocol's edge, as
jedi-language-server keeps ``jedi_utils`` apart from its handlers."""
