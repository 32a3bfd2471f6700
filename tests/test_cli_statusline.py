"""``cc-analytics statusline``: Claude Code's stdin document in, one line out, never a failure."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cc_analytics.commands.statusline import last_usage, status_line
from cc_analytics.format import usd
from cc_analytics.frames import extension
from cc_analytics.frames.claude import tally
from cc_analytics.frames.claude.tally import session_cost
from tests.conftest import ROOT, run_cli
from tests.frames.claude_builders import assistant, jsonl, text, usage, user, write

sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their siblings by name
corpus = importlib.import_module("corpus")

SAMPLES = ROOT / "data-samples" / "claude" / "projects"


def _stdin(path: Path | str, **extra: object) -> bytes:
    document = {
        "session_id": "s",
        "transcript_path": str(path),
        "model": {"id": "claude-opus-4-5", "display_name": "Opus"},
        "workspace": {"current_dir": "/w"},
        **extra,
    }
    return json.dumps(document).encode()


def test_occupancy_equals_the_sessions_frame_on_every_sample() -> None:
    from cc_analytics.frames.claude import read_sessions

    sessions = read_sessions(SAMPLES)
    checked = 0
    for main in sorted(SAMPLES.glob("*/*.jsonl")):
        row = sessions.filter(pl.col("session_id") == main.stem)
        if row.height == 0 or row["last_occupancy"][0] is None:
            continue
        used, _model, _version = last_usage(main)
        assert used == row["last_occupancy"][0], main
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("raw", [b"", b"   ", b"{", b"[]", b"null", b"\xff\xfe", b'{"transcript_path": 7}'])
def test_bad_stdin_prints_the_fallback_and_exits_0(raw: bytes) -> None:
    done = run_cli(["statusline"], stdin=raw)
    assert done.returncode == 0
    assert done.stdout.decode().strip() == "cc-analytics: no context data yet"
    assert done.stderr == b""


def test_a_missing_transcript_names_the_model() -> None:
    assert status_line(_stdin("/nowhere/x.jsonl")) == "Opus · no context data yet"


def test_the_line_shows_model_occupancy_zone_and_autocompact_headroom(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 90,
        "cache_read_input_tokens": 149_900,
        "output_tokens": 5,
    }
    main = {
        "type": "assistant",
        "isSidechain": False,
        "version": "2.0.1",
        "message": {"model": "claude-opus-4-5", "usage": usage},
    }
    side = {
        "type": "assistant",
        "isSidechain": True,
        "message": {"model": "claude-haiku-4-5", "usage": {"input_tokens": 5}},
    }
    transcript.write_text(json.dumps(main) + "\n" + json.dumps(side) + "\n")
    assert status_line(_stdin(transcript)) == "Opus · 150.0k/200.0k 75% · 17.0k to auto-compact"
    coloured = status_line(_stdin(transcript), colour=True)
    assert "\x1b[33m150.0k/200.0k 75%\x1b[39m" in coloured  # yellow zone
    # Claude Code's own window size wins when it sends one.
    assert "150.0k/1.0M 15%" in status_line(_stdin(transcript, context_window={"context_window_size": 1_000_000}))


def test_the_usage_is_found_far_back_in_a_large_file(tmp_path: Path) -> None:
    transcript = tmp_path / "big.jsonl"
    usage = {"input_tokens": 1, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3}
    head = {"type": "assistant", "message": {"model": "claude-opus-4-5", "usage": usage}}
    filler = json.dumps({"type": "user", "message": {"content": "x" * 1000}})
    transcript.write_text(json.dumps(head) + "\n" + (filler + "\n") * 3000)
    assert last_usage(transcript) == (6, "claude-opus-4-5", None)


def test_through_the_console_script(tmp_path: Path) -> None:
    main = next(iter(sorted(SAMPLES.glob("*/*.jsonl"))))
    done = run_cli(["statusline"], stdin=_stdin(main), env={"NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    line = done.stdout.decode()
    assert line.count("\n") == 1 and line.startswith("Opus · ") and "to auto-compact" in line


# ------------------------------------------------------------------ the session's cost


def _sessions_cost(folder: Path, session_id: str) -> tuple[float | None, int, int]:
    """(cost_usd, unpriced_requests, requests) of one session as the sessions frame has them."""
    from cc_analytics.frames.claude import read_sessions

    row = read_sessions(folder).filter(pl.col("session_id") == session_id)
    if row.height == 0:
        return None, 0, 0
    return row["cost_usd"][0], row["unpriced_requests"][0], row["requests"][0]


def _tally(main: Path, state: Path) -> tuple[float | None, int, int]:
    cost = session_cost(main, state_dir=state)
    return cost.usd, cost.unpriced, cost.requests


def test_the_cost_equals_the_sessions_frame_on_every_sample(tmp_path: Path) -> None:
    from cc_analytics.frames.claude import read_sessions

    sessions = read_sessions(SAMPLES)
    checked = with_subagents = 0
    for main in sorted(SAMPLES.glob("*/*.jsonl")):
        row = sessions.filter(pl.col("session_id") == main.stem)
        if row.height == 0:
            continue
        expected = row["cost_usd"][0], row["unpriced_requests"][0], row["requests"][0]
        assert _tally(main, tmp_path / "state") == expected, main
        assert _tally(main, tmp_path / "state") == expected, main  # again, from the kept state
        line = status_line(_stdin(main))
        assert line.endswith(f" · {usd(expected[0])}"), line
        checked += 1
        with_subagents += row["subagent_files"][0] > 0
    assert checked >= 10 and with_subagents >= 2


def test_the_cost_equals_the_sessions_frame_on_a_generated_corpus_and_after_appends(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    corpus.generate(out, size_mb=1.5, sessions=3, seed=2)
    mains = sorted((out / "projects").glob("*/*.jsonl"))
    assert any(main.with_suffix("").is_dir() for main in mains)  # subagent files are there
    for main in mains:
        assert _tally(main, tmp_path / "state") == _sessions_cost(out / "projects", main.stem)
    # The largest session again, grown in four appends cut mid-line, its subagents added late.
    main = max(mains, key=lambda p: p.stat().st_size)
    grown = tmp_path / "grown" / main.parent.name
    grown.mkdir(parents=True)
    data = main.read_bytes()
    cuts = [len(data) // 5, len(data) // 2 + 7, len(data) - 3, len(data)]
    start = 0
    for step, cut in enumerate(cuts):
        with (grown / main.name).open("ab") as handle:
            handle.write(data[start:cut])
        start = cut
        if step == 2 and main.with_suffix("").is_dir():
            shutil.copytree(main.with_suffix(""), grown / main.stem)
        assert _tally(grown / main.name, tmp_path / "state") == _sessions_cost(grown.parent, main.stem), step


_MODELS = ["claude-opus-4-5", "claude-sonnet-4-6", "claude-haiku-4-5", "<synthetic>", "mystery-model"]
_STAMPS = [
    "2026-03-12T23:59:59.500Z",
    "2026-03-13T00:30:00+01:00",
    "2026-03-13 00:00:01Z",
    "2026-03-14T10:00:00.123456789Z",
    "2026-03-14T10:00:00",
    "not a time",
]


@st.composite
def _line(draw: st.DrawFn, session: str, *, sidechain: bool) -> bytes:
    kind = draw(st.sampled_from(["request", "request", "request", "user", "garbage"]))
    if kind == "garbage":
        return b'{"type": "assistant", "message": {"usage": '
    stamp = draw(st.sampled_from(_STAMPS))
    # Drawn, not the builders' running counter: a replayed example must have the same bytes
    # (the cuts are drawn from their length).
    uuid = f"uuid-{draw(st.integers(0, 999_999)):06d}"
    if kind == "user":
        return json.dumps(user("hi", session=session, timestamp=stamp, uuid=uuid)).encode()
    recorded = {
        "input_tokens": draw(st.integers(0, 300_000)),
        "cache_creation_input_tokens": draw(st.integers(0, 5000)),
        "cache_read_input_tokens": draw(st.integers(0, 100_000)),
        "output_tokens": draw(st.one_of(st.integers(0, 5000), st.just("many"))),
    }
    if draw(st.booleans()):
        recorded["cache_creation"] = {"ephemeral_1h_input_tokens": draw(st.integers(0, 6000))}
    if draw(st.booleans()):
        recorded["server_tool_use"] = {"web_search_requests": draw(st.integers(0, 3))}
    if draw(st.booleans()):
        recorded["speed"] = draw(st.sampled_from(["standard", "fast"]))
    message_id = draw(st.sampled_from(["msg_a", "msg_b", "msg_c", None]))
    line = assistant(
        [text("ok")],
        model=draw(st.sampled_from(_MODELS)),
        message_id=message_id,
        request_id=draw(st.sampled_from(["req_a", "req_b"])),
        tokens=recorded,
        session=session,
        timestamp=stamp,
        isSidechain=sidechain,
        uuid=uuid,
    )
    if message_id is None:  # counted once per line
        del line["message"]["id"]
    if draw(st.integers(0, 3)) == 0:
        del line["requestId"]
    if draw(st.integers(0, 9)) == 0:
        line["isApiErrorMessage"] = True
    return json.dumps(line).encode()


def _cuts(data: st.DataObject, whole: bytes) -> list[int]:
    """Where appends stop: at line ends (before or after the newline), or anywhere (a torn line)."""
    ends = [i for i, byte in enumerate(whole) if byte == 0x0A]
    places = st.one_of(st.sampled_from([0, *ends, *(i + 1 for i in ends)]), st.integers(0, len(whole)))
    return sorted(data.draw(st.lists(places, max_size=4)) + [len(whole)])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_cost_equals_the_sessions_frame_after_every_append(data: st.DataObject) -> None:
    session = "11111111-2222-4333-8444-555555555555"
    main_lines = data.draw(st.lists(_line(session, sidechain=False), min_size=1, max_size=12))
    agent_lines = data.draw(st.lists(_line(session, sidechain=True), max_size=6))
    main_bytes = b"\n".join(main_lines) + data.draw(st.sampled_from([b"\n", b""]))  # a last line may lack it
    agent_bytes = b"".join(line + b"\n" for line in agent_lines)
    main_cuts, agent_cuts = _cuts(data, main_bytes), _cuts(data, agent_bytes)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "projects" / "-w"
        agents = project / session / "subagents"
        agents.mkdir(parents=True)
        main, agent = project / f"{session}.jsonl", agents / "agent-a1.jsonl"
        main.touch()
        done = [0, 0]
        for step in range(max(len(main_cuts), len(agent_cuts))):
            for index, (path, whole, cuts) in enumerate(
                ((main, main_bytes, main_cuts), (agent, agent_bytes, agent_cuts))
            ):
                cut = cuts[min(step, len(cuts) - 1)]
                with path.open("ab") as handle:
                    handle.write(whole[done[index] : cut])
                done[index] = max(done[index], cut)
            assert _tally(main, Path(tmp) / "state") == _sessions_cost(project, session), step


def bytes_walked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each file the cost part walks from now on, in a list that fills as it does."""
    read: list[int] = []
    walk = tally.walk_files
    monkeypatch.setattr(
        tally,
        "walk_files",
        lambda files, profile, contents: read.append(len(contents[0])) or walk(files, profile, contents=contents),
    )
    return read


