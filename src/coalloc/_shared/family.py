"""The family protocol: the one base of every family's ``Instance``, and the list of families.

The parts a spec is made of live beside it: the file formats
(:mod:`coalloc._shared.formats_file`, :mod:`coalloc._shared.formats_line`) and what
``generate`` writes (:mod:`coalloc._shared.family_generate`); :class:`FileFormat` and
:func:`written` stay importable from here.

A **family** is a folder ``coalloc/<family>/`` that solves one kind of problem. What the
rest of the package (the batch layer, the ``coalloc`` command, the API reference) needs
from it is written once here:

* :class:`FamilyInstance`, the base of a family's ``Instance``: a problem as one picklable
  tuple (``(request, offer)``, ``(pool, request)``, ``(problem,)``) with ``family``,
  ``format``, ``methods``, ``DEFAULT_METHOD``, :meth:`~FamilyInstance.solve`,
  :meth:`~FamilyInstance.verify` (one report shape, also for a result without a
  solution), :meth:`~FamilyInstance.check_params`, :meth:`~FamilyInstance.from_dict` and
  :meth:`~FamilyInstance.coerce` (what a user passes -> the instance). A family declares
  its fields (a ``NamedTuple``), its ``METHODS``, its solve function and its verifier; the
  base does the rest.
* :class:`FamilySpec` and :func:`register_family`: the one list of families. A family's
  ``__init__`` registers itself (name, page title, one-line summary, its problem kinds,
  its command-line group); ``coalloc.FAMILIES`` names the folders imported at start-up.
  The batch layer (which names no family), the ``coalloc`` command's groups and the API
  reference titles are derived from :func:`families`.

This module imports no family (``tests/shared/test_house.py``).
"""

from __future__ import annotations

import functools
import inspect
import typing
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Dict, FrozenSet, List, Mapping, Optional, Tuple

from .constraints import validate
from .formats_file import Envelope, FileFormat, written  # noqa: F401 - the spec's parts
from .params import check_keywords, check_method
from .result import Report, Result

__all__ = [
    "FamilyInstance",
    "NoSolutionReport",
    "FamilySpec",
    "FileFormat",
    "written",
    "register_family",
    "unregister_family",
    "families",
    "family_spec",
    "problem_kinds",
    "kind_of_format",
    "coerce_problem",
    "renamed_keyword",
]


@dataclass
class NoSolutionReport(Report):
    """The report of :meth:`FamilyInstance.verify` on a result that holds no solution.

    Every family gives this one shape (a batch records it with its reason, not as an
    error): ``ok`` is False and ``violations`` says why there is nothing to check.

    Parameters
    ----------
    status : str
        The result's status (``"infeasible"``, ``"time_limit"``, ``"error"``).
    message : str, default ""
        The result's message.

    Examples
    --------
    >>> from coalloc._shared.family import NoSolutionReport
    >>> report = NoSolutionReport("infeasible", "no node has room")
    >>> report.ok, report.to_dict()["violations"]
    (False, ["no solution (status 'infeasible'): no node has room"])
    """

    status: str
    message: str = ""

    @property
    def ok(self) -> bool:
        """False: there is no solution to accept."""
        return False

    @property
    def violations(self) -> List[str]:
        """One line: no solution, with the result's status and message."""
        return [f"no solution (status {self.status!r}): {self.message}"]

    def to_dict(self) -> dict:
        """A JSON-ready dictionary.

        Returns
        -------
        dict
            ``ok`` (False), ``solution`` (False), ``status``, ``message`` and
            ``violations``.

        Examples
        --------
        >>> from coalloc._shared.family import NoSolutionReport
        >>> NoSolutionReport("error", "solver failed").to_dict()["solution"]
        False
        """
        return {"ok": False, "solution": False, "status": self.status, "message": self.message,
                "violations": self.violations}  # fmt: skip

    def __str__(self) -> str:
        return self.violations[0]


