"""The shared strict-schema checker (issue 15 item 2): every mistake is one clear error."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coalloc._shared.jsonio import InstanceError
from coalloc._shared.schema import (
    AnyValue,
    Bool,
    Int,
    ListOf,
    MapOf,
    Num,
    Obj,
    OneOf,
    Str,
    TupleOf,
    check,
)

SCHEMA = Obj(
    {
        "name": (Str(), True),
        "kind": (Str(["a", "b"]), False),
        "flag": (Bool(), False),
        "count": (Int(0, 10), False),
        "values": (ListOf(Num(0)), False),
        "pairs": (ListOf(TupleOf(Int(0), Num())), False),
        "props": (MapOf(ListOf(Num())), False),
        "either": (OneOf((list, ListOf(Int())), (dict, Obj({"x": (Int(), True)}))), False),
        "meta": (AnyValue(), False),
    }
)


@pytest.mark.parametrize(
    "doc, message",
    [
        ({}, "f: name: missing (required)"),
        ({"name": "x", "nmae": 1}, "f: nmae: unknown key 'nmae' (allowed here: name, kind"),
        ({"name": 3}, "f: name: expected a string, got the number 3"),
        ({"name": "x", "kind": "c"}, "f: kind: expected one of 'a', 'b', got the string 'c'"),
        ({"name": "x", "flag": "false"}, "f: flag: expected true or false, got the string"),
        ({"name": "x", "flag": 0}, "f: flag: expected true or false, got the number 0"),
        ({"name": "x", "count": True}, "f: count: expected an integer in [0, 10], got the boolean"),
        ({"name": "x", "count": 11}, "f: count: expected an integer in [0, 10], got the number 11"),
        ({"name": "x", "count": 2.0}, "f: count: expected an integer in [0, 10]"),
        ({"name": "x", "values": [1, -1]}, "f: values[1]: expected a finite number >= 0"),
        ({"name": "x", "values": [1, float("nan")]}, "f: values[1]: expected a finite number"),
        ({"name": "x", "pairs": [[1, 2, 3]]}, "f: pairs[0]: expected [an integer >= 0, a finite"),
        ({"name": "x", "pairs": [[-1, 2]]}, "f: pairs[0][0]: expected an integer >= 0"),
        ({"name": "x", "props": {"cpu": ["1"]}}, "f: props.cpu[0]: expected a finite number"),
        ({"name": "x", "either": {"y": 1}}, "f: either.y: unknown key 'y'"),
        ({"name": "x", "either": 5}, "f: either: expected a list of an integer or an object"),
        ({"name": "x", "count": 2**70}, "f: count: expected an integer in [0, 10]"),
        ([], "f: (document): expected an object, got a list of 0"),
    ],
)
def test_mistakes_are_named(doc, message):
    with pytest.raises(InstanceError) as info:
        check(doc, SCHEMA, "f")
    assert str(info.value).startswith(message)


def test_a_valid_document_passes_untouched():
    doc = {
        "name": "x", "kind": "a", "flag": False, "count": 10, "values": [0, 1.5],
        "pairs": [[0, -2.5]], "props": {"cpu": []}, "either": {"x": -3}, "meta": {"any": [1]},
    }  # fmt: skip
    before = json.dumps(doc, sort_keys=True)
    check(doc, SCHEMA, "f")
    assert json.dumps(doc, sort_keys=True) == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_any_json_value_passes_or_gives_one_instance_error(value):
    doc = value if not isinstance(value, dict) else {"name": "x", **value}
    try:
        check(doc, SCHEMA, "f")
    except InstanceError as exc:
        assert str(exc).startswith("f: ")


def test_a_long_unknown_key_is_cut_so_the_message_stays_one_short_line():
    """A damaged file can hold a key of kilobytes (the CI fuzzer's ``formats`` target drew a
    1.5 kB one in a collective pool, kept in ``fuzz/corpus/formats``): the message names it
    cut to ``KEY_SHOWN`` characters, on one line, in the path and in the text."""
    from coalloc._shared.schema import KEY_SHOWN, Int, Obj, check

    key = "format0, 0, 2.9\n" + "x" * 5000
    with pytest.raises(ValueError) as info:
        check({"pool": {key: 1}}, Obj({"pool": (Obj({"n": (Int(), False)}), True)}), "p.json")
    text = str(info.value)
    assert "\n" not in text and len(text) < 3 * KEY_SHOWN + 100, text
    assert text.startswith("p.json: pool[") and "unknown key 'format0, 0, 2.9\\n" in text
    assert "..." in text
