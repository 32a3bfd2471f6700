"""ContextWindow wire format: byte-stable to_json, strict from_json, round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cc_analytics.core import (
    AskUserQuestionPreview,
    Budget,
    ContextWindow,
    EventRef,
    Question,
    SchemaError,
    TextPreview,
    ToolCallPreview,
    TurnRef,
)

CAPTURED = (
    '{"after":[],"anchor":{"event_uuid":"a1","session_id":"S1","tool_use_id":"tu1"},"before":[{"preview":"",'
    '"previews":[],"refs":[],"role":"assistant","tool_digests":[]}],"fidelity":"full","preview_chars":12,'
    '"preview_schema":"cc-transcript.preview/1","schema":"cc-transcript.context/2","trigger":null}'
)
LEGACY = (
    '{"after":[],"anchor":{"event_uuid":"u","session_id":"S","tool_use_id":null},"before":[{"preview":"p",'
    '"refs":[{"event_uuid":"u","session_id":"S","tool_use_id":null}],"role":"user","tool_digests":["d"]}],'
    '"fidelity":"summary","preview_chars":200,"schema":"cc-transcript.context/2","trigger":null}'
)

text = st.text(max_size=12)
refs = st.builds(EventRef, text, text, st.none() | text)
previews = st.one_of(
    st.builds(TextPreview, text),
    st.builds(ToolCallPreview, text, text, text),
    st.builds(
        AskUserQuestionPreview,
        st.lists(st.builds(Question, text, st.none() | text, st.booleans(), st.lists(text, max_size=3)), max_size=2),
        st.dictionaries(text, text, max_size=3),
        st.dictionaries(text, text, max_size=3),
    ),
)
turn_refs = st.builds(
    TurnRef,
    st.sampled_from(["user", "assistant"]),
    st.lists(refs, max_size=3),
    text,
    st.lists(text, max_size=2),
    st.none() | st.lists(previews, max_size=3),
)
windows = st.builds(
    ContextWindow,
    refs,
    st.lists(turn_refs, max_size=3),
    st.none() | turn_refs,
    st.lists(turn_refs, max_size=2),
    st.sampled_from(["full", "summary"]),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([None, "cc-transcript.preview/1"]),
)


def _reference_dumps(window: ContextWindow) -> str:
    obj = {
        "after": [t.to_wire() for t in window.after],
        "anchor": {
            "event_uuid": window.anchor.event_uuid,
            "session_id": window.anchor.session_id,
            "tool_use_id": window.anchor.tool_use_id,
        },
        "before": [t.to_wire() for t in window.before],
        "fidelity": window.fidelity,
        "preview_chars": window.preview_chars,
        "schema": "cc-transcript.context/2",
        "trigger": None if window.trigger is None else window.trigger.to_wire(),
    }
    if window.preview_schema is not None:
        obj["preview_schema"] = window.preview_schema
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


@given(windows)
def test_round_trip(window):
    text = window.to_json()
    assert text == _reference_dumps(window)
    back = ContextWindow.from_json(text)
    assert back == window
    assert hash(back) == hash(window)
    assert back.to_json() == text
    assert ContextWindow.from_json(text.encode()) == window


@pytest.mark.parametrize("doc", [CAPTURED, LEGACY])
def test_canonical_documents_round_trip(doc):
    assert ContextWindow.from_json(doc).to_json() == doc


def test_whitespace_and_key_order_come_back_canonical():
    messy = json.dumps(json.loads(LEGACY), indent=2, sort_keys=False)
    assert ContextWindow.from_json(messy).to_json() == LEGACY


def test_escapes_follow_json_dumps():
    ref = TurnRef("user", (), 'a\x01\x7f\u2028"\\/é😀\t', (), ())
    assert ref.to_json().startswith('{"preview":"a\\u0001\x7f\u2028\\"\\\\/é😀\\t"')


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("null", "expected schema 'cc-transcript.context/2', got: null"),
        ("[]", "expected schema 'cc-transcript.context/2', got: []"),
        ('{"schema":"cc-transcript.context/1"}', "expected schema 'cc-transcript.context/2', got: {\"schema\""),
        (
            CAPTURED.replace("preview/1", "preview/2"),
            "expected preview schema 'cc-transcript.preview/1', got: 'cc-transcript.preview/2'",
        ),
        (
            CAPTURED.replace('"cc-transcript.preview/1"', "5"),
            "expected preview schema 'cc-transcript.preview/1', got: 5",
        ),
        (
            LEGACY.replace('"preview":"p",', '"preview":"p","previews":[{"kind":"image"}],'),
            "unknown preview kind: 'image'",
        ),
        (LEGACY.replace('"preview":"p",', '"preview":"p","previews":[{"kind":null}],'), "unknown preview kind: None"),
    ],
)
def test_schema_errors_match_the_reference(doc, message):
    with pytest.raises(SchemaError) as info:
        ContextWindow.from_json(doc)
    assert str(info.value).startswith(message)


def test_bytes_head_is_a_bytes_literal():
    with pytest.raises(SchemaError, match=r"got: b'\{\"schema\":1\}'"):
        ContextWindow.from_json(b'{"schema":1}')


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.pop("anchor"), "missing key 'anchor'"),
        (lambda d: d.update(anchor=None), "window.anchor: expected an object"),
        (lambda d: d.update(before=None), "window.before: expected an array"),
        (lambda d: d["before"][0].pop("refs"), "window.before[0]: missing key 'refs'"),
        (lambda d: d["before"][0]["refs"][0].pop("tool_use_id"), "window.before[0].refs[0]: missing key 'tool_use_id'"),
        (lambda d: d["before"][0].update(previews=None), "window.before[0].previews: expected an array"),
        (lambda d: d["before"][0].update(previews=[{}]), "window.before[0].previews[0]: missing key 'kind'"),
        (lambda d: d["before"][0].update(previews=[{"kind": "tool_call", "name": "x"}]), "missing key 'digest'"),
        (
            lambda d: d["before"][0].update(
                previews=[
                    {
                        "kind": "ask_user_question",
                        "questions": [{"question": 1, "header": None, "multi_select": False, "labels": []}],
                        "selections": {},
                        "notes": {},
                    }
                ]
            ),
            "questions[0].question: expected a string",
        ),
        (
            lambda d: d["before"][0].update(
                previews=[
                    {
                        "kind": "ask_user_question",
                        "questions": [{"question": "q", "header": None, "multi_select": 1, "labels": []}],
                        "selections": {},
                        "notes": {},
                    }
                ]
            ),
            "multi_select: expected a boolean",
        ),
        (
            lambda d: d["before"][0].update(
                previews=[{"kind": "ask_user_question", "questions": [], "selections": "ab", "notes": {}}]
            ),
            "selections: expected",
        ),
    ],
)
def test_malformed_documents_raise_schema_error_naming_the_field(change, field):
    doc = json.loads(LEGACY)
    change(doc)
    with pytest.raises(SchemaError, match=field.replace("[", r"\[").replace("]", r"\]")):
        ContextWindow.from_json(json.dumps(doc))


def test_invalid_json_is_a_decode_error():
    with pytest.raises(json.JSONDecodeError):
        ContextWindow.from_json("{")


def test_extra_keys_are_dropped():
    doc = json.loads(LEGACY)
    doc["extra"] = "dropped"
    doc["before"][0]["extra"] = {"also": 1}
    assert ContextWindow.from_json(json.dumps(doc)).to_json() == LEGACY


def _ask(**question) -> dict:
    base = {"question": "q", "header": None, "multi_select": True, "labels": []}
    return {"kind": "ask_user_question", "questions": [base | question], "selections": {}, "notes": {}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # values the reference accepts and re-serialises, or fails on later in render_preview
        (lambda d: d.update(fidelity=3), "window.fidelity: expected 'full' or 'summary', got 3"),
        (lambda d: d.update(fidelity="bogus"), "window.fidelity: expected 'full' or 'summary', got 'bogus'"),
        (lambda d: d.update(preview_chars=1e2), "window.preview_chars: expected an integer, got 100.0"),
        (lambda d: d.update(preview_chars="200"), "window.preview_chars: expected an integer, got '200'"),
        (lambda d: d.update(preview_chars=True), "window.preview_chars: expected an integer, got True"),
        (lambda d: d.update(before={}), "window.before: expected an array, got {}"),
        (
            lambda d: d["before"][0].update(role="bogus"),
            "window.before[0].role: expected 'user' or 'assistant', got 'bogus'",
        ),
        (lambda d: d["before"][0].update(preview=5), "window.before[0].preview: expected a string, got 5"),
        (lambda d: d["before"][0].update(preview=["p"]), "window.before[0].preview: expected a string, got ['p']"),
        (
            lambda d: d["before"][0].update(tool_digests="abc"),
            "window.before[0].tool_digests: expected an array, got 'abc'",
        ),
        (
            lambda d: d["before"][0].update(tool_digests=[1]),
            "window.before[0].tool_digests[0]: expected a string, got 1",
        ),
        (lambda d: d["anchor"].update(session_id=7), "window.anchor.session_id: expected a string, got 7"),
        (lambda d: d["anchor"].update(event_uuid={}), "window.anchor.event_uuid: expected a string, got {}"),
        (
            lambda d: d["before"][0]["refs"][0].update(tool_use_id=[]),
            "window.before[0].refs[0].tool_use_id: expected a string or null, got []",
        ),
        (
            lambda d: d["before"][0].update(previews=[{"kind": "text", "text": 1.5}]),
            "window.before[0].previews[0].text: expected a string, got 1.5",
        ),
        (
            lambda d: d["before"][0].update(
                previews=[{"kind": "tool_call", "name": "x", "digest": None, "summary": ""}]
            ),
            "window.before[0].previews[0].digest: expected a string, got None",
        ),
        (
            lambda d: d["before"][0].update(previews=[_ask(labels="ab")]),
            "window.before[0].previews[0].questions[0].labels: expected an array, got 'ab'",
        ),
        (
            lambda d: d["before"][0].update(previews=[_ask() | {"selections": [["b", "1"]]}]),
            "window.before[0].previews[0].selections: expected an object of strings, got [['b', '1']]",
        ),
        (
            lambda d: d["before"][0].update(previews=[_ask() | {"notes": {"q": 1}}]),
            "window.before[0].previews[0].notes['q']: expected a string, got 1",
        ),
        (
            lambda d: d["before"][0].update(preview=[[[[["deep"]]]]]),
            "window.before[0].preview: expected a string, got [[[[...]]]]",
        ),
    ],
)
def test_mistyped_fields_raise_schema_error_naming_field_and_value(change, message):
    doc = json.loads(LEGACY)
    change(doc)
    with pytest.raises(SchemaError) as info:
        ContextWindow.from_json(json.dumps(doc))
    assert str(info.value) == message


@pytest.mark.parametrize(
    "data",
    [
        b'{"schema":"cc-transcript.context/2","x":"\xff"}',
        '{"schema":"cc-transcript.context/2","preview_chars":' + "9" * 5000 + "}",
    ],
)
def test_unreadable_documents_raise_schema_error(data):
    with pytest.raises(SchemaError, match="^window: unreadable document"):
        ContextWindow.from_json(data)


def test_deep_documents_raise_schema_error():
    with pytest.raises(SchemaError, match="nested too deeply"):
        ContextWindow.from_json("[" * 100_000 + "]" * 100_000)


def test_render_preview_clips_each_turn_and_labels_summary():
    window = ContextWindow.from_json(LEGACY)
    assert window.render_preview(budget=Budget()) == "[summary fidelity — transcript unavailable]\n\np"
    long = TurnRef("user", (), "x" * 39, (), ())
    w = ContextWindow(EventRef("S", "u"), (long,), long, (), "full", 200)
    assert w.render_preview(budget=Budget(turn_chars=-1)) == ("x" * 38 + "…(+40ch)\n\n") * 1 + "x" * 38 + "…(+40ch)"
    assert w.render_preview(budget=Budget(turn_chars=0)) == "…(+39ch)\n\n…(+39ch)"
