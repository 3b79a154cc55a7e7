"""The language server (``lsp``) over its pygls-free analysis core (``analysis``), and the
``puppet-xpp`` command line (``cli``)."""
