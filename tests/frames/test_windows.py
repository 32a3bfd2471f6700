"""Window capture at scale: a Polars frame of anchors in, a frame of window JSON out."""

from __future__ import annotations

import polars as pl
import pytest

from cc_analytics.core import EventRef, capture_windows
from cc_analytics.frames.capture import capture_window_frame
from tests.golden.builders import assistant, jsonl, text, user


def _root(tmp_path):
    a = jsonl(
        [
            user("u1", 0, "one", session="A"),
            assistant("a1", 1, [text("x")], session="A"),
            user("u2", 2, "two", session="A"),
        ]
    )
    b = jsonl([user("v1", 0, "other", session="B")])
    (tmp_path / "p1").mkdir()
    (tmp_path / "p2").mkdir()
    (tmp_path / "p1" / "A.jsonl").write_bytes(a)
    (tmp_path / "p2" / "B.jsonl").write_bytes(b)
    return a, b


@pytest.mark.parametrize("lazy", [False, True])
def test_frame_matches_core_capture(tmp_path, lazy):
    a, b = _root(tmp_path)
    anchors = pl.DataFrame({"session_id": ["A", "B", "A", "A", "C"], "event_uuid": ["u2", "v1", "a1", "zz", "u1"]})
    out = capture_window_frame(anchors.lazy() if lazy else anchors, projects_root=tmp_path, before=1)
    assert out.columns == ["session_id", "event_uuid", "tool_use_id", "source_file", "window_json", "error"]
    expected_a = [w.to_json() for w in capture_windows(a, [EventRef("A", "u2"), EventRef("A", "a1")], before=1)]
    expected_b = capture_windows(b, [EventRef("B", "v1")], before=1)[0].to_json()
    assert out["window_json"].to_list() == [expected_a[0], expected_b, expected_a[1], None, None]
    assert out["error"].to_list() == [
        None,
        None,
        None,
        "anchor zz not found in session A",
        "no transcript for session C",
    ]


def test_explicit_paths_and_tool_ids(tmp_path):
    _root(tmp_path)
    anchors = pl.DataFrame(
        {
            "session_id": ["A"],
            "event_uuid": ["a1"],
            "tool_use_id": ["t1"],
            "source_file": [str(tmp_path / "p1" / "A.jsonl")],
        }
    )
    out = capture_window_frame(anchors)
    assert '"tool_use_id":"t1"' in out["window_json"][0]
    with pytest.raises(ValueError, match="event_uuid"):
        capture_window_frame(pl.DataFrame({"session_id": ["A"]}))
