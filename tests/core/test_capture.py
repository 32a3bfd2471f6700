"""Capture: the spec's worked examples, argument checking, lenient parsing, hydration, turns."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from cc_analytics.core import (
    Budget,
    ContextWindow,
    EventRef,
    TranscriptWarning,
    capture_window,
    capture_windows,
    hydrate_windows,
    lift_turns,
)
from tests.golden.builders import assistant, jsonl, text, tool_result, tool_use, user

EXAMPLE_131 = (
    '{"type":"permission-mode","permissionMode":"default","sessionId":"S1"}\n'
    '{"type":"user","uuid":"u1","sessionId":"S1","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"Fix add() in calc.py"}}\n'
    '{"type":"assistant","uuid":"a1","sessionId":"S1","timestamp":"2026-03-01T10:00:01Z","message":{"model":"claude-opus-4-7","content":[{"type":"thinking","thinking":"..."},{"type":"text","text":"Looking."},{"type":"tool_use","id":"tu1","name":"Edit","input":{"file_path":"calc.py","old_string":"a - b","new_string":"a + b"}}]}}\n'
    '{"type":"user","uuid":"r1","sessionId":"S1","timestamp":"2026-03-01T10:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"ok"}]}}\n'
    '{"type":"user","uuid":"u2","sessionId":"S1","timestamp":"2026-03-01T10:00:03Z","message":{"role":"user","content":"now run the tests"}}\n'
    '{"type":"assistant","uuid":"a2","sessionId":"S1","timestamp":"2026-03-01T10:00:04Z","message":{"model":"claude-opus-4-7","content":[{"type":"tool_use","id":"tu2","name":"Bash","input":{"command":"pytest -q"}}]}}\n'
)
EXPECTED_131 = (
    '{"after":[{"preview":"user: now run the …(+5ch)\\npytest -q","previews":[{"kind":"text","text":"now r'
    'un the …(+5ch)"},{"digest":"c69b69882618f630223e80272e57dc1a0d8960e9e56fb8bdd8e0248cb24ce999","kind"'
    ':"tool_call","name":"Bash","summary":"pytest -q"}],"refs":[{"event_uuid":"u2","session_id":"S1","too'
    'l_use_id":null},{"event_uuid":"a2","session_id":"S1","tool_use_id":null}],"role":"user","tool_digest'
    's":["c69b69882618f630223e80272e57dc1a0d8960e9e56fb8bdd8e0248cb24ce999"]}],"anchor":{"event_uuid":"a1'
    '","session_id":"S1","tool_use_id":"tu1"},"before":[{"preview":"","previews":[],"refs":[],"role":"ass'
    'istant","tool_digests":[]}],"fidelity":"full","preview_chars":12,"preview_schema":"cc-transcript.pre'
    'view/1","schema":"cc-transcript.context/2","trigger":{"preview":"user: Fix add() in…(+8ch)\\nassistan'
    't: Looking.\\nEdit calc.py\\n- a - b\\n+ a + b","previews":[{"kind":"text","text":"Fix add() in…(+8ch)"'
    '},{"kind":"text","text":"Looking."},{"digest":"516cbf63e79a64d550f13fecc666a547d6a37cc65585559a6d615'
    '4324ed7bca3","kind":"tool_call","name":"Edit","summary":"Edit calc.py\\n- a - b\\n+ a + b"}],"refs":[{'
    '"event_uuid":"u1","session_id":"S1","tool_use_id":null},{"event_uuid":"a1","session_id":"S1","tool_u'
    'se_id":null},{"event_uuid":"r1","session_id":"S1","tool_use_id":null}],"role":"user","tool_digests":'
    '["516cbf63e79a64d550f13fecc666a547d6a37cc65585559a6d6154324ed7bca3"]}}'
)
EXAMPLE_132 = (
    '{"type":"user","uuid":"u1","sessionId":"S1","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"pick a db"}}\n'
    '{"type":"assistant","uuid":"a1","sessionId":"S1","timestamp":"2026-03-01T10:00:01Z","message":{"model":"m","content":[{"type":"tool_use","id":"q1","name":"AskUserQuestion","input":{"questions":[{"question":"Which DB?","header":"DB","multiSelect":false,"options":[{"label":"Postgres (Recommended)","description":"managed"},{"label":"SQLite"}]}]}}]}}\n'
    '{"type":"user","uuid":"r1","sessionId":"S1","timestamp":"2026-03-01T10:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"q1","content":"User has answered your questions: ..."}]},"toolUseResult":{"questions":[{"question":"Which DB?","options":[{"label":"Postgres (Recommended)","description":"managed","preview":"PG16"},{"label":"SQLite"}]}],"answers":{"Which DB?":"Postgres (Recommended)"},"annotations":{"Which DB?":{"notes":"use RDS"}}}}\n'
    '{"type":"attachment","uuid":"q9","sessionId":"S1","timestamp":"2026-03-01T10:00:03Z","attachment":{"type":"queued_command","prompt":"also add indexes","commandMode":"prompt","origin":{"kind":"human"}}}\n'
    '{"type":"attachment","uuid":"q8","sessionId":"S1","timestamp":"2026-03-01T10:00:04Z","attachment":{"type":"queued_command","prompt":"<task-notification>done</task-notification>","commandMode":"task-notification"}}\n'
    '{"type":"assistant","uuid":"a2","sessionId":"S1","timestamp":"2026-03-01T10:00:05Z","message":{"model":"m","content":[{"type":"text","text":"Going with Postgres."}]}}\n'
)
EXPECTED_132 = (
    '{"after":[],"anchor":{"event_uuid":"a1","session_id":"S1","tool_use_id":"q1"},"before":[],"fidelity"'
    ':"full","preview_chars":60,"preview_schema":"cc-transcript.preview/1","schema":"cc-transcript.contex'
    't/2","trigger":{"preview":"user: pick a db\\nAskUserQuestion({\\"questions\\":[{\\"question\\":\\"Which DB'
    '?\\",\\"header\\":\\"DB\\",\\"multiSe…(+104ch))\\nuser answered: Which DB? -> Postgres (Recommended)\\n  opt'
    "ion: managed\\n  preview: PG16\\n  notes: use RDS\\nuser: also add indexes\\nnotification: <task-notific"
    'ation>done</task-notification>\\nassistant: Going with Postgres.","previews":[{"kind":"text","text":"'
    'pick a db"},{"kind":"ask_user_question","notes":{"Which DB?":"use RDS"},"questions":[{"header":"DB",'
    '"labels":["Postgres (Recommended)","SQLite"],"multi_select":false,"question":"Which DB?"}],"selectio'
    'ns":{"Which DB?":"Postgres (Recommended)"}},{"kind":"text","text":"also add indexes"},{"kind":"text"'
    ',"text":"Going with Postgres."}],"refs":[{"event_uuid":"u1","session_id":"S1","tool_use_id":null},{"'
    'event_uuid":"a1","session_id":"S1","tool_use_id":null},{"event_uuid":"r1","session_id":"S1","tool_us'
    'e_id":null},{"event_uuid":"q9","session_id":"S1","tool_use_id":null},{"event_uuid":"q8","session_id"'
    ':"S1","tool_use_id":null},{"event_uuid":"a2","session_id":"S1","tool_use_id":null}],"role":"user","t'
    'ool_digests":["0d9db1318aa5116daa1b2c7d084805bc50bcf021f608a83d0ff9490eeac07c18"]}}'
)
RAW_131 = EXAMPLE_131.encode()
RAW_132 = EXAMPLE_132.encode()


def test_worked_example_13_1():
    window = capture_window(RAW_131, EventRef("S1", "a1", "tu1"), before=6, after=2, preview_chars=12)
    assert window.to_json() == EXPECTED_131
    assert window.render_preview(budget=Budget()) == (
        "user: Fix add() in…(+8ch)\nassistant: Looking.\nEdit calc.py\n- a - b\n+ a + b\n\n"
        "user: now run the …(+5ch)\npytest -q"
    )
    assert window.render_preview(budget=Budget(turn_chars=5)) == "user:…(+69ch)\n\nuser:…(+30ch)"
    assert ContextWindow.from_json(EXPECTED_131) == window


def test_worked_example_13_2():
    window = capture_window(RAW_132, EventRef("S1", "a1", "q1"), before=0, after=0, preview_chars=60)
    assert window.to_json() == EXPECTED_132


def test_hydration_of_the_worked_example(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "S1.jsonl").write_bytes(RAW_131)
    full = capture_window(RAW_131, EventRef("S1", "a1"), before=6)
    assert full.hydrate(root=tmp_path) is None  # the ref-less turn 0 never hydrates
    narrow = capture_window(RAW_131, EventRef("S1", "a1"), before=0, preview_chars=10**6)
    hydrated = narrow.hydrate(root=tmp_path)
    assert hydrated is not None
    assert hydrated.render(budget=Budget(10**6, 10**6)) == narrow.render_preview(budget=Budget(10**6))
    with pytest.raises(OverflowError):
        hydrated.render(budget=Budget(turn_chars=-1))
    assert capture_window(RAW_131, EventRef("gone", "a1"), before=0).hydrate(root=tmp_path) is None
    (project / "S1.jsonl").write_bytes(RAW_131.replace(b'"u2"', b'"u9"'))
    assert hydrate_windows([narrow], root=tmp_path) == [None]


def test_batches_keep_order_and_duplicates_and_report_the_first_unknown_anchor():
    a, b = EventRef("S1", "a2"), EventRef("S1", "u1")
    got = capture_windows(RAW_131, [a, b, a])
    assert [w.anchor for w in got] == [a, b, a]
    assert got[0].trigger is got[2].trigger  # one TurnRef per turn, shared
    with pytest.raises(ValueError, match="^anchor nope not found in session X$"):
        capture_windows(RAW_131, [a, EventRef("X", "nope"), EventRef("Y", "nope2")])
    assert capture_windows(b"\xff garbage", []) == []


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: capture_windows("x", []), TypeError, "argument 'raw': 'str' object is not an instance of 'bytes'"),
        (lambda: capture_windows(None, []), TypeError, "argument 'raw': 'None' is not an instance of 'bytes'"),
        (lambda: capture_window(b"", ("S", "u1", None)), AttributeError, "'tuple' object has no attribute"),
        (lambda: capture_windows(b"", EventRef("S", "u")), TypeError, "'EventRef' object is not iterable"),
        (lambda: capture_window(b"", EventRef(None, "u")), TypeError, "argument 'anchors': 'None' is not an instance"),
        (lambda: capture_window(b"", EventRef("S", 5)), TypeError, "argument 'anchors': 'int' object is not an"),
        (
            lambda: capture_windows(b"", [], before=1.5),
            TypeError,
            "argument 'before': 'float' object cannot be interpreted as an integer",
        ),
        (lambda: capture_windows(b"", [], after=-1), OverflowError, "can't convert negative int to unsigned"),
        (lambda: capture_windows(b"", [], after=2**64), OverflowError, "int too big to convert"),
        (lambda: capture_windows(b"", [], preview_chars=2**63), OverflowError, "Python int too large"),
        (lambda: capture_window(b"", EventRef("S", "u")), ValueError, "anchor u not found in session S"),
    ],
)
def test_argument_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_edges_of_before_and_after():
    raw = jsonl([user(f"u{i}", i, f"p{i}") for i in range(5)])
    w = capture_window(raw, EventRef("S", "u0"), before=True, after=2**64 - 1)
    assert len(w.before) == 0 and len(w.after) == 4
    w = capture_window(raw, EventRef("S", "u4"), before=10**6, after=0, preview_chars=-3)
    assert len(w.before) == 4 and w.preview_chars == -3 and w.trigger.preview == "user: …(+2ch)"


BAD_LINES = {
    "missing uuid": (
        b'{"type":"user","sessionId":"S","timestamp":"2026-03-01T10:00:00Z","message":{"content":"x"}}',
        "KeyError: \"'uuid'\"",
    ),
    "big integer": (
        b'{"type":"assistant","uuid":"b","sessionId":"S","timestamp":"2026-03-01T10:00:00Z","message":'
        b'{"model":"m","content":[{"type":"tool_use","id":"t","name":"F","input":{"n":9007199254740993}}]}}',
        "integer exceeds IEEE-754 double precision",
    ),
    "infinity": (
        b'{"type":"assistant","uuid":"b","sessionId":"S","timestamp":"2026-03-01T10:00:00Z","message":'
        b'{"model":"m","content":[{"type":"tool_use","id":"t","name":"F","input":{"n":1e400}}]}}',
        "number cannot canonicalize: inf",
    ),
    "timestamp": (
        b'{"type":"user","uuid":"b","sessionId":"S","timestamp":"2026-06-30T23:59:60Z","message":{"content":"leap"}}',
        'invalid timestamp "2026-06-30T23:59:60Z": leap second',
    ),
    "string content": (
        b'{"type":"assistant","uuid":"b","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",'
        b'"message":{"model":"m","content":"plain"}}',
        "message content is neither",
    ),
    "usage": (
        b'{"type":"assistant","uuid":"b","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",'
        b'"message":{"model":"m","content":[],"usage":{"input_tokens":1}}}',
        "KeyError: \"'output_tokens'\"",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_lines_warn_with_file_and_line_and_capture_goes_on(case):
    line, reason = BAD_LINES[case]
    raw = jsonl([user("u1", 0, "first"), assistant("a1", 1, [text("ok")]), line, user("u2", 3, "second")])
    with pytest.warns(TranscriptWarning) as caught:
        window = capture_window(raw, EventRef("S", "u2"), source="t.jsonl")
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("t.jsonl:3: ") and reason in m for m in messages), messages
    assert window.trigger.preview == "user: second"
    with pytest.raises((KeyError, ValueError)) as info:  # the reference's behaviour, on request
        capture_window(raw, EventRef("S", "u2"), strict=True)
    assert reason.split(": ", 1)[-1].strip('"') in str(info.value)


def test_string_content_is_read_as_text_and_big_numbers_still_digest():
    raw = jsonl([user("u1", 0, "go")]) + BAD_LINES["string content"][0] + b"\n" + BAD_LINES["big integer"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)
        window = capture_window(raw, EventRef("S", "u1"))
    assert window.trigger.preview == 'user: go\nassistant: plain\nF({"n":9007199254740993})'
    assert len(window.trigger.tool_digests) == 1


def test_lift_turns_contract():
    raw = jsonl(
        [
            {"type": "summary", "summary": "t"},
            assistant("a0", 0, [text("before any prompt")]),
            user("u1", 1, "hello"),
            assistant("a1", 2, [tool_use("t1", "Bash", {"command": "ls"})]),
            user("r1", 3, [tool_result("t1", "ok")]),
            user("m1", 4, "caveat", isMeta=True),
            user("u2", 5, "again", sessionId="OTHER"),
        ]
    )
    turns = lift_turns(raw)
    assert [(t.index, t.role, [r.event_uuid for r in t.refs]) for t in turns] == [
        (0, "assistant", ["a0"]),
        (1, "user", ["u1", "a1", "r1", "m1"]),
        (2, "user", ["u2"]),
    ]
    assert turns[2].refs[0].session_id == "OTHER"


def test_core_imports_no_polars():
    code = "import sys, cc_analytics.core; sys.exit('polars' in sys.modules or 'orjson' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env=dict(os.environ)).returncode == 0


def test_core_imports_only_the_standard_library():
    import ast
    from pathlib import Path

    core = Path(__file__).resolve().parents[2] / "cc_analytics" / "core"
    allowed = set(sys.stdlib_module_names) | {"cc_analytics"}
    # ... and the JSON line policy it reads lines by (outside the core so that the frames
    # decoders import it without the core) and the lazy attributes of its package (PEP 562),
    # which reach nothing else of the package.
    leaves = ("jsonline.py", "lazy.py")
    for path in [*core.glob("*.py"), *(core.parent / leaf for leaf in leaves)]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"
                if name.startswith("cc_analytics."):
                    assert path.name not in leaves, f"{path.name}: {name}"
                    reachable = (
                        "cc_analytics.core",
                        "cc_analytics.errors",
                        "cc_analytics.jsonline",
                        "cc_analytics.lazy",
                    )
                    assert name.startswith(reachable), f"{path.name}: {name}"
