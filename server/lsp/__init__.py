"""The language server: the session that holds its state and the thin pygls handlers over
``puppet_xpp.server.analysis``."""