def test_only_the_appended_bytes_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    main = tmp_path / "p" / "s.jsonl"
    write(main, user("go", session="s"), assistant([text("a")], tokens=usage(out=100), session="s"))
    first = _tally(main, tmp_path / "state")
    read = bytes_walked(monkeypatch)
    appended = jsonl(assistant([text("b")], tokens=usage(out=200), session="s"))
    with main.open("ab") as handle:
        handle.write(appended)
    second = _tally(main, tmp_path / "state")
    assert read == [len(appended)]
    assert second == _sessions_cost(main.parent, "s") and second[2] == first[2] + 1
    read.clear()
    assert _tally(main, tmp_path / "state") == second and read == []  # nothing new: nothing read


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="file names there must be valid Unicode")
def test_the_state_of_a_file_whose_name_is_not_utf8_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / os.fsdecode(b"caf\xe9")  # a name Python holds with a lone surrogate
    main = folder / "s.jsonl"
    write(main, user("go", session="s"), assistant([text("a")], tokens=usage(out=100), session="s"))
    first = _tally(main, tmp_path / "state")
    read = bytes_walked(monkeypatch)
    assert _tally(main, tmp_path / "state") == first and read == []  # read from the kept state


def test_a_file_that_shrank_or_was_replaced_is_read_afresh(tmp_path: Path) -> None:
    main = tmp_path / "p" / "s.jsonl"
    big = [assistant([text(str(i))], tokens=usage(out=1000 * i), session="s") for i in range(1, 6)]
    write(main, *big)
    state = tmp_path / "state"
    assert _tally(main, state) == _sessions_cost(main.parent, "s")
    write(main, big[0])  # shorter: rewritten in place
    assert _tally(main, state) == _sessions_cost(main.parent, "s")
    assert _tally(main, state)[2] == 1
    other = tmp_path / "other.jsonl"
    write(other, *(assistant([text("x")], tokens=usage(out=7), session="s") for _ in range(3)))
    os.replace(other, main)  # another file (inode) under the same name, longer than what was read
    assert _tally(main, state) == _sessions_cost(main.parent, "s") and _tally(main, state)[2] == 3
    inode = main.stat().st_ino
    with main.open("r+b") as handle:  # rewritten in place: same inode, longer, other requests
        handle.write(jsonl(*(assistant([text("y")], tokens=usage(out=9000), session="s") for _ in range(4))))
    assert main.stat().st_ino == inode
    assert _tally(main, state) == _sessions_cost(main.parent, "s") and _tally(main, state)[2] == 4


