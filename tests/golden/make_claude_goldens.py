"""Write our own synthetic transcripts and their goldens (made by the reference oracle).

Usage (from the repo root, after ``bash ../shared/oracle/setup.sh .oracle-venv``):

    python tests/golden/make_claude_goldens.py [--oracle-python .oracle-venv/bin/python]

Writes ``tests/golden/claude/synthetic/*.jsonl`` (deterministic bytes) and, by running
``../shared/oracle/golden.py`` with the oracle venv, ``tests/golden/claude/expected/``:
one ``<name>.golden.jsonl`` per transcript (``--anchors all --hydrate``), extra parameter
sets for a few, batch goldens, and ``MANIFEST.tsv`` / ``MANIFEST.batch.tsv`` in the
layout of the shared corpus. Review the diff of the expected files in the same commit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from builders import (  # noqa: E402
    SESSION,
    Obj,
    Raw,
    assistant,
    envelope,
    jsonl,
    queued,
    result_line,
    system,
    text,
    tool_result,
    tool_use,
    usage,
    user,
)

OUT = HERE / "claude"
GOLDEN_PY = HERE.parents[2] / "shared" / "oracle" / "golden.py"
EXTRA_PARAMS = {
    "before0-after0": ["--before", "0", "--after", "0"],
    "before2-after1-preview50": ["--before", "2", "--after", "1", "--preview-chars", "50"],
    "preview5": ["--preview-chars", "5"],
    "preview-negative": ["--preview-chars", "-3"],
}


def worked_examples() -> list:
    """Spec §13.1: an empty turn 0, thinking, an Edit, a clipped prompt."""
    return [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": SESSION},
        user("u1", 0, "Fix add() in calc.py"),
        assistant(
            "a1",
            1,
            [
                {"type": "thinking", "thinking": "..."},
                text("Looking."),
                tool_use("tu1", "Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
            ],
        ),
        result_line("r1", 2, [tool_result("tu1", "ok")]),
        user("u2", 3, "now run the tests"),
        assistant("a2", 4, [tool_use("tu2", "Bash", {"command": "pytest -q"})]),
    ]


def ask_and_queue() -> list:
    """Spec §13.2 plus answer-line variants: AskUserQuestion, queued prompts of every kind."""
    ask = {
        "questions": [
            {
                "question": "Which DB?",
                "header": "DB",
                "multiSelect": False,
                "options": [{"label": "Postgres (Recommended)", "description": "managed"}, {"label": "SQLite"}],
            }
        ]
    }
    payload = {
        "questions": [
            {
                "question": "Which DB?",
                "options": [
                    {"label": "Postgres (Recommended)", "description": "managed", "preview": "PG16"},
                    {"label": "SQLite"},
                ],
            }
        ],
        "answers": {"Which DB?": "Postgres (Recommended)"},
        "annotations": {"Which DB?": {"notes": "use RDS"}},
    }
    lines = [
        queued("q0", 0, "queued before any prompt", origin={"kind": "human"}),
        user("u1", 1, "pick a db"),
        assistant("a1", 2, [tool_use("q1", "AskUserQuestion", ask)]),
        result_line("r1", 3, [tool_result("q1", "User has answered your questions: ...")], payload),
        queued("q9", 4, "also add indexes", origin={"kind": "human"}),
        queued("q8", 5, "<task-notification>done</task-notification>", mode="task-notification"),
        queued("q7", 6, "from a peer", origin={"kind": "peer"}),
        queued("q6", 7, "from a channel", origin={"kind": "channel"}),
        queued("q5", 8, "no origin"),
        queued("q4", 9, "odd origin", origin="human"),
        queued("q3", 10, ["list", "prompt"], origin={"kind": "human"}),
        queued("q2", 11, "   ", origin={"kind": "human"}),
        envelope("attachment", "q1x", 12, attachment="queued_command"),
        assistant("a2", 13, [text("Going with Postgres.")]),
    ]
    variants = [
        None,
        "str",
        True,
        0,
        [],
        {},
        {"foo": 1},
        {"answers": "x"},
        {"answers": {"Q": 5, "R": "S"}},
        {"answers": {"b": "1", "a": "2"}},
        {"answers": {"a -> b": "c\nd"}},
        {
            "questions": [{"question": "Q", "options": [{"label": "Red", "description": "", "preview": ""}]}],
            "answers": {"Q": "Red"},
            "annotations": {"Q": {"preview": "ann", "notes": ""}},
        },
    ]
    i = 20
    for n, payload in enumerate(variants):
        lines.append(user(f"vu{n}", i, f"variant {n}"))
        lines.append(assistant(f"va{n}", i + 1, [tool_use(f"vq{n}", "AskUserQuestion", {"questions": "bad"})]))
        lines.append(result_line(f"vr{n}", i + 2, [tool_result(f"vq{n}", [text("C"), {"type": "image"}])], payload))
        i += 3
    lines.append(result_line("vr-err", i, [tool_result("vq3", "C", is_error=True)], {"answers": {"E": "F"}}))
    return lines


def tool_shapes() -> list:
    """Every row of the §8.1 table, aliases, MultiEdit shapes, number layouts, duplicate keys."""
    inputs = [
        ("Bash", {"command": "ls -la", "description": "list"}),
        ("Bash", {"description": "list"}),
        ("Bash", {"command": 5}),
        ("Execute", {"command": "ls"}),
        ("bash", {"command": "ls"}),
        ("Bash", {"command": ""}),
        ("Bash", {"command": "line1\nline2"}),
        ("Edit", {"file_path": "/a.py", "old_string": "x = 1\ny = 2", "new_string": "x = 3"}),
        ("Edit", {"file_path": "/a.py", "old_string": "", "new_string": ""}),
        ("Edit", {"file_path": "/a", "old_string": "x"}),
        ("Edit", {"file_path": "/a", "old_string": "x\n\ny", "new_string": "a\r\nb\u2028c\x1cd\n"}),
        (
            "MultiEdit",
            {
                "file_path": "/b.py",
                "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c\nd", "new_string": "e"}],
            },
        ),
        ("MultiEdit", {"file_path": "/a", "edits": []}),
        ("MultiEdit", {"file_path": "/a", "edits": ""}),
        ("MultiEdit", {"file_path": "/a", "edits": {}}),
        ("MultiEdit", {"file_path": "/a", "edits": "x"}),
        ("MultiEdit", {"file_path": "/a", "edits": [{"old_string": "a"}]}),
        ("Write", {"file_path": "/c.py", "content": "print(1)\nprint(2)\n"}),
        ("Create", {"file_path": "/x", "content": "c"}),
        ("create", {"file_path": "/x", "content": "c"}),
        ("Read", {"file_path": "/d.py", "offset": 10, "limit": 5}),
        ("ExitPlanMode", {"plan": "# Plan\n1. do"}),
        ("mcp__github__create_issue", {"title": "é bug", "body": "b"}),
        ("Frob", Raw('{"a":1e-7,"b":1e16,"c":1E5,"d":-0,"e":-0.0,"g":1.0e2,"l":1e15,"m":0.00001,"n":0.000001}')),
        ("Frob", Raw('{"dup":1,"dup":2,"a":3}')),
        ("Frob", "just a string"),
        ("Frob", [1, 2]),
        ("Frob", None),
        ("Frob", {}),
        (
            "Frob",
            Raw(
                '{"f":100.0,"g":1e21,"h":1e-7,"i":0.1,"j":-0.0,"k":1.5e300,"l":123456789.123456789,"m":1e20,"n":5e-324}'
            ),
        ),
        ("Frob", Raw('{"\\uffff":1,"\\ud83d\\ude00":2,"a":3,"B":4,"\\u00e9":5}')),
        ("Frob", {"s": 'tab\tnl\nquote"bs\\ctrl\x01del\x7fls\u2028/'}),
        ("Frob", Raw('{"big":9007199254740991,"neg":-9007199254740991,"zero":0}')),
        ("Frob", Raw('{"x":[1,2.50,-0,1E2,true,null,{"b":[],"a":{}}]}')),
        ("Frob", {"k": "0123456789abcdef" * 120}),
        ("Write", {"file_path": "/w", "content": "x" * 1200}),
        ("Bash", Obj([("command", "rm -rf build/cache"), ("command", "echo safe")])),
    ]
    lines = [user("u0", 0, "exercise every tool shape")]
    for n, (name, tool_input) in enumerate(inputs):
        lines.append(assistant(f"a{n}", n + 1, [tool_use(f"t{n}", name, tool_input)]))
        if n % 4 == 3:
            lines.append(user(f"u{n}", n + 1, f"next batch {n}"))
    return lines


def markers_and_flags() -> list:
    """Turn openers: markers, interrupts, meta, sidechain, compaction, blank texts, other sessions."""
    texts = [
        "<teammate-message from=x>hi",
        "<Teammate-Message>",
        "<teammate-messages x>",
        "\x1c  <agent-message>",
        "<agent-message\x1cx",
        "\u200b<teammate-message>",
        "<ſcheduled-task>",
        "<scheduled-tasK>",
        "Another Claude session sent a message:",
        "Another  Claude session sent a message:",
        "# Augment Agent",
        "# Augment Agents",
        "[Role Reminder]",
        "[Role Remınder]",
        "[Role Reminder\x85x",
        "[request INTERRUPTED by user]",
        "  [Request interrupted by user for tool use]",
        "[Request interrupted  by user]",
        "\u3000",
        "\u200b",
        "  padded  ",
        "\ufeffbom",
        "mid <teammate-message>",
        "<cross-session-message/>",
        "<agent-message-x",
    ]
    lines = [{"type": "summary", "summary": "title", "leafUuid": "x"}, user("u-first", 0, "first prompt")]
    for n, value in enumerate(texts):
        lines.append(user(f"m{n}", n + 1, value))
        lines.append(assistant(f"ma{n}", n + 1, [text(f"reply {n}"), text(" \n ")]))
    lines += [
        user("meta", 40, "<local-command-caveat>", isMeta=True),
        user("meta0", 41, "isMeta zero", isMeta=0),
        user("metas", 42, "isMeta string", isMeta="false"),
        user("side", 43, "sidechain", isSidechain=True),
        assistant(
            "side-a", 44, [text("sidechain reply"), tool_use("sbt", "Bash", {"command": "ls"})], isSidechain=True
        ),
        system("cb", 45),
        user("cs", 46, "This session is being continued", isCompactSummary=True),
        user("vis", 47, "visible only", isVisibleInTranscriptOnly=True),
        user("int1", 48, "real prompt", interruptedMessageId="x"),
        user("int2", 49, "null id", interruptedMessageId=None),
        user("int3", 50, "empty id", interruptedMessageId=""),
        user("int4", 51, "num id", interruptedMessageId=5),
        user("blocks", 52, [text("  "), text("<teammate-message x>")]),
        user("joined", 53, [text("a"), text(""), {"type": "image"}, text("b"), tool_result("nothere", "r")]),
        user("other-session", 54, "from another session", session="OTHER"),
        user("m0", 55, "duplicate uuid of m0"),
        {"type": "progress", "uuid": "prog", "sessionId": SESSION, "timestamp": "2026-03-01T11:00:00Z"},
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION},
        user("odd-ts", 56, "odd timestamps are fine", timestamp="2026-03-01 10:00:00.123456789012+23:59"),
        user("y0", 57, "year zero is dropped", timestamp="0000-01-01T12:00:00Z"),
        user("y1", 58, "year one at +01:00 is kept", timestamp="0001-01-01T00:30:00+01:00"),
        assistant("done", 59, [text("  spaced  ")], usage=usage()),
    ]
    return lines


def unicode_planes() -> list:
    """Text from every plane, clipped at 200 and 700, with controls and line separators."""
    pieces = [
        "ascii",
        "é\u0301",
        "中文字符",
        "한국어",
        "עברית",
        "😀👍🏽👨‍👩‍👧🇫🇷",
        "\U00010348\U0001d11e",
        "\U00020000\U0002a700",
        "\U00030000",
        "\U000e0041",
        "\U000f0000\U0010fffd",
        "\x00\x01\x7f\x85",
        "\u2028\u2029",
        "\ufeff\u200b",
    ]
    lines = [user("u0", 0, "".join(pieces) * 5)]
    for n, piece in enumerate(pieces):
        lines.append(assistant(f"a{n}", n + 1, [text(piece * 25), tool_use(f"t{n}", "Frob", {piece: piece * 30})]))
    lines.append(user("u1", 30, "😀" * 4))
    lines.append(assistant("a-last", 31, [tool_use("tw", "Write", {"file_path": "/u", "content": "😀" * 800})]))
    return lines


def many_turns() -> list:
    lines = []
    for n in range(14):
        lines.append(user(f"u{n}", 2 * n, f"prompt number {n} " + "x" * (n * 9)))
        lines.append(
            assistant(f"a{n}", 2 * n + 1, [text(f"answer {n}"), tool_use(f"t{n}", "Bash", {"command": f"echo {n}"})])
        )
        lines.append(result_line(f"r{n}", 2 * n + 1, [tool_result(f"t{n}", str(n))]))
    return lines


def bad_input(fault: str) -> list:
    """A good session with one line the reference rejects, far from most anchors."""
    lines = many_turns()[:12]
    faults = {
        "missing-uuid": user("x", 90, "no uuid here"),
        "big-int": assistant("big", 91, [tool_use("tb", "Frob", Raw('{"n":9007199254740993}'))]),
        "inf": assistant("inf", 92, [tool_use("ti", "Frob", Raw('{"n":1e400}'))]),
        "bad-timestamp": user("badts", 93, "bad time", timestamp="2026-06-30T23:59:60Z"),
        "string-content": envelope("assistant", "strc", 94, message={"model": "m", "content": "a string"}),
        "usage-partial": assistant("usage", 95, [text("u")], usage={"input_tokens": 1}),
        "no-subtype": envelope("system", "nosub", 96),
        "result-shape": result_line("rs", 97, [tool_result("t0", 5)]),
        "no-type": {"uuid": "notype", "sessionId": SESSION},
        "no-model": envelope("assistant", "nomodel", 98, message={"content": [text("no model")]}),
    }
    line = faults[fault]
    if fault == "missing-uuid":
        del line["uuid"]
    return lines[:6] + [line] + lines[6:]


def transcripts() -> dict[str, bytes]:
    out = {
        "own-worked-example": jsonl(worked_examples()),
        "own-ask-queued": jsonl(ask_and_queue()),
        "own-tool-shapes": jsonl(tool_shapes()),
        "own-markers-flags": jsonl(markers_and_flags()),
        "own-unicode-planes": jsonl(unicode_planes()),
        "own-many-turns": jsonl(many_turns()),
        "own-junk-lines": jsonl(
            [
                user("u1", 0, "hi"),
                "{not json",
                "[1,2]",
                "42",
                "   ",
                b"\xff\xfe",
                '{"type":"user","uuid":"s","sessionId":"S","timestamp":"'
                + "2026-03-01T10:00:00Z"
                + '","message":{"content":"\\ud800"}}',
                "NaN",
                '{"a":1} {"b":2}',
                assistant("a1", 1, [text("yo")]),
            ]
        )[:-1],
    }
    for fault in (
        "missing-uuid",
        "big-int",
        "inf",
        "bad-timestamp",
        "string-content",
        "usage-partial",
        "no-subtype",
        "result-shape",
        "no-type",
        "no-model",
    ):
        out[f"own-bad-{fault}"] = jsonl(bad_input(fault))
    return out


EXTRAS = ("own-many-turns", "own-ask-queued", "own-worked-example")
BATCHES = ("own-many-turns", "own-ask-queued", "own-bad-no-type", "own-markers-flags")


def run_golden(python: str, transcript: Path, args: list[str]) -> bytes:
    proc = subprocess.run([python, str(GOLDEN_PY), str(transcript), *args], capture_output=True, check=True)
    return proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle-python", default=str(HERE.parents[1] / ".oracle-venv" / "bin" / "python"))
    args = parser.parse_args()
    synthetic = OUT / "synthetic"
    expected = OUT / "expected"
    synthetic.mkdir(parents=True, exist_ok=True)
    expected.mkdir(parents=True, exist_ok=True)
    manifest = ["golden\ttranscript\tgolden_py_args\trecords\twindows\terrors"]
    batch_manifest = ["golden\ttranscript\tgolden_py_args\tbatches\twindows\terrors"]
    for name, raw in transcripts().items():
        path = synthetic / f"{name}.jsonl"
        path.write_bytes(raw)
        runs = [("", [])] + ([(f".{k}", v) for k, v in EXTRA_PARAMS.items()] if name in EXTRAS else [])
        for suffix, extra in runs:
            golden_args = ["--anchors", "all", "--hydrate", *extra]
            out = run_golden(args.oracle_python, path, golden_args)
            golden = f"{name}{suffix}.golden.jsonl"
            (expected / golden).write_bytes(out)
            records = out.count(b"\n")
            errors = sum(1 for line in out.splitlines() if not line.endswith(b'"error": null}'))
            manifest.append(
                f"{golden}\tsynthetic/{name}.jsonl\t{' '.join(golden_args)}\t{records}\t{records - errors}\t{errors}"
            )
        if name in BATCHES:
            out = run_golden(args.oracle_python, path, ["--batches"])
            records = out.count(b"\n")
            golden = f"{name}.batch.golden.jsonl"
            (expected / golden).write_bytes(out)
            errors = sum(1 for line in out.splitlines() if not line.endswith(b'"error": null}'))
            batch_manifest.append(f"{golden}\tsynthetic/{name}.jsonl\t--batches\t{records}\t-\t{errors}")
    (expected / "MANIFEST.tsv").write_text("\n".join(manifest) + "\n", encoding="utf-8")
    (expected / "MANIFEST.batch.tsv").write_text("\n".join(batch_manifest) + "\n", encoding="utf-8")
    print(f"wrote {len(manifest) - 1} goldens and {len(batch_manifest) - 1} batch goldens under {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