class FamilyInstance:
    """Base of every family's ``Instance``: a problem as one object, with the family's calls.

    A subclass also derives from a ``NamedTuple`` of its fields (the problem's parts, in
    the order of the family's solve function) and sets:

    * ``family`` (str): the family's name; ``kind`` (str, default ``family``): the name of
      this problem kind when a family has more than one (``"gap"`` in ``loadshare``);
    * ``format`` (str): the ``"format"`` of its instance files;
    * ``METHODS`` (name -> function) and ``DEFAULT_METHOD``; ``methods`` is derived;
    * ``_solve_function``: the family's solve, called as
      ``f(*fields, method, seed=seed, **params)`` (a ``staticmethod``);
    * ``_verify_solution(self, result)``: the family's independent check of a result that
      holds a solution; ``SOLUTION_FIELD`` names the result field whose None means "no
      solution" (then :meth:`verify` returns a :class:`NoSolutionReport`);
    * ``_fields_from_dict(data, source)``: the parts of a parsed instance file (a
      ``staticmethod``, usually the family's ``io.instance_from_dict``);
    * ``PARAMS``: method -> its constraint table (:mod:`coalloc._shared.constraints`), what
      :meth:`check_params` and the family's solve validate values with;
    * optionally ``SOLVE_KEYWORDS`` (keywords the solve function takes itself, not the
      method) with their table ``SOLVE_PARAMS``, and ``FORMAT_OPTIONAL`` (a file without
      ``"format"`` is this kind).

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc._shared.family import FamilyInstance
    >>> inst = ct.Instance(*ct.generators.fig2(2, n_tasks=12, seed=1))
    >>> isinstance(inst, FamilyInstance), inst.family, inst.DEFAULT_METHOD
    (True, 'ctaap', 'ctaap')
    >>> inst.verify(inst.solve(seed=0)).ok
    True
    """

    __slots__ = ()

    family: ClassVar[str]
    kind: ClassVar[str]
    format: ClassVar[str]
    METHODS: ClassVar[Mapping[str, Callable[..., Result]]]
    DEFAULT_METHOD: ClassVar[str]
    methods: ClassVar[Tuple[str, ...]]
    SOLUTION_FIELD: ClassVar[str] = "solution"
    SOLVE_KEYWORDS: ClassVar[FrozenSet[str]] = frozenset()
    PARAMS: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    SOLVE_PARAMS: ClassVar[Mapping[str, Any]] = {}
    FORMAT_OPTIONAL: ClassVar[bool] = False
    #: ``f(*fields, time_limit=...) -> Explanation | None``: the family's "why not".
    _explain_function: ClassVar[Optional[Callable[..., Any]]] = None
    _field_types: ClassVar[Tuple[type, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "METHODS" in cls.__dict__:
            cls.methods = tuple(cls.METHODS)
        if "family" in cls.__dict__ and "kind" not in cls.__dict__:
            cls.kind = cls.family
        fields = getattr(cls, "_fields", None)
        if fields:
            hints = typing.get_type_hints(next(b for b in cls.__mro__ if "_fields" in vars(b)))
            cls._field_types = tuple(hints[name] for name in fields)

    def solve(self, method: Optional[str] = None, *, seed: Optional[int] = 0,
              **params: Any) -> Result:  # fmt: skip
        """Solve this instance with a method of the family (``None``: ``DEFAULT_METHOD``).

        Parameters
        ----------
        method : str, optional
            A name of ``METHODS``; None runs ``DEFAULT_METHOD``.
        seed : int or None, default 0
            Seed of every random choice (the family's seed policy); None: fresh entropy.
        **params
            The method's own parameters (see the family's solve function).

        Returns
        -------
        Result
            The family's result (a subclass of :class:`coalloc.Result`).

        Examples
        --------
        >>> import coalloc.ctaap as ct
        >>> inst = ct.Instance(*ct.generators.fig2(2, n_tasks=12, seed=1))
        >>> result = inst.solve("greedy")
        >>> result.method, result.n_tasks
        ('greedy', 12)
        """
        return type(self)._solve_function(*self, method or self.DEFAULT_METHOD, seed=seed,
                                          **params)  # fmt: skip

    def verify(self, result: Result) -> Report:
        """Check a result of this instance with the family's independent verifier.

        Parameters
        ----------
        result : Result
            A result of :meth:`solve` (or of the family's solve function) on this instance.

        Returns
        -------
        Report
            The family's report (``report.ok`` is True for a valid result), or a
            :class:`NoSolutionReport` (``ok`` False, the status and message in its
            ``violations``) when the result holds no solution: every family, one shape.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0], [[0, 1], [1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0], [[0, 1]], [50.0])
        >>> inst = tm.Instance(tasks, res)
        >>> inst.verify(inst.solve(seed=0)).ok
        True
        """
        if getattr(result, self.SOLUTION_FIELD, None) is None or not result.has_solution:
            return NoSolutionReport(str(result.status), str(getattr(result, "message", "")))
        return self._verify_solution(result)

    def explain(self, result: Optional[Result] = None, *,
                time_limit: float = 10.0) -> Optional[Any]:  # fmt: skip
        """Why this request cannot be met in full: a minimal conflict and the nearest fix.

        Parameters
        ----------
        result : Result, optional
            A result of :meth:`solve` on this instance. When it already meets the whole
            request (``_meets_all``) nothing is computed; otherwise the explanation is
            also attached to it (``result.explanation``, in its ``to_dict()``).
        time_limit : float, default 10.0
            Seconds for the explanation (the family's ``explain_*`` function).

        Returns
        -------
        Explanation or None
            The :class:`~coalloc._shared.explain.Explanation`, or None when the whole
            request can be met (nothing to explain), the family refuses nothing (task
            mapping), or the budget did not decide.

        Examples
        --------
        >>> import coalloc.collective as co
        >>> pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
        >>> inst = co.Instance(co.CollectiveRequest(600, 2, minimum={"cores": 3}), pool)
        >>> result = inst.solve()
        >>> e = inst.explain(result)
        >>> result.explanation is e, e.sound, e.minimal
        (True, True, True)
        """
        explain = type(self)._explain_function
        if explain is None or (result is not None and self._meets_all(result)):
            return None
        found = explain(*self, time_limit=time_limit)
        if result is not None:
            result.explanation = found
        return found

    def _meets_all(self, result: Result) -> bool:
        """Whether ``result`` meets the whole request (a family with partial answers, such
        as CTAAP's tasks left out, overrides it)."""
        return bool(result.has_solution)

    def _verify_solution(self, result: Result) -> Report:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} does not define _verify_solution")

    @classmethod
    def check_params(cls, method: Optional[str], params: Mapping[str, Any]) -> None:
        """Reject an unknown method, parameter names it does not take, or a value its
        constraint table (``PARAMS``) refuses, before any work.

        Parameters
        ----------
        method : str or None
            A name of ``METHODS`` (None: ``DEFAULT_METHOD``).
        params : mapping
            The keyword parameters a batch would pass to :meth:`solve`.

        Raises
        ------
        ValueError
            An unknown method.
        TypeError
            A parameter name the method does not take.
        coalloc._shared.constraints.InvalidParameterError
            A value the method's table (or ``SOLVE_PARAMS``) refuses (a ``ValueError`` and a
            ``TypeError``), the parameter named.

        Examples
        --------
        >>> from coalloc.collective import Instance
        >>> Instance.check_params("scan", {"backend": "numpy"})
        >>> Instance.check_params("scan", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        >>> Instance.check_params("scan", {"block": 0})
        Traceback (most recent call last):
        ...
        coalloc._shared.constraints.InvalidParameterError: block must be an integer in [1, 1000000], got 0
        """  # noqa: E501
        method = check_method(method or cls.DEFAULT_METHOD, cls.METHODS)
        names = {k for k in params if k not in cls.SOLVE_KEYWORDS}
        check_keywords(cls.METHODS[method], method, names, n_problem_args=len(cls._fields))
        validate(cls.SOLVE_PARAMS, params)
        validate(cls.PARAMS.get(method, {}), params)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> FamilyInstance:
        """An instance from a parsed instance file of this kind (its ``format``).

        Parameters
        ----------
        data : dict
            The parsed JSON of an instance file.
        source : str, default "<dict>"
            Named in error messages.

        Returns
        -------
        FamilyInstance
            The instance the file describes.

        Raises
        ------
        InstanceError
            ``"<source>: <field path>: <what was expected>"`` for a malformed document.

        Examples
        --------
        >>> import coalloc.loadshare as ls
        >>> inst = ls.Instance(ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1]))
        >>> same = ls.Instance.from_dict(ls.io.problem_to_dict(inst.problem))
        >>> same.problem.n_nodes, same.problem.n_jobs
        (3, 4)
        """
        return cls(*cls._fields_from_dict(data, source=source))

    @classmethod
    def coerce(cls, obj: Any) -> FamilyInstance:
        """What a user passes, as an instance of this kind.

        Parameters
        ----------
        obj : object
            An instance of this kind (returned as is), a tuple or list of its parts in
            field order (``(request, offer)``), or, for a kind of one field, the bare part
            (a ``LoadSharingProblem``, a ``GapInstance``).

        Returns
        -------
        FamilyInstance
            The instance.

        Raises
        ------
        TypeError
            ``obj`` is none of these.

        Examples
        --------
        >>> import coalloc.loadshare as ls
        >>> problem = ls.LoadSharingProblem([10, 10], [8, 3], [0, 1])
        >>> ls.Instance.coerce(problem) == ls.Instance(problem)
        True
        """
        found = cls._coerced(obj)
        if found is not None:
            return found
        types = cls._field_types
        names = ", ".join(t.__name__ for t in types)
        raise TypeError(f"a {cls.kind} problem is a {cls.__name__} or ({names}), "
                        f"got {type(obj).__name__}")  # fmt: skip

    @classmethod
    def _coerced(cls, obj: Any) -> Optional[FamilyInstance]:
        """:meth:`coerce` without the exception: None when ``obj`` is not of this kind."""
        if isinstance(obj, cls):
            return obj
        types = cls._field_types
        if len(types) == 1 and isinstance(obj, types[0]):
            return cls(obj)
        if isinstance(obj, (tuple, list)) and len(obj) == len(types):
            if all(isinstance(part, t) for part, t in zip(obj, types)):
                return cls(*obj)
        return None


# ------------------------------------------------------------------ one vocabulary: solver=


def renamed_keyword(func: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    """``func`` (which takes ``new=``) also taking its old spelling ``old=``, deprecated.

    The one way an old parameter name survives: at the public boundary only. Inside the
    package every function uses the new name; the wrapper passes ``old=value`` on as
    ``new=value`` with a :class:`DeprecationWarning` (both, with different values, are a
    ``TypeError``). The old name is hidden from the wrapper's signature, so
    :meth:`FamilyInstance.check_params`, the CLI and the docs know only the new one.

    Parameters
    ----------
    func : callable
        The function; it takes ``new`` as a keyword.
    old, new : str
        The deprecated spelling and the one to use.

    Returns
    -------
    callable
        The wrapper (same answers, same signature as ``func``).

    Examples
    --------
    >>> import warnings
    >>> def exact(problem, *, solver="highs"):
    ...     return solver
    >>> run = renamed_keyword(exact, "backend", "solver")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     answer = run(None, backend="cbc")
    >>> answer, caught[0].category.__name__
    ('cbc', 'DeprecationWarning')
    """
    marker = object()

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        value = kwargs.pop(old, marker)
        if value is not marker:
            if new in kwargs and kwargs[new] != value:
                raise TypeError(f"{new}={kwargs[new]!r} and {old}={value!r} (its deprecated "
                                f"name) disagree: pass {new}= only")  # fmt: skip
            warnings.warn(f"{old}= is deprecated: pass {new}={value!r}", DeprecationWarning,
                          stacklevel=2)  # fmt: skip
            kwargs[new] = value
        return func(*args, **kwargs)

    run.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    # the old spellings the wrapper (and the ones it wraps) still take, for check_keywords
    run.__renamed__ = {**getattr(func, "__renamed__", {}), old: new}  # type: ignore[attr-defined]
    return run


# ------------------------------------------------------------------ the list of families


@dataclass(frozen=True)
class FamilySpec:
    """What the package needs to know about a family (see :func:`register_family`).

    Everything outside the family's folder that concerns the family is derived from its
    spec: the batch layer and the ``coalloc <name>`` group (``kinds``, ``cli``), the file
    formats and their published schemas (``formats``: ``coalloc.formats``), the ``coalloc
    plot <name>`` command (``plot``), the smoke test of the wheel and the common suite
    (``example``: :func:`coalloc.testing.check_family`), the fuzzers' seed files
    (``fuzz_seeds``) and the API reference (``title``).

    Parameters
    ----------
    name : str
        The family's name (its folder, its command-line group).
    title : str
        The title of its API reference page.
    summary : str
        One line: the ``coalloc <name> -h`` description.
    kinds : tuple of FamilyInstance subclasses
        Its problem kinds, the main one first (``coalloc.loadshare``: the load-sharing
        problem, then the GAP).
    cli : str, optional
        The module whose ``add_commands(subparsers)`` adds the family's subcommands; None:
        the generic group (``solve``, ``solve-batch``) built from the protocol.
    formats : tuple of FileFormat
        Its JSON file formats (each kind's instance format among them), in the order
        ``coalloc schema`` lists them.
    plot : str, optional
        The module whose ``add_plot(subparsers)`` adds ``coalloc plot <name>``; None: the
        family draws no picture.
    example : callable, optional
        ``example(seed=0) -> kinds[0]``: a small instance (solved by every method in well
        under a second), for the wheel's smoke test and :func:`coalloc.testing.check_family`.
    fuzz_seeds : callable, optional
        ``fuzz_seeds() -> {file name: bytes}``: small valid instance files of its formats,
        the seeds of the fuzzers' ``instances`` target (``fuzz/make_corpus.py``).
    line_formats : tuple of LineFormat
        Its file formats that are no JSON document (``.top``, OR-Library GAP text, METIS
        ...: :class:`coalloc._shared.formats_line.LineFormat`): reader, writer, detection,
        ``--format`` word.
    generate : tuple of Generated
        The kinds of file ``coalloc <name> generate`` writes
        (:class:`coalloc._shared.family_generate.Generated`): the command's options are
        built from their generators' parameters (:mod:`coalloc.cli._generate`).

    Examples
    --------
    >>> from coalloc._shared.family import families
    >>> spec = families()["taskmap"]
    >>> spec.kinds[0].format, spec.cli
    ('coalloc.taskmap.instance', 'coalloc.taskmap.cli')
    >>> [f.name for f in spec.formats][:2]
    ['coalloc.taskgraph', 'coalloc.resourcegraph']
    """

    name: str
    title: str
    summary: str
    kinds: Tuple[type, ...] = field(default_factory=tuple)
    cli: Optional[str] = None
    formats: Tuple[FileFormat, ...] = ()
    plot: Optional[str] = None
    example: Optional[Callable[..., Any]] = None
    fuzz_seeds: Optional[Callable[[], Dict[str, bytes]]] = None
    line_formats: Tuple[Any, ...] = ()
    generate: Tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a family name must be an identifier, got {self.name!r}")
        if not self.kinds:
            raise ValueError(f"family {self.name!r}: kinds must name at least one Instance")
        for kind in self.kinds:
            if not (isinstance(kind, type) and issubclass(kind, FamilyInstance)):
                raise TypeError(f"family {self.name!r}: {kind!r} is not a FamilyInstance")
            if kind.family != self.name:
                raise ValueError(f"family {self.name!r}: {kind.__name__}.family is "
                                 f"{kind.family!r}")  # fmt: skip
        names = [f.name for f in (*self.formats, *self.line_formats)]
        if any(not isinstance(f, FileFormat) for f in (*self.formats, *self.line_formats)):
            raise TypeError(f"family {self.name!r}: formats must be FileFormat objects")
        if len(set(names)) != len(names):
            raise ValueError(f"family {self.name!r}: a format is listed twice in {names}")
        if any(f.schema is None for f in self.formats):
            raise TypeError(f"family {self.name!r}: formats are JSON formats with a schema; "
                            "a line format goes in line_formats")  # fmt: skip

    def file_format(self, name: str) -> Optional[FileFormat]:
        """The family's :class:`FileFormat` called ``name`` (None: not one of its formats).

        Parameters
        ----------
        name : str
            A ``"format"`` key.

        Returns
        -------
        FileFormat or None
            The format.

        Examples
        --------
        >>> from coalloc._shared.family import families
        >>> families()["ctaap"].file_format("coalloc.instance").description[:15]
        'a CTAAP instanc'
        """
        return next((f for f in self.formats if f.name == name), None)


_REGISTRY: Dict[str, FamilySpec] = {}
_LOADER: Dict[str, Any] = {"load": None, "order": (), "one": None}


def set_family_loader(load: Callable[[], None], order: Tuple[str, ...],
                      one: Optional[Callable[[str], None]] = None) -> None:  # fmt: skip
    """How to import every family, and their order (the package sets both at import).

    The package imports a family on first use; whoever lists the families needs them all,
    so :func:`families` and :func:`problem_kinds` call ``load`` first (it imports each family
    once, and each registers itself). The shared layer imports no family itself.

    Parameters
    ----------
    load : callable
        Imports every family (``coalloc.__init__`` passes its own).
    order : tuple of str
        The families' order in every listing (``coalloc.FAMILIES``).
    one : callable, optional
        Imports one family by name (:func:`family_spec`).
    """
    _LOADER["load"], _LOADER["order"], _LOADER["one"] = load, tuple(order), one


def _ordered() -> List[FamilySpec]:
    """The registered families: the package's order, then others as registered."""
    if _LOADER["load"] is not None:
        _LOADER["load"]()
    rank = {name: k for k, name in enumerate(_LOADER["order"])}
    names = sorted(_REGISTRY, key=lambda n: rank.get(n, len(rank)))  # stable: others in order
    return [_REGISTRY[n] for n in names]


def register_family(spec: FamilySpec) -> FamilySpec:
    """Add a family to the list of families (a family's ``__init__`` calls it once).

    Parameters
    ----------
    spec : FamilySpec
        The family. Registering the same name again replaces the entry (a module reload).

    Returns
    -------
    FamilySpec
        ``spec``.

    Raises
    ------
    ValueError
        A format already registered by another family's kind.

    Examples
    --------
    >>> from coalloc._shared.family import families
    >>> list(families())[:2]
    ['ctaap', 'taskmap']
    """
    if not isinstance(spec, FamilySpec):
        raise TypeError(f"spec must be a FamilySpec, got {type(spec).__name__}")
    for other in _REGISTRY.values():
        if other.name == spec.name:
            continue
        clash = _format_names(other) & _format_names(spec)
        if clash:
            raise ValueError(f"family {spec.name!r}: format(s) {sorted(clash)} already belong "
                             f"to family {other.name!r}")  # fmt: skip
    _REGISTRY[spec.name] = spec
    return spec


def _format_names(spec: FamilySpec) -> set:
    return {k.format for k in spec.kinds} | {f.name for f in (*spec.formats, *spec.line_formats)}


def unregister_family(name: str) -> None:
    """Remove a family from the list (tests that register a toy family undo it).

    Parameters
    ----------
    name : str
        The family's name; an unknown name is ignored.

    Examples
    --------
    >>> from coalloc._shared.family import unregister_family
    >>> unregister_family("no-such-family")
    """
    _REGISTRY.pop(name, None)


def family_spec(name: str) -> FamilySpec:
    """One family's spec (``name``), importing that family only, not every family as
    :func:`families` does; KeyError for no such family (as ``families()[name]``).

    >>> from coalloc._shared.family import family_spec
    >>> family_spec("testbed").name
    'testbed'
    """
    if name not in _REGISTRY and name in _LOADER["order"] and _LOADER["one"] is not None:
        _LOADER["one"](name)  # the family registers itself
    if name not in _REGISTRY:
        return families()[name]  # the others loaded: a family registered by one of them
    return _REGISTRY[name]


def families() -> Dict[str, FamilySpec]:
    """The registered families, name -> :class:`FamilySpec`: ``coalloc.FAMILIES``'s order,
    then any other family in registration order.

    Returns
    -------
    dict
        A copy: changing it changes nothing.

    Examples
    --------
    >>> from coalloc._shared.family import families
    >>> sorted(families())[:3]
    ['collective', 'ctaap', 'loadshare']
    """
    return {spec.name: spec for spec in _ordered()}


def problem_kinds(family: Optional[str] = None) -> List[type]:
    """The problem kinds (``FamilyInstance`` subclasses) of one family or of all.

    Parameters
    ----------
    family : str, optional
        A registered family's name; None: every family's kinds, in registration order.

    Returns
    -------
    list of type
        The kinds.

    Raises
    ------
    ValueError
        An unknown family.

    Examples
    --------
    >>> from coalloc._shared.family import problem_kinds
    >>> [k.kind for k in problem_kinds("loadshare")]
    ['loadshare', 'gap']
    """
    specs = _ordered()
    if family is not None:
        if family not in _REGISTRY:
            raise ValueError(f"family must be one of {sorted(_REGISTRY)}, got {family!r}")
        return list(_REGISTRY[family].kinds)
    return [kind for spec in specs for kind in spec.kinds]


def kind_of_format(fmt: Any) -> Optional[type]:
    """The problem kind whose instance files have ``"format": fmt`` (None: not a kind's).

    ``fmt`` None (a file without ``"format"``) gives the kind that declares
    ``FORMAT_OPTIONAL`` (the CTAAP instance), if any.

    Parameters
    ----------
    fmt : str or None
        The ``"format"`` of a parsed instance file.

    Returns
    -------
    type or None
        The kind.

    Examples
    --------
    >>> from coalloc._shared.family import kind_of_format
    >>> kind_of_format("coalloc.collective.instance").family
    'collective'
    >>> kind_of_format("coalloc.nothing") is None
    True
    """
    for kind in problem_kinds():
        if (fmt is None and kind.FORMAT_OPTIONAL) or (fmt is not None and kind.format == fmt):
            return kind
    return None


def coerce_problem(obj: Any) -> FamilyInstance:
    """What a user passes, as the instance of the first kind that takes it.

    Parameters
    ----------
    obj : object
        A family's instance, the tuple of its parts (``(request, offer)``), or a bare
        one-part problem (a ``LoadSharingProblem``, a ``GapInstance``).

    Returns
    -------
    FamilyInstance
        The instance.

    Raises
    ------
    TypeError
        No registered kind takes ``obj``.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> from coalloc._shared.family import coerce_problem
    >>> gap = ls.GapInstance([[1, 9], [9, 1]], [[1, 1], [1, 1]], [1, 1])
    >>> coerce_problem(gap).kind
    'gap'
    """
    for kind in problem_kinds():
        found = kind._coerced(obj)
        if found is not None:
            return found
    shapes = "; ".join(
        f"{k.family}.{k.__name__} or ({', '.join(t.__name__ for t in k._field_types)})"
        for k in problem_kinds()
    )
    raise TypeError(f"a problem is {shapes}; got {type(obj).__name__}")
