"""``python -m agentmsg``: the ``agentmsg`` command line (see :mod:`agentmsg.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