def test_a_state_that_cannot_be_read_or_written_only_costs_time(tmp_path: Path) -> None:
    main = tmp_path / "p" / "s.jsonl"
    write(main, assistant([text("a")], tokens=usage(out=100), session="s"))
    expected = _sessions_cost(main.parent, "s")
    state = tmp_path / "state"
    assert _tally(main, state) == expected
    for kept in state.glob("*.json"):
        kept.write_bytes(b'{"format": 1, "book": null, "files": 7}')
    assert _tally(main, state) == expected
    for kept in state.glob("*.json"):
        kept.write_bytes(b"\x00garbage")
    assert _tally(main, state) == expected
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    assert _tally(main, blocked) == expected
    assert _tally(main, blocked) == expected


def test_unpriced_requests_are_marked(tmp_path: Path) -> None:
    main = tmp_path / "p" / "s.jsonl"
    write(main, assistant([text("a")], model="mystery-model", tokens=usage(out=100), session="s"))
    assert status_line(_stdin(main)).endswith(" · $?")
    with main.open("ab") as handle:
        handle.write(jsonl(assistant([text("b")], tokens=usage(inp=1_000_000, create=0, read=0, out=0), session="s")))
    assert status_line(_stdin(main)).endswith(" · $5.00*")
    assert _tally(main, tmp_path / "state") == (5.0, 1, 2) == _sessions_cost(main.parent, "s")


