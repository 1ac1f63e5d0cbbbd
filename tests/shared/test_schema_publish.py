"""The published JSON Schemas (issue 23 item 8): generated, shipped, and agreeing with the readers.

* the shipped ``src/coalloc/<family>/schemas/<format>.schema.json`` files are what the
  converter makes of the readers' checker definitions today (regenerate with
  ``python -c "from coalloc.formats import write_schemas; write_schemas()"``);
* every example and fixture file of every family (the fuzz corpus, the packaged demo, and
  the examples each family's ``FamilySpec.formats`` declares, written by its writers) is
  valid under ``jsonschema`` and read by coalloc;
* on hypothesis-made mutations of those files, ``jsonschema`` and the readers' checker
  accept and refuse the same documents (the one documented difference, ``2.0`` read as an
  integer by JSON Schema, is told to the validator as a type rule).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict, List

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coalloc._shared.family import families
from coalloc._shared.jsonio import InstanceError
from coalloc.formats import FORMATS, build_schema, check_document, schema_for, schema_text

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted(ROOT.glob("fuzz/corpus/*/*.json")) + [
    ROOT / "src" / "coalloc" / "ctaap" / "data" / "demo.json"
]


def _validator(fmt: str, *, strict_integers: bool = False):
    schema = schema_for(fmt)
    cls = jsonschema.Draft202012Validator
    if strict_integers:  # the readers refuse 2.0 where an integer belongs; JSON Schema cannot
        checker = cls.TYPE_CHECKER.redefine(
            "integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool)
        )
        cls = jsonschema.validators.extend(cls, type_checker=checker)
    return cls(schema)


def _checker_accepts(fmt: str, data: Any) -> bool:
    try:
        check_document(fmt, data, "f")
    except InstanceError:
        return False
    return True


def _written_examples() -> Dict[str, List[Any]]:
    """Files written by each family's writers: its formats' declared examples."""
    out: Dict[str, List[Any]] = {}
    for spec in families().values():
        for fmt in spec.formats:
            for data in fmt.examples() if fmt.examples else []:
                assert data["format"] == fmt.name
                out.setdefault(fmt.name, []).append(data)
    return out


#: Corpus files kept as the fuzzers' reproducers (issue 30: a 400-digit number, an
#: overflow): examples where the readers accept them, else refusals that the published
#: schema must refuse too.
REPRODUCERS = [p for p in FIXTURES if p.name.startswith("issue30-")]
REFUSED = [p for p in REPRODUCERS
           if not _checker_accepts((d := json.loads(p.read_text()))["format"], d)]  # fmt: skip


@pytest.fixture(scope="module")
def examples() -> Dict[str, List[Any]]:
    out: Dict[str, List[Any]] = {}
    for p in FIXTURES:
        if p in REFUSED:
            continue
        data = json.loads(p.read_text())
        out.setdefault(data["format"], []).append(data)
    for fmt, docs in _written_examples().items():
        out.setdefault(fmt, []).extend(docs)
    return out


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_shipped_schema_is_what_the_checker_definition_generates(fmt):
    shipped = schema_text(fmt)
    regenerated = json.dumps(build_schema(fmt), indent=2) + "\n"
    assert shipped == regenerated, (
        f"src/coalloc/<family>/schemas/{fmt}.schema.json is stale: run "
        "python -c 'from coalloc.formats import write_schemas; write_schemas()'"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(shipped))


def test_every_schema_file_in_the_package_is_a_listed_format_of_its_family():
    package = ROOT / "src" / "coalloc"
    on_disk = sorted(p.name[: -len(".schema.json")] for p in package.rglob("*.schema.json"))
    assert on_disk == sorted(FORMATS)
    for name, spec in families().items():
        here = sorted(p.name[: -len(".schema.json")]
                      for p in (package / name / "schemas").glob("*.schema.json"))  # fmt: skip
        assert here == sorted(f.name for f in spec.formats), name


def test_every_format_has_an_example(examples):
    assert sorted(examples) == sorted(FORMATS)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_example_is_valid_under_jsonschema_and_the_checker(fmt, examples):
    validator = _validator(fmt)
    for data in examples[fmt]:
        errors = [e.message for e in validator.iter_errors(data)]
        assert errors == [], errors[:3]
        assert _checker_accepts(fmt, data)


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_corpus_reproducers_are_refused_by_both(path):
    data = json.loads(path.read_text())
    fmt = data["format"]
    assert not _validator(fmt, strict_integers=True).is_valid(data)


def test_a_wrong_format_name_is_refused_by_both():
    data = json.loads((ROOT / "fuzz/corpus/instances/loadshare.json").read_text())
    data["format"] = "coalloc.instance"
    assert not _validator("coalloc.loadshare.instance").is_valid(data)
    assert not _checker_accepts("coalloc.loadshare.instance", data)


def test_unknown_format_is_a_clear_error():
    with pytest.raises(ValueError, match="format must be one of coalloc.instance"):
        schema_for("coalloc.nope")


# -- mutations ------------------------------------------------------------------------------

# Empty containers are built afresh for every draw: a ``[]`` inside ``sampled_from`` is one
# object shared by every test case, which a later mutation appended to, so that hypothesis
# saw its strategy change between cases (FlakyStrategyDefinition in a CI run).
_SCALARS = st.one_of(
    st.sampled_from([None, True, False, 0, 1, -1, 0.5, 2.0, -0.0, "", "*", "x"]),
    st.builds(list),
    st.builds(dict),
    st.sampled_from(["limit", "disallow", "pc", "cpu", "names", "format", "version"]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)


def _containers(data: Any, path=()) -> List[tuple]:
    out = [path]
    items = data.items() if isinstance(data, dict) else enumerate(data)
    for key, value in items:
        if isinstance(value, (dict, list)):
            out.extend(_containers(value, (*path, key)))
    return out


@st.composite
def _mutation(draw, doc: Any) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 2))):
        where = draw(st.sampled_from(_containers(doc)))
        node = doc
        for key in where:
            node = node[key]
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        op = draw(st.sampled_from(["replace", "delete", "add", "copy"]))
        if op == "add" or not keys:
            if isinstance(node, dict):
                name = draw(st.one_of(st.sampled_from(["metadata", "bandwith", "x"]), st.text()))
                node[name] = draw(_VALUES)
            else:
                node.append(draw(_VALUES))
            continue
        key = draw(st.sampled_from(keys))
        if op == "replace":
            node[key] = draw(_VALUES)
        elif op == "delete":
            del node[key]
        else:  # another item's value in this place (types that are almost right)
            node[key] = copy.deepcopy(node[draw(st.sampled_from(keys))])
    return doc


@pytest.mark.parametrize("fmt", list(FORMATS))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_jsonschema_and_the_checker_agree_on_mutations(fmt, examples, data):
    base = data.draw(st.sampled_from(examples[fmt]))
    doc = data.draw(_mutation(base))
    by_jsonschema = _validator(fmt, strict_integers=True).is_valid(doc)
    assert by_jsonschema == _checker_accepts(fmt, doc), json.dumps(doc)[:400]


def test_the_cli_prints_the_shipped_schema_and_lists_the_formats(capsys):
    from coalloc.cli import main

    assert main(["schema", "coalloc.collective.pool"]) == 0
    assert json.loads(capsys.readouterr().out) == schema_for("coalloc.collective.pool")
    assert main(["schema"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert listed == list(FORMATS)
    assert main(["schema", "coalloc.nope"]) == 2
    assert "format must be one of" in capsys.readouterr().err
