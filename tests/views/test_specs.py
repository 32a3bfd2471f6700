"""The charts' Vega-Lite specs: valid against the schema, strict JSON, drawn by Vega, and the
same charts ``views.charts`` gives as Altair objects."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from cc_analytics.frames.claude import schema as S
from cc_analytics.views import specs


@pytest.fixture(scope="module")
def data():
    from cc_analytics.report import load

    return load(samples=True)


@pytest.fixture(scope="module")
def vega_lite():
    """A validator of the Vega-Lite schema Altair ships (jsonschema comes with Altair)."""
    import altair as alt
    import jsonschema
    from altair.vegalite.v6.schema import load_schema

    assert alt.SCHEMA_URL == specs.VEGA_LITE  # the specs name the schema they are checked against
    schema = load_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def every_spec(data) -> dict[str, dict]:
    from cc_analytics.report import report_charts

    sessions, turns = data.sessions, data.turns
    compacted = sessions.filter(pl.col(S.COMPACTIONS) >= 2)[S.SESSION_ID][0]
    return {
        **{chart_id: spec for chart_id, _caption, spec in report_charts(data)},
        "one session": specs.occupancy_over_turns(turns, session_id=compacted),
        "no session": specs.occupancy_over_turns(turns.clear()),
        "buckets in tokens": specs.bucket_breakdown(sessions, normalize=False, unattributed=True),
        "calibration binned": specs.calibration(turns, max_points=50, bins=10),
    }


def test_every_spec_is_valid_vega_lite_in_strict_json(data, vega_lite) -> None:
    # The report embeds its specs unvalidated: here they are checked, with the extra charts'.
    found = every_spec(data)
    assert len(found) >= 14
    for name, spec in found.items():
        errors = sorted(vega_lite.iter_errors(spec), key=lambda error: list(error.absolute_path))
        assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)}"
        json.dumps(spec, allow_nan=False)  # no NaN or infinity: JSON.parse would refuse them
        assert spec["$schema"] == specs.VEGA_LITE and "datasets" not in spec, name


def test_every_report_spec_is_drawn_by_vega(data) -> None:
    # vl-convert runs Vega-Lite and Vega (as the page's Vega-Embed does): each spec draws marks.
    import vl_convert

    from cc_analytics.report import report_charts

    for chart_id, _caption, spec in report_charts(data):
        svg = vl_convert.vegalite_to_svg(spec)
        assert "<svg" in svg and 'class="mark-' in svg, chart_id


def test_the_altair_charts_are_the_specs(data) -> None:
    from cc_analytics.views import charts as C

    sessions, requests = data.sessions, data.requests
    pairs = {
        "buckets": (C.bucket_breakdown(sessions, top=5), specs.bucket_breakdown(sessions, top=5)),
        "comparison": (C.comparison(sessions, by="project"), specs.comparison(sessions, by="project")),
        "cost by model": (C.cost_by(requests, by="model"), specs.cost_by(requests, by="model")),
        "occupancy": (C.occupancy_over_turns(data.turns), specs.occupancy_over_turns(data.turns)),
    }
    for name, (chart, spec) in pairs.items():
        assert inlined(chart.to_dict(validate=False)) == spec, name
        assert (chart | C.peak_distribution(sessions)).to_dict(), name  # a part of another chart
        assert type(chart).__name__ == {"layer": "LayerChart", "hconcat": "HConcatChart", "concat": "ConcatChart"}.get(
            next((key for key in ("layer", "hconcat", "concat") if key in spec), ""), "Chart"
        )


def inlined(spec: dict) -> dict:
    """An Altair chart's dict with its ``datasets`` put back where they are named."""
    datasets = spec.pop("datasets", {})

    def walk(node: object) -> object:
        if isinstance(node, dict):
            named = node.get("data", {}).get("name") if isinstance(node.get("data"), dict) else None
            return {
                key: {"values": datasets[named]} if key == "data" and named in datasets else walk(value)
                for key, value in node.items()
            }
        return [walk(value) for value in node] if isinstance(node, list) else node

    return walk(spec)  # type: ignore[return-value]


def test_dates_and_times_are_iso_strings_and_nan_is_null() -> None:
    from datetime import UTC, date, datetime

    frame = pl.DataFrame(
        {
            "day": [date(2026, 3, 1)],
            "naive": [datetime(2026, 3, 1, 10, 0, 5, 250_000)],
            "aware": [datetime(2026, 3, 1, 10, tzinfo=UTC)],
            "ratio": [math.nan],
            "big": [math.inf],
            "n": [3],
        }
    )
    (row,) = specs.inline(frame)["values"]
    assert row == {
        "day": "2026-03-01T00:00:00",
        "naive": "2026-03-01T10:00:05.250",
        "aware": "2026-03-01T10:00:00+0000",
        "ratio": None,
        "big": None,
        "n": 3,
    }


def test_a_channel_is_altairs_shorthand_spelled_out() -> None:
    assert specs.channel("day:T", timeUnit="utcyearmonthdate") == {
        "field": "day",
        "type": "temporal",
        "timeUnit": "utcyearmonthdate",
    }
    with pytest.raises(ValueError, match="not a channel shorthand: 'day'"):
        specs.channel("day")
