"""``python -m evalcore.cli``: the same as the `evalcore` command."""

import sys

from . import main

sys.exit(main())
