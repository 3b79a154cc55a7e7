"""puppet-lint's checks and fixes on puppet-xpp's lexer (see docs/lint.md)."""
