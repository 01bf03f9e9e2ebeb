"""``python -m clusterednb.cli``."""

import sys

from clusterednb.cli import main

sys.exit(main())
