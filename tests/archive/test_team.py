"""A team's archives in one bucket (moto's S3 server): one archive per machine under a prefix, read as one."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import polars as pl
import pytest

from cc_analytics.archive import update
from tests.archive.conftest import BUCKET, CREDENTIALS, SAMPLES, assert_same, tables
from tests.conftest import run_cli

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")


SHARED = "-home-dev-webshop"  # a Claude Code project archived from two machines


def _team(s3: object, tmp_path: Path) -> tuple[str, Path]:
    """data-samples split into three machines archived under one prefix; cara also archives a
    copy (another path) of one of anna's projects."""
    copy = tmp_path / "cara-home" / SHARED
    shutil.copytree(SAMPLES / "claude" / "projects" / SHARED, copy)
    team = f"s3://{BUCKET}/team"
    update(SAMPLES / "claude", f"{team}/anna", machine="anna")
    update(SAMPLES / "codex", f"{team}/ben", machine="ben")
    update([SAMPLES / "chainless", copy], f"{team}/cara", machine="cara")
    return team, copy


def test_three_machines_in_one_bucket_read_as_one(s3: object, endpoint: str, tmp_path: Path) -> None:
    team, copy = _team(s3, tmp_path)
    got = tables(team, machine=True)
    # Exactly the union: what the transcripts of the three machines give, each request once.
    assert_same({k: v.drop("machine") for k, v in got.items()}, tables(SAMPLES))
    by_format = dict(got["sessions"].group_by("format").agg(pl.col("machine").unique().sort()).iter_rows())
    assert by_format == {"claude-code": ["anna"], "codex": ["ben"], "chainlesschain": ["cara"]}
    # The shared project is in cara's archive too, but its sessions and requests count once (anna's).
    cara = tables(f"{team}/cara", machine=True)
    shared = cara["sessions"].filter(pl.col("project").str.contains("webshop"))
    assert shared.height == 4 and set(shared["machine"]) == {"cara"}
    assert not got["turns"]["source_file"].str.starts_with(str(copy)).any()
    requests = got["requests"]
    assert requests.height == tables(SAMPLES)["requests"].height
    ids = requests.drop_nulls(["message_id", "request_id"]).select("format", "message_id", "request_id")
    assert (
        ids.is_duplicated().sum()
        == tables(SAMPLES)["requests"]
        .drop_nulls(["message_id", "request_id"])
        .select("format", "message_id", "request_id")
        .is_duplicated()
        .sum()
    )

    # The archives given one by one read the same as their prefix; so does the CLI, by machine.
    listed = tables([f"{team}/anna", f"{team}/ben", f"{team}/cara"], machine=True)
    assert_same(listed, got)
    env = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
    result = run_cli(["usage", team, "--by", "machine", "--json"], env=env)
    assert result.returncode == 0, result.stderr
    rows = {row["machine"]: row for row in orjson.loads(result.stdout)}
    assert set(rows) == {"anna", "ben", "cara"}
    per_machine = requests.group_by("machine").agg(pl.len(), pl.col("cost_usd").sum())
    for machine, count, cost in per_machine.iter_rows():
        assert rows[machine]["requests"] == count and rows[machine]["cost_usd"] == pytest.approx(cost)
    report = run_cli(["report", team, "--out", str(tmp_path / "report"), "--quiet"], env=env)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.html").read_text()
    assert "Per machine" in page and all(f"<td>{m}</td>" in page for m in ("anna", "ben", "cara"))
    from cc_analytics.views.widgets import SessionExplorer

    explorer = SessionExplorer.from_source(team)
    assert explorer.sessions.height == got["sessions"].height and "machine" in explorer.sessions.columns


def test_a_session_archived_from_two_machines_counts_once(tmp_path: Path) -> None:
    # The same sessions (a synced folder) archived by two machines, with more of one on the second.
    source = tmp_path / "synced" / SHARED
    shutil.copytree(SAMPLES / "claude" / "projects" / SHARED, source)
    update(source, tmp_path / "team" / "laptop", machine="laptop")
    longest = max(source.glob("*.jsonl"), key=lambda p: p.stat().st_size)
    lines = longest.read_bytes().splitlines(keepends=True)
    longest.write_bytes(b"".join(lines[: len(lines) // 2]))  # the laptop has it whole, the devbox half
    update(source, tmp_path / "team" / "devbox", machine="devbox")
    longest.write_bytes(b"".join(lines))
    got = tables(tmp_path / "team", machine=True)
    once = tables(source)
    assert_same({k: v.drop("machine") for k, v in got.items()}, once)
    session = longest.stem
    owner = got["sessions"].filter(pl.col("session_id") == session)["machine"].to_list()
    assert owner == ["laptop"]  # the copy with the most events
    # The other sessions: in both, equal: the first archive (devbox sorts first) gives them.
    assert set(got["sessions"].filter(pl.col("session_id") != session)["machine"]) == {"devbox"}
