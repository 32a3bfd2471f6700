"""``cc-analytics window``: JSON or rendered output, one-line errors, exit codes."""

from __future__ import annotations

import json

from cc_analytics.cli import main
from tests.golden.builders import assistant, jsonl, text, user

RAW = jsonl([user("u1", 0, "hello"), assistant("a1", 1, [text("hi there")]), user("u2", 2, "bye")])


def _run(capsys, *args):
    code = main(["window", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_window_json(tmp_path, capsys):
    path = tmp_path / "S.jsonl"
    path.write_bytes(RAW)
    code, out, err = _run(capsys, path, "--uuid", "a1", "--tool-use-id", "t9", "--after", "0")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["anchor"] == {"event_uuid": "a1", "session_id": "S", "tool_use_id": "t9"}
    assert doc["after"] == [] and doc["trigger"]["preview"] == "user: hello\nassistant: hi there"


def test_render(tmp_path, capsys):
    path = tmp_path / "S.jsonl"
    path.write_bytes(RAW)
    code, out, _ = _run(capsys, path, "--uuid", "u2", "--render", "--preview-chars", "3")
    assert code == 0 and out == "user: hel…(+2ch)\nassistant: hi …(+5ch)\n\nuser: bye\n"


def test_errors_are_one_line(tmp_path, capsys):
    path = tmp_path / "S.jsonl"
    path.write_bytes(RAW + b'{"type":"user","sessionId":"S"}\n')
    for args, needle in [
        ((tmp_path / "missing.jsonl", "--uuid", "u1"), "cannot read"),
        ((tmp_path, "--uuid", "u1"), "cannot read"),
        ((path, "--uuid", "nope"), "anchor nope not found in session S"),
        ((path, "--uuid", "u1", "--before", "-1"), "--before must be 0 or more"),
    ]:
        code, out, err = _run(capsys, *args)
        assert code == 1 and out == ""
        lines = [line for line in err.splitlines() if not line.startswith("cc-analytics: warning: ")]
        assert len(lines) == 1 and lines[0].startswith("cc-analytics: error: ") and needle in lines[0], err


def test_malformed_line_warns_on_stderr_and_still_prints(tmp_path, capsys):
    path = tmp_path / "S.jsonl"
    path.write_bytes(RAW + b'{"type":"user","sessionId":"S","timestamp":"x","message":{"content":"x"}}\n')
    code, out, err = _run(capsys, path, "--uuid", "u1")
    assert code == 0 and json.loads(out)["trigger"]
    assert err == f"cc-analytics: warning: {path}:4: KeyError: \"'uuid'\"; line skipped\n"
