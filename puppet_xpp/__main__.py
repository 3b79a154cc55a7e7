"""``python -m puppet_xpp``: the ``puppet-xpp`` command line."""

import sys

from puppet_xpp.server.cli import main

sys.exit(main())
