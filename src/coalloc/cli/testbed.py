"""``coalloc testbed``: the family's command-line group lives in its folder,
:mod:`coalloc.testbed.cli`; this name stays importable and is that very module."""

import sys

from ..testbed import cli as _cli

sys.modules[__name__] = _cli
