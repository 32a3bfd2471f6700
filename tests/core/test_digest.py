"""The 15 digest vectors of the spec (§9), canonical JSON and number layouts."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cc_analytics.core import DigestError, canonical_json, compact_json, tool_digest
from cc_analytics.core.jsontext import decode_line, es_float, orjson_float

# (tool, input JSON text, canonical input JSON, digest); <U+FFFF> etc. spelled as escapes.
VECTORS = [
    (
        "Bash",
        '{"command":"ls -la"}',
        '{"command":"ls -la"}',
        "473109e7df1501fda502803c08caa42dda61b300827deca7b92142b7c2b5e4f9",
    ),
    (
        "Bash",
        '{"command":"ls -la","description":"list"}',
        '{"command":"ls -la","description":"list"}',
        "54e2fb2f6c415d06a5d89b70722d77dacb34495892fe7b5f6940fcc76d16d230",
    ),
    (
        "Edit",
        '{"file_path":"/a.py","old_string":"x = 1","new_string":"x = 2"}',
        '{"file_path":"/a.py","new_string":"x = 2","old_string":"x = 1"}',
        "395a09e656b1e3836050eef2d8b12a0a36ba60373c3082ac6acb35ce3e9050e1",
    ),
    (
        "Frob",
        '{"b":1,"a":[1,2.5,null,true,false],"c":{"z":"é","y":"😀"}}',
        '{"a":[1,2.5,null,true,false],"b":1,"c":{"y":"😀","z":"é"}}',
        "15142ec4872f7216ab9d68b4ae77a002b051e2b4f9fc86d49dc27cf59b5410f9",
    ),
    (
        "Frob",
        '{"\\uffff":1,"\\ud83d\\ude00":2,"a":3,"B":4,"\\u00e9":5}',
        '{"B":4,"a":3,"é":5,"😀":2,"\uffff":1}',
        "6b2ede0c9e599ebce0d92dd522885b0d518db9167e3f242d3af69a1478c31bc9",
    ),
    (
        "Frob",
        '{"f":100.0,"g":1e21,"h":1e-7,"i":0.1,"j":-0.0,"k":1.5e300,"l":123456789.123456789,"m":1e20,"n":5e-324}',
        '{"f":100,"g":1e+21,"h":1e-7,"i":0.1,"j":0,"k":1.5e+300,"l":123456789.12345679,'
        '"m":100000000000000000000,"n":5e-324}',
        "0e457189439f4dc4589ca80c61f22dab0504e0bb05ee81d736342ab677d53fad",
    ),
    (
        "Frob",
        '{"s":"tab\\tnl\\nquote\\"bs\\\\ctrl\\u0001del\\u007fls\\u2028/"}',
        '{"s":"tab\\tnl\\nquote\\"bs\\\\ctrl\\u0001del\x7fls\u2028/"}',
        "594cb685e0dd202431ea82c251fe3986c671583c315a40281679e7c48e29b6c5",
    ),
    ("Frob", "{}", "{}", "52d7a95736bbe22e358e70ba9cf50b20b48969e8cac85cddbbb6c9d0d21682a9"),
    (
        "mcp__github__create_issue",
        '{"title":"é bug","body":"b"}',
        '{"body":"b","title":"é bug"}',
        "086a1363aeb442c07f73c430cbf9499dfcffe00b15ce35a8f041bc7124e715ae",
    ),
    (
        "Frob",
        '{"big":9007199254740991,"neg":-9007199254740991,"zero":0}',
        '{"big":9007199254740991,"neg":-9007199254740991,"zero":0}',
        "4fc59269ef1067bb5fefd4e5da67aa929bd9fcad4cab41136ed15537ec3b330f",
    ),
    ("Frob", '{"n":1,"n":2.0}', '{"n":2}', "d7b4ff9942bb15a30167504a6eb4b5922b2c076f145d72c21edb65fb9affd8a4"),
    (
        "Frob",
        '{"x":[1,2.50,-0,1E2,true,null,{"b":[],"a":{}}]}',
        '{"x":[1,2.5,0,100,true,null,{"a":{},"b":[]}]}',
        "ac3eb49a1ca54d091dc56f0807f4cfce6d407dd3cf77ea6935a27af7337683e5",
    ),
    ("AskUserQuestion", '"str"', '"str"', "ccac359f8ef293b129e61576037225c92ae3a75b155aab2e5603da46ff72bd1d"),
    ("Frob", "[1,2]", "[1,2]", "45faf67b2771fc06b6bb8d61ee629bdff32d8a5c74d197bf4f6fc343bce8402d"),
    ("Frob", "null", "null", "e9a7dfecf34940855a57636eb71ce2fc1ea3baa87152063d585fa84f898705a7"),
]


@pytest.mark.parametrize(("tool", "text", "canonical", "digest"), VECTORS, ids=[str(i) for i in range(1, 16)])
def test_digest_vectors(tool, text, canonical, digest):
    value = decode_line(text.encode())
    assert canonical_json(value) == canonical
    assert tool_digest(tool, value) == digest


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"n":9007199254740992}', "integer exceeds IEEE-754 double precision: 9007199254740992"),
        ('{"n":-9007199254740993}', "integer exceeds IEEE-754 double precision: -9007199254740993"),
        ('{"n":1e400}', "number cannot canonicalize: inf"),
        ("[-1e400]", "number cannot canonicalize: -inf"),
    ],
)
def test_unrepresentable_numbers(text, message):
    value = decode_line(text.encode())
    with pytest.raises(DigestError, match=message):
        tool_digest("Frob", value)
    assert len(tool_digest("Frob", value, lenient=True)) == 64


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_es_float_round_trips_and_prints_safe_integers_plainly(x):
    text = es_float(x)
    assert float(text) == x or (x == 0 and text == "0")
    if x.is_integer() and abs(x) < 2**53:
        assert text == str(int(x))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_orjson_float_layout_matches_orjson(x):
    assert orjson_float(x) == orjson.dumps(x).decode()


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
    max_leaves=15,
)


@given(JSON)
def test_compact_json_matches_orjson(value):
    assert compact_json(value) == orjson.dumps(value).decode()


@given(JSON)
def test_canonical_json_parses_back_with_sorted_keys(value):
    try:
        text = canonical_json(value)
    except DigestError:
        return
    assert json.loads(text, parse_int=float) == json.loads(json.dumps(value), parse_int=float)
