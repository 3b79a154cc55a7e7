"""``python -m puppet_xpp``: the ``puppet-xpp`` command line."""

import sys

from puppet_xpp.server.cli.main import main

sys.exit(main())
