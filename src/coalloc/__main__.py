"""``python -m coalloc`` runs the ``coalloc`` command."""

import sys

from .cli import main

sys.exit(main())
