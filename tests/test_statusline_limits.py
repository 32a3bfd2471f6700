"""The status line's rate limits and what it keeps of them (issue 23, point 4).

Claude Code passes ``rate_limits`` (``five_hour``/``seven_day``: ``used_percentage``,
``resets_at``) and ``context_window`` on stdin; the line shows the limits, the history keeps
them (append-only, bounded, a cut line harmless), the window is kept per session, and the
limits frame reads the history beside Codex's recorded limits.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cc_analytics.frames as ccf
from cc_analytics.commands.statusline import status_line
from cc_analytics.frames.claude import kept
from cc_analytics.frames.claude.kept import HISTORY, WINDOWS, history_rows, keep, kept_window
from cc_analytics.report import SAMPLES_DIR
from tests.conftest import run_cli
from tests.frames.claude_builders import assistant, text, usage, user, write

HOUR = 3600


def document(transcript: Path | None = None, **extra: object) -> dict:
    found: dict = {"session_id": "s", "model": {"id": "claude-opus-4-5", "display_name": "Opus"}, **extra}
    if transcript is not None:
        found["transcript_path"] = str(transcript)
    return found


def limits(five: float, seven: float, now: float) -> dict:
    # Half a minute more than shown: the line is drawn a little after ``now``.
    return {
        "five_hour": {"used_percentage": five, "resets_at": int(now + 2 * HOUR + 13 * 60 + 30)},
        "seven_day": {"used_percentage": seven, "resets_at": int(now + 3 * 24 * HOUR + 11 * HOUR + 30)},
    }


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CC_ANALYTICS_CACHE_DIR", str(folder))
    return folder / "statusline"


def test_the_line_ends_with_the_limits_and_keeps_them(tmp_path: Path, cache: Path) -> None:
    transcript = write(tmp_path / "s.jsonl", user("hi"), assistant([text("yo")], tokens=usage(10, 100, 50_000)))
    now = time.time()
    raw = json.dumps(document(transcript, rate_limits=limits(23.5, 91, now))).encode()
    line = status_line(raw)
    assert line.startswith("Opus \u00b7 50.1k/200.0k 25% \u00b7 116.9k to auto-compact \u00b7 ")
    assert line.endswith(" \u00b7 5h 24% \u21bb2h13m \u00b7 7d 91% \u21bb3d11h")
    (kept_line,) = (cache / HISTORY).read_text().splitlines()
    record = json.loads(kept_line)
    assert record["session_id"] == "s" and abs(record["time"] - now) < 60
    assert record["five_hour"] == limits(23.5, 91, now)["five_hour"]
    # The same limits again: nothing appended; a change: one line more.
    status_line(raw)
    assert len((cache / HISTORY).read_text().splitlines()) == 1
    status_line(json.dumps(document(transcript, rate_limits=limits(24, 91, now))).encode())
    assert len((cache / HISTORY).read_text().splitlines()) == 2


def test_colour_follows_the_zone(tmp_path: Path, cache: Path) -> None:
    now = time.time()
    line = status_line(json.dumps(document(rate_limits=limits(95, 10, now))).encode(), colour=True)
    assert "\x1b[31m5h 95%\x1b[39m" in line and "\x1b[32m7d 10%\x1b[39m" in line


def test_without_a_transcript_the_limits_still_show(cache: Path) -> None:
    now = time.time()
    assert status_line(json.dumps({"rate_limits": limits(5, 6, now)}).encode()) == (
        "no context data yet \u00b7 5h 5% \u21bb2h13m \u00b7 7d 6% \u21bb3d11h"
    )
    # A window whose reset has passed shows no countdown.
    past = {"five_hour": {"used_percentage": 5, "resets_at": 1}}
    assert status_line(json.dumps({"rate_limits": past}).encode()) == "no context data yet \u00b7 5h 5%"


BAD_LIMITS = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(
        st.sampled_from(["five_hour", "seven_day", "other"]),
        st.one_of(
            st.none(),
            st.text(max_size=3),
            st.dictionaries(
                st.sampled_from(["used_percentage", "resets_at"]),
                st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.floats(allow_nan=True), st.integers()),
                max_size=2,
            ),
        ),
        max_size=3,
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=BAD_LIMITS)
def test_any_rate_limits_value_prints_a_line(cache: Path, value: object) -> None:
    raw = json.dumps({"rate_limits": value}, allow_nan=True).encode()
    line = status_line(raw)
    assert line == "cc-analytics: no context data yet" or line.startswith("no context data yet")
    for row in history_rows(cache / HISTORY):  # whatever was kept reads back as valid windows
        assert row["limit_window"] in ("five_hour", "seven_day") and isinstance(row["used_percent"], float)


def test_a_cache_folder_that_cannot_be_written_costs_nothing_but_the_history(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CC_ANALYTICS_CACHE_DIR", str(blocker))
    now = time.time()
    raw = json.dumps({"rate_limits": limits(5, 6, now), "context_window": {"context_window_size": 10}}).encode()
    assert status_line(raw).startswith("no context data yet \u00b7 5h 5%")


def test_a_cut_last_line_is_ended_and_skipped(tmp_path: Path) -> None:
    keep(document(rate_limits=limits(1, 2, 0)), folder=tmp_path, now=100)
    with (tmp_path / HISTORY).open("ab") as handle:
        handle.write(b'{"time":200,"session_id":"s","five_hour":{"used_perc')  # a crash mid-write
    keep(document(rate_limits=limits(3, 4, 0)), folder=tmp_path, now=300)
    lines = (tmp_path / HISTORY).read_bytes().split(b"\n")
    assert len(lines) == 4 and lines[-1] == b""
    rows = list(history_rows(tmp_path / HISTORY))
    assert [(row["line"], row["limit_window"], row["used_percent"]) for row in rows] == [
        (1, "five_hour", 1.0),
        (1, "seven_day", 2.0),
        (3, "five_hour", 3.0),
        (3, "seven_day", 4.0),
    ]


def test_the_history_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "HISTORY_BYTES", 4096)
    for step in range(400):
        keep(document(rate_limits=limits(step / 4, 0, 0)), folder=tmp_path, now=step)
        assert (tmp_path / HISTORY).stat().st_size <= 4096 + 200
    rows = list(history_rows(tmp_path / HISTORY))
    assert rows[-2]["used_percent"] == 399 / 4  # the newest kept, the oldest dropped
    assert rows[0]["time"] > 0 and len(rows) < 400
    assert [path.name for path in tmp_path.iterdir()] == [HISTORY]  # no temporary left behind


def test_the_window_is_kept_per_session_and_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "WINDOWS_KEPT", 3)
    for number in range(5):
        keep({"session_id": f"s{number}", "context_window": {"context_window_size": 1000 + number}}, folder=tmp_path)
    assert [kept_window(f"s{n}", folder=tmp_path) for n in range(5)] == [None, None, 1002, 1003, 1004]
    keep({"session_id": "s2", "context_window": {"context_window_size": 7}}, folder=tmp_path)
    assert list(json.loads((tmp_path / WINDOWS).read_text())) == ["s3", "s4", "s2"]
    for bad in (0, -5, "200000", None, True, 1.5):
        keep({"session_id": "s9", "context_window": {"context_window_size": bad}}, folder=tmp_path)
        assert kept_window("s9", folder=tmp_path) is None


def test_the_command_keeps_the_history_in_the_cache_folder(tmp_path: Path) -> None:
    now = time.time()
    raw = json.dumps({"session_id": "s", "rate_limits": limits(5, 6, now)}).encode()
    result = run_cli(["statusline"], env={"CC_ANALYTICS_CACHE_DIR": str(tmp_path)}, stdin=raw)
    assert result.returncode == 0 and result.stdout.decode().startswith("no context data yet \u00b7 5h 5%")
    assert len((tmp_path / "statusline" / HISTORY).read_text().splitlines()) == 1
    broken = run_cli(["statusline"], env={"CC_ANALYTICS_CACHE_DIR": str(tmp_path)}, stdin=b'{"rate_limits": {')
    assert broken.returncode == 0 and broken.stdout == b"cc-analytics: no context data yet\n"


def test_the_limits_frame_reads_the_history_and_codexs_limits(tmp_path: Path) -> None:
    keep(document(rate_limits=limits(23.5, 41.2, 1738400000)), folder=tmp_path, now=1738400000)
    frame = ccf.read_limits(SAMPLES_DIR, history=tmp_path / HISTORY)
    assert frame.schema == ccf.read_limits([], history=False).schema
    mine = frame.filter(pl.col("origin") == "statusline")
    assert mine.select("format", "session_id", "limit_window", "window_minutes", "used_percent").rows() == [
        ("claude-code", "s", "five_hour", 300, 23.5),
        ("claude-code", "s", "seven_day", 10_080, 41.2),
    ]
    assert mine["time"][0].timestamp() == 1738400000
    assert mine["resets_at"][0].timestamp() == limits(0, 0, 1738400000)["five_hour"]["resets_at"]
    recorded = frame.filter(pl.col("origin") == "transcript")
    assert set(recorded["format"]) == {"codex"} and set(recorded["limit_window"]) == {"five_hour", "seven_day"}
    codex_only = ccf.read_limits(SAMPLES_DIR, format="codex", history=tmp_path / HISTORY)
    assert set(codex_only["format"]) == {"codex"} and codex_only.height == recorded.height
    assert ccf.read_limits(SAMPLES_DIR, history=False).height == recorded.height
    assert frame["time"].is_sorted()


def test_history_rows_skip_what_is_not_a_record(tmp_path: Path) -> None:
    path = tmp_path / HISTORY
    path.write_bytes(
        b'[]\n{"time":"x","five_hour":{"used_percentage":1,"resets_at":2}}\n'
        b'{"time":5,"five_hour":{"used_percentage":true,"resets_at":2}}\n\xff\n'
        b'{"time":6,"session_id":7,"seven_day":{"used_percentage":1,"resets_at":2}}\n'
    )
    assert [(row["line"], row["session_id"]) for row in history_rows(path)] == [(5, None)]
    assert list(history_rows(tmp_path / "absent")) == []
