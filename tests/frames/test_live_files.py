"""Transcripts another process is still appending to: a torn last line is a problem row, and the
next read picks the completed line up (both formats, through the front ``frames`` API).

The writer is a real subprocess appending to the file; it stops mid-line until told to go on,
so the torn state is read for certain, and a second test reads while a writer appends freely.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cc_analytics.frames as ccf

from . import chainless_builders as cl
from .claude_builders import SESSION, assistant, jsonl, text, user

TORN = "truncated last line (the file may still be being written)"

# Appends ``lines`` to PATH one by one; the line numbered STOP is written in two halves, with a
# pause between them until a line arrives on stdin ("torn" and "done" say where it is).
WRITER = """
import json, sys, time
path, stop, lines = sys.argv[1], int(sys.argv[2]), json.loads(sys.stdin.readline())
with open(path, "ab", buffering=0) as out:
    for number, line in enumerate(lines, start=1):
        data = line.encode() + b"\\n"
        if number == stop:
            out.write(data[: len(data) // 2])
            print("torn", flush=True)
            sys.stdin.readline()
            out.write(data[len(data) // 2 :])
        else:
            out.write(data)
print("done", flush=True)
"""


def claude_lines() -> list[str]:
    lines = []
    for turn in range(4):
        lines.append(user(f"question {turn}", second=2 * turn))
        lines.append(assistant([text(f"answer {turn}")], second=2 * turn + 1))
    return [json.dumps(line, separators=(",", ":")) for line in lines]


def chainless_lines() -> list[str]:
    lines = [cl.start()]
    for turn in range(4):
        lines.append(cl.msg("user", f"question {turn}"))
        lines.append(cl.msg("assistant", f"answer {turn}", "assistant_message"))
    return lines


CASES = {
    "claude-code": (f"{SESSION}.jsonl", claude_lines),
    "chainlesschain": ("live-session.jsonl", chainless_lines),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_torn_last_line_is_a_problem_and_the_next_read_has_it(tmp_path: Path, fmt: str) -> None:
    name, build = CASES[fmt]
    lines = build()
    path = tmp_path / name
    stop = len(lines) - 1  # a user message: completing it adds a turn
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(path), str(stop)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write(json.dumps(lines) + "\n")
    writer.stdin.flush()
    assert writer.stdout.readline() == "torn\n"

    problems = ccf.read_problems(tmp_path)
    assert problems.select("source_file", "line", "reason").rows() == [(str(path), stop, TORN)]
    torn = ccf.read_sessions(tmp_path)
    assert torn["format"].to_list() == [fmt]

    writer.stdin.write("go on\n")
    writer.stdin.flush()
    assert writer.stdout.readline() == "done\n"
    assert writer.wait(timeout=30) == 0

    assert ccf.read_problems(tmp_path).height == 0
    whole = ccf.read_sessions(tmp_path)
    assert whole["turns"].to_list() == [torn["turns"][0] + 1]
    assert ccf.read_turns(tmp_path).height == whole["turns"][0]


FREE_WRITER = """
import sys, time
path, lines = sys.argv[1], sys.stdin.read().splitlines()
with open(path, "ab", buffering=0) as out:
    for number, line in enumerate(lines):
        data = line.encode() + b"\\n"
        cut = 1 + number * 7919 % (len(data) - 1)
        out.write(data[:cut])
        time.sleep(0.001)
        out.write(data[cut:])
"""


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_reading_while_a_writer_appends(tmp_path: Path, fmt: str) -> None:
    # Whatever the moment, a read sees whole lines plus at most one torn last line, and never fewer
    # lines than the read before it; once the writer is done, the file reads whole.
    name, build = CASES[fmt]
    lines = build() * 40
    if fmt == "claude-code":
        lines = [line.replace('"uuid-', f'"u{i}-', 1) for i, line in enumerate(lines)]
    path = tmp_path / name
    path.touch()
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(FREE_WRITER), str(path)], stdin=subprocess.PIPE, text=True
    )
    assert writer.stdin is not None
    writer.stdin.write("\n".join(lines) + "\n")
    writer.stdin.close()
    seen, reads = 0, 0
    while writer.poll() is None or reads == 0:
        problems = ccf.read_problems(path)  # the file only grows: the events read next hold these lines
        whole = ccf.read_events(path, format=fmt).height
        reads += 1
        assert problems.height <= 1
        if problems.height:
            source, line, reason = problems.row(0)
            assert (source, reason) == (str(path), TORN)
            assert seen < line <= whole + 1
        assert whole >= seen
        seen = whole
    assert writer.wait(timeout=60) == 0
    assert ccf.read_problems(path).height == 0
    assert ccf.read_events(path, format=fmt).height == len(lines)
    assert reads > 1, "the writer finished before a second read"


def test_a_torn_first_line_of_a_new_transcript(tmp_path: Path) -> None:
    # Nothing tells the format from half a line: it is reported, and the next read sorts it out.
    path = tmp_path / "new.jsonl"
    path.write_bytes(jsonl(cl.start())[:20])
    assert ccf.read_problems(tmp_path).select("line", "reason").rows() == [(1, TORN)]
    path.write_bytes(jsonl(cl.start()))
    assert ccf.read_problems(tmp_path).height == 0
    assert ccf.read_sessions(tmp_path)["format"].to_list() == ["chainlesschain"]
