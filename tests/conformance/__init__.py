"""Conformance tests against the real Puppet: the Ruby oracle (``oracle.py``) and the corpus (``corpus.py``)."""
