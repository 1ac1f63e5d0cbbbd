"""The shared layer: what two or more families need, written once.

* :mod:`.jsonio`: the JSON envelope of every file and :class:`InstanceError`;
* :mod:`.milp`: one runner for HiGHS, CBC and CP-SAT with one status table;
* :mod:`.seeding`: the seed policy (user seed -> ``SeedSequence`` streams -> kernel seeds);
* :mod:`.xoshiro`: the Python twin of the kernels' generator (xoshiro256**, splitmix64);
* :mod:`.validation`: array and sparse-matrix validation for model constructors;
* :mod:`.params`: parameter checks for solvers;
* :mod:`.result`: the :class:`Result` and :class:`Report` bases and the status vocabulary;
* :mod:`.family`: the family protocol (:class:`FamilyInstance`) and the list of families.

Families import from here and never from each other's private modules.
"""

from .family import FamilyInstance, FamilySpec, families, register_family
from .jsonio import InstanceError
from .result import STATUSES, Report, Result
from .seeding import instance_seed

__all__ = [
    "InstanceError",
    "Result",
    "Report",
    "STATUSES",
    "instance_seed",
    "FamilyInstance",
    "FamilySpec",
    "families",
    "register_family",
]
