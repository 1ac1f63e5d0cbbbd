"""Type stub for ``coalloc.testbed._allocate`` (src/_core/testbed/_allocate.cpp).

assign+'s allocate and exchange steps; twin :mod:`coalloc.testbed._reference.allocate`.
"""

from typing import Any, Dict, Sequence

def allocate_all(
    data: Dict[str, Any],
    strategies: Sequence[int],
    use_exchange: bool,
    max_rounds: int,
    trunk_aware: bool,
) -> Dict[str, Any]:
    """Allocate (and exchange) once per strategy (GIL released). Returns ``where``
    (2 x strategies, nv), ``isw``, ``fail`` (strategies, 5) and ``exchanges``."""
