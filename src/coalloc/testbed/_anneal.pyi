"""Type stub for ``coalloc.testbed._anneal`` (src/_core/testbed/_anneal.cpp).

assign's simulated annealing over pclasses; twin :mod:`coalloc.testbed._reference.anneal`.
"""

from typing import Any, Dict

def anneal(data: Dict[str, Any], seed: int, params: Dict[str, Any]) -> Dict[str, Any]:
    """Anneal one mapping problem (GIL released). Returns ``where``, ``score``,
    ``violations``, ``valid``, ``moves``, ``accepted``, ``temperatures``, ``t_start``,
    ``run_limit``."""
