"""``python -m cc_analytics``: the same as the ``cc-analytics`` console script."""

import sys

from cc_analytics.cli import main

sys.exit(main())