def test_a_failure_in_the_cost_part_only_leaves_the_cost_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    main = tmp_path / "p" / "s.jsonl"
    write(main, assistant([text("a")], tokens=usage(), session="s"))
    assert status_line(_stdin(main)).endswith(" · <$0.01")

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(tally, "session_cost", broken)
    assert status_line(_stdin(main)) == "Opus · 1.1k/200.0k 1% · 165.9k to auto-compact"


def test_the_cost_path_imports_no_polars(tmp_path: Path) -> None:
    main = next(iter(sorted(SAMPLES.glob("*/*.jsonl"))))
    probe = (
        "import sys\nfrom cc_analytics.commands.statusline import status_line\n"
        f"line = status_line({_stdin(main)!r})\nassert '$' in line, line\n"
        "print(any(name.split('.')[0] in ('polars', 'pyarrow') for name in sys.modules))"
    )
    env = {**os.environ, "CC_ANALYTICS_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"


def test_the_command_imports_only_what_the_line_needs(tmp_path: Path) -> None:
    # Each of these cost the status line milliseconds at every call: Polars and Arrow (hundreds),
    # orjson and the batch engine's multiprocessing (about 20), argparse with its help formatter
    # and gettext (about 10).
    main = next(iter(sorted(SAMPLES.glob("*/*.jsonl"))))
    # The command ends with os._exit (no interpreter teardown, no atexit): the probe looks then.
    probe = (
        "import os, sys\n"
        "exit_now = os._exit\n"
        "def probed(code):\n"
        "    print(sorted({n.split('.')[0] for n in sys.modules} & {'polars', 'pyarrow', 'orjson', "
        "'multiprocessing', 'concurrent', 'argparse', 'gettext'}), file=sys.stderr, flush=True)\n"
        "    exit_now(code)\n"
        "os._exit = probed\n"
        "from cc_analytics.cli import main\nsys.argv = ['cc-analytics', 'statusline']\nsys.exit(main())"
    )
    env = {**os.environ, "CC_ANALYTICS_CACHE_DIR": str(tmp_path)}
    # The first call ever makes the price book from genai-prices (pydantic and all); the
    # second reads the book, and the session afresh (its state is removed).
    subprocess.run([sys.executable, "-m", "cc_analytics.cli", "statusline"], input=_stdin(main), check=True, env=env)
    shutil.rmtree(tmp_path / "statusline")
    out = subprocess.run([sys.executable, "-c", probe], input=_stdin(main), capture_output=True, check=True, env=env)
    assert b"$" in out.stdout and b"to auto-compact" in out.stdout
    # Without the C extension, the walker decodes each line with orjson (its pure Python path).
    assert out.stderr.decode().strip() == ("[]" if extension.load() is not None else "['orjson']")


@settings(max_examples=300, deadline=None)
@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.integers(0, 7),
    st.sampled_from(["Z", "Z", "z", "+01:00", ""]),
    st.booleans(),
)
def test_the_fast_timestamp_path_reads_as_the_rule(moment: datetime, digits: int, zone: str, leap: bool) -> None:
    text = f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}"  # %Y leaves years below 1000 unpadded
    if leap:
        text = text[:-2] + "60"
    if digits:
        text += "." + f"{moment.microsecond:06d}{moment.microsecond % 10}"[:digits]
    text += zone
    assert tally.parse_time(text) == tally.parse_rfc3339(text)
    if tally.parse_time(text) is not None:
        assert tally.parse_time(text).tzinfo == tally.parse_rfc3339(text).tzinfo
