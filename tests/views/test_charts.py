"""The Altair charts build from the sample frames, serialize, and stay small whatever the corpus
(their specs are validated in test_specs.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from cc_analytics.frames.claude import schema as S
from cc_analytics.views import charts as C


@pytest.fixture(scope="module")
def data():
    from cc_analytics.report import load

    return load(samples=True)


def marks(spec: dict) -> set[str]:
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            mark = node.get("mark")
            if mark is not None:
                found.add(mark if isinstance(mark, str) else mark["type"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def rows(spec: dict) -> int:
    return sum(len(values) for values in spec.get("datasets", {}).values())


def test_every_chart_serializes_with_its_marks(data) -> None:
    sessions, turns = data.sessions, data.turns
    expected = {
        "buckets": (C.bucket_breakdown(sessions), {"bar"}),
        "occupancy": (C.occupancy_over_turns(turns), {"line", "circle", "rule", "point"}),
        "peak": (C.peak_distribution(sessions), {"bar", "rule"}),
        "daily": (C.daily_trend(sessions), {"bar"}),
        "model": (C.comparison(sessions, by="model"), {"bar", "circle"}),
        "project": (C.comparison(sessions, by="project"), {"bar", "circle"}),
        "calibration": (C.calibration(turns), {"circle", "line"}),
        "cost per day": (C.cost_per_day(data.requests), {"bar"}),
        "cost by project": (C.cost_by(data.requests, by="project"), {"bar", "text"}),
        "cost by model": (C.cost_by(data.requests, by="model"), {"bar", "text"}),
    }
    for name, (chart, wanted) in expected.items():
        spec = chart.to_dict()
        json.dumps(spec)
        assert wanted <= marks(spec), name
        assert 0 < rows(spec) < 200, name


def test_occupancy_of_one_session_marks_its_compactions(data) -> None:
    compacted = data.sessions.filter(pl.col(S.COMPACTIONS) >= 2)[S.SESSION_ID][0]
    spec = C.occupancy_over_turns(data.turns, session_id=compacted).to_dict()
    datasets = list(spec["datasets"].values())
    limits = next(d for d in datasets if d and "limit" in d[0])
    assert {d["limit"] for d in limits} == {"window", "effective window", "auto-compact"}
    assert sorted(d["tokens"] for d in limits) == [167_000, 180_000, 200_000]
    triangles = [d for d in datasets if d and all(row.get(S.COMPACTED) for row in d)]
    assert len(triangles[0]) == 2


def test_peak_distribution_counts_every_session(data) -> None:
    spec = C.peak_distribution(data.sessions).to_dict()
    bins = next(d for d in spec["datasets"].values() if d and "sessions" in d[0])
    sized = data.sessions.filter(pl.col(S.PEAK_OCCUPANCY).is_not_null() & (pl.col(S.WINDOW) > 0))
    assert (
        sum(b["sessions"] for b in bins) == sized.height == data.sessions.height - 3
    )  # one sample names no window; Copilot CLI: one records none, one no occupancy yet
    assert {b["zone"] for b in bins} == {"green", "yellow", "red"}


def test_daily_trend_sums_tokens(data) -> None:
    claude = data.sessions.filter(pl.col("format") == "claude-code")
    spec = C.daily_trend(claude).to_dict()
    tokens = next(d for d in spec["datasets"].values() if d and "kind" in d[0])
    total = claude.select(
        pl.sum_horizontal(S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS).sum()
    ).item()
    assert sum(t["tokens"] for t in tokens) == total


def large_frames(n_sessions: int = 6000, turns_each: int = 5) -> tuple[pl.DataFrame, pl.DataFrame]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    sessions = pl.DataFrame(
        {
            S.SESSION_ID: [f"s{i:05d}" for i in range(n_sessions)],
            S.PROJECT: [f"/p/proj{i % 37}" for i in range(n_sessions)],
            S.FIRST_TIME: [start + timedelta(hours=i) for i in range(n_sessions)],
            S.LAST_TIME: [start + timedelta(hours=i, minutes=30) for i in range(n_sessions)],
            S.MODELS: [[f"model-{i % 5}"] for i in range(n_sessions)],
            S.LAST_MODEL: [f"model-{i % 5}" for i in range(n_sessions)],
            S.PEAK_OCCUPANCY: [(i * 7919) % 200_000 for i in range(n_sessions)],
            S.LAST_OCCUPANCY: [(i * 3119) % 200_000 for i in range(n_sessions)],
            S.WINDOW: [200_000] * n_sessions,
            S.COMPACTIONS: [i % 3 for i in range(n_sessions)],
            S.INPUT_TOKENS: [10] * n_sessions,
            S.CACHE_CREATION_TOKENS: [1000] * n_sessions,
            S.CACHE_READ_TOKENS: [5000] * n_sessions,
            S.OUTPUT_TOKENS: [300] * n_sessions,
            S.ESTIMATED_TOKENS: [500 + i % 900 for i in range(n_sessions)],
            **{b: [i % 97 for i in range(n_sessions)] for b in C.BUCKET_LABELS},
        }
    )
    n = n_sessions * turns_each
    turns = pl.DataFrame(
        {
            S.SESSION_ID: [f"s{i // turns_each:05d}" for i in range(n)],
            S.IS_SUBAGENT_FILE: [False] * n,
            S.TURN_INDEX: [i % turns_each for i in range(n)],
            S.OCCUPANCY: [1000 + (i * 7919) % 190_000 for i in range(n)],
            S.USED_FRACTION: [((1000 + (i * 7919) % 190_000) / 200_000) for i in range(n)],
            S.COMPACTED: [i % 11 == 0 for i in range(n)],
            S.WINDOW: [200_000] * n,
            S.EFFECTIVE_WINDOW: [180_000] * n,
            S.AUTOCOMPACT_THRESHOLD: [167_000] * n,
            S.MODEL: ["model-1"] * n,
            S.ESTIMATED_CONTEXT: [100 + (i * 31) % 90_000 for i in range(n)],
        }
    )
    return sessions, turns


def test_charts_stay_small_on_a_large_corpus() -> None:
    sessions, turns = large_frames()
    assert turns.height > 5000
    for chart in (
        C.bucket_breakdown(sessions),
        C.occupancy_over_turns(turns),
        C.peak_distribution(sessions),
        C.daily_trend(sessions),
        C.comparison(sessions, by="model"),
        C.comparison(sessions, by="project"),
        C.calibration(turns),
    ):
        spec = chart.to_dict()
        assert rows(spec) <= 2000


def test_calibration_bins_beyond_max_points() -> None:
    _, turns = large_frames(2000)
    spec = C.calibration(turns, max_points=500, bins=20).to_dict()
    cells = next(d for d in spec["datasets"].values() if d and "turns" in d[0])
    assert len(cells) <= 400
    assert sum(c["turns"] for c in cells) == turns.height


def test_cost_per_day_sums_the_priced_requests_by_model(data) -> None:
    spec = C.cost_per_day(data.requests, top_models=2).to_dict()
    (values,) = spec["datasets"].values()
    assert sum(v["cost"] for v in values) == pytest.approx(data.requests["cost_usd"].sum(), rel=1e-12)
    assert sum(v["requests"] for v in values) == data.requests.height
    assert {v["model"] for v in values} == {"claude-opus-4-6", "claude-sonnet-4-6", "other"}


def test_cost_by_project_groups_chainless_sessions_by_format(data) -> None:
    spec = C.cost_by(data.requests, by="project").to_dict()
    (values,) = spec["datasets"].values()
    by_project = {v["project"]: v["cost"] for v in values}
    assert set(by_project) == {
        "webshop",
        "data-pipeline",
        "infra-scripts",
        "翻译工具",
        "(chainlesschain)",
        "app",
        "(gemini)",
        "sample",
        "other",
        "ledger",
        "site",
        "shop",
        "blog",
    }
    assert sum(by_project.values()) == pytest.approx(data.sessions["cost_usd"].sum(), rel=1e-12)


def test_composition_over_turns_stacks_the_calibrated_parts(tmp_path) -> None:
    import cc_analytics.frames as ccf
    from tests.frames.test_claude_composition import built

    composition = ccf.read_composition(built(tmp_path))
    parts = C.composition_parts(composition, top_parts=4)
    per_turn = parts.group_by("turn_index", maintain_order=True).agg(pl.col("tokens").sum())
    assert per_turn.rows() == [(0, 10_336), (1, 10_914), (2, 10_090)]  # each bar is the recorded occupancy
    assert set(parts["part"]) == {"baseline", "tool_result · Read", "user", "tool_result · mcp__github", "other"}
    spec = C.composition_over_turns(composition, top_parts=4).to_dict()
    assert marks(spec) == {"bar", "rule"}
    rules = [layer for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
    assert rules and spec["datasets"][rules[0]["data"]["name"]] == [{"turn_index": 2}]


def test_limits_beside_blocks(tmp_path) -> None:
    import cc_analytics.frames as ccf
    from cc_analytics.frames.claude.kept import HISTORY, keep
    from cc_analytics.report import SAMPLES_DIR

    keep(
        {"session_id": "s", "rate_limits": {"five_hour": {"used_percentage": 12.5, "resets_at": 1774350000}}},
        folder=tmp_path,
        now=1774340000,
    )
    limits = ccf.read_limits(SAMPLES_DIR, history=tmp_path / HISTORY)
    blocks = ccf.read_usage(SAMPLES_DIR, by="block")
    spec = C.limits_beside_blocks(limits, blocks).to_dict()
    assert marks(spec) == {"line", "bar"} and spec["resolve"] == {"scale": {"x": "shared"}}
    top = spec["datasets"][spec["vconcat"][0]["data"]["name"]]
    assert {row["limit"] for row in top} == {"claude-code · five_hour", "codex · five_hour", "codex · seven_day"}
    assert len(spec["datasets"][spec["vconcat"][1]["data"]["name"]]) == blocks.height
    assert marks(C.limits_beside_blocks(limits).to_dict()) == {"line"}
