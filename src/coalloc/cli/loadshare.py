"""``coalloc loadshare``: the family's command-line group lives in its folder,
:mod:`coalloc.loadshare.cli`; this name stays importable and is that very module."""

import sys

from ..loadshare import cli as _cli

sys.modules[__name__] = _cli
