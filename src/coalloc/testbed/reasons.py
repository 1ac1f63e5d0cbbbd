"""Failure reasons and violations in words: what the command line and messages print.

The mapping methods and :func:`coalloc.testbed.verify_mapping` keep their reasons
machine-readable (``{"constraint": "capacity", "needed": 30, ...}``, in ``result.reason``,
``report.violations`` and the JSON output); :func:`reason_text` turns one into a sentence
for people.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping

__all__ = ["reason_text"]

#: Templates by constraint, the first whose fields the reason has is used (else the
#: generic wording).
_TEMPLATES: Dict[str, Any] = {
    "capacity": (
        "{vnodes} need a physical node of the classes {candidate_pclasses}; "
        "{needed} are needed and {available} are free",
        "{vnodes} found no free physical node of the classes {candidate_pclasses}",
    ),
    "fixed": "{vnodes} must go on {pnode}, which cannot take it",
    "no_candidate": "no physical node can host {vnodes} (the constraint each fails: {why})",
    "no_path": "link {link}: no switch path joins {switches}",
    "interfaces": "link {link}: {pnode} has no free interface of bandwidth {bandwidth:g}",
    "violations": "the annealing ended with {violations} constraint violations left",
    "infeasible": "the integer program is infeasible ({solver})",
    "time_limit": "the solver stopped before it found a mapping ({solver})",
    "unroutable": "the integer program's mapping could not be routed: {routing}",
    "internal_check": "the independent check refused the mapping: {violations}",
    "unknown": "no reason was recorded",
    "unassigned": "virtual node {vnode} is not mapped",
    "unknown_pnode": "virtual node {vnode} is mapped to {pnode}, which is not in the testbed",
    "type": "virtual node {vnode} is on {pnode}, whose types {allowed} do not include its own",
    "slots": "{pnode} holds {used:g} slots of {capacity:g}",
    "one_type_at_a_time": "{pnode} hosts {vnodes} as more than one type at a time",
    "additive": "{pnode} uses {used:g} of its {capacity:g} {feature}",
    "desire": "virtual node {vnode} desires {feature}, which {pnode} does not have",
    "type_limit": (
        "the used nodes listing type {type} count {used:g} slots of it, the limit is {limit:g}",
        "the used nodes listing type {type} count {used} slots of it, the limit is {limit}",
    ),
    "policy": (
        "the testbed's policy limits desire {desire} to {limit:g} in all and the experiment "
        "asks for {total:g}",
        "the testbed's policy disallows desire {desire}, which {vnodes} ask for",
        "the testbed's policy disallows desire {desire}, which {users} virtual nodes ask for",
    ),
    "links_unchecked": "{why}",
    "unproven": "no mapping found, and none excluded: {why}",
    "vclass": "the nodes of vclass {vclass} are of several types: {types}",
    "unrouted": "link {link} has no route",
    "trivial_on_two_nodes": "link {link} is routed inside one node but joins two",
    "trivial_not_ok": "link {link} is routed inside one node, which it does not allow",
    "unknown_plink": "link {link} uses {plink}, which is not a link of the testbed",
    "broken_path": "the route of link {link} breaks at {at} ({plink})",
    "path_through_host": "the route of link {link} passes through host {node}",
    "link_type": "link {link} needs a link of type {wanted} and uses {plink}",
    "bandwidth": "link {link} needs {needed:g} on {plink}, which carries {capacity:g}",
    "interface_shared": "interface {plink} is shared by {links}",
    "path_end": "the route of link {link} ends at {ends_at} instead of {wanted}",
    "empty_route": "link {link} joins two physical nodes but its route is empty",
    "interface_bandwidth": "interface {plink} carries {load:g} of its {capacity:g}",
    "trunk_bandwidth": "the trunks {trunks} have {free:g} free, link {link} needs {bandwidth:g}",
    "hub_bandwidth": (
        "{vnode} has {links} links of {bandwidth:g}; the free hosts and the trunks' free "
        "bandwidth carry at most {bound} of them to any switch that can host it"
    ),
}

_SHOWN = 5  # names listed before "and N more"


def _words(value: Any) -> Any:
    """A value as it reads in a sentence (lists shortened, mappings as ``k: v``)."""
    if isinstance(value, Mapping):
        if "constraint" in value:
            return reason_text(value)
        return ", ".join(f"{k}: {_words(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        items = [str(_words(v)) for v in value]
        if len(items) > _SHOWN:
            return ", ".join(items[:_SHOWN]) + f" and {len(items) - _SHOWN} more"
        return ", ".join(items)
    return value


def reason_text(reason: Any) -> str:
    """One sentence saying why a mapping failed or which constraint it breaks.

    Parameters
    ----------
    reason : dict or None
        A ``result.reason`` or an entry of ``report.violations``: ``{"constraint": ...}``
        and the fields of that constraint.

    Returns
    -------
    str
        The sentence, without a final full stop.

    Examples
    --------
    >>> from coalloc.testbed.reasons import reason_text
    >>> reason_text({"constraint": "slots", "pnode": "pc1", "used": 2.0, "capacity": 1.0})
    'pc1 holds 2 slots of 1'
    >>> reason_text({"constraint": "capacity", "needed": 3, "available": 1,
    ...              "vnodes": ["a", "b", "c"], "candidate_pclasses": ["pc850-0"]})
    'a, b, c need a physical node of the classes pc850-0; 3 are needed and 1 are free'
    """
    if not isinstance(reason, Mapping):
        return "no reason was recorded" if reason is None else str(reason)
    kind = reason.get("constraint", "unknown")
    fields = {k: _words(v) for k, v in reason.items() if k != "constraint"}
    templates = _TEMPLATES.get(str(kind), ())
    for template in (templates,) if isinstance(templates, str) else templates:
        try:
            return template.format(**fields)
        except (KeyError, ValueError, TypeError):
            continue  # a field missing or not a number: the next wording
    details = "; ".join(f"{k.replace('_', ' ')} {v}" for k, v in fields.items())
    kind = str(kind).replace("_", " ")
    return f"constraint {kind} not met" + (f" ({details})" if details else "")
