"""Write the example notebooks from the cell sources below (outputs empty, so nothing to strip).

Run: ``python notebooks/_build.py``. Edit the cells here, not the ``.ipynb`` files; the
notebooks run in CI with ``pytest --nbval-lax notebooks/`` and assert their key numbers.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
from pathlib import Path

import polars as pl

# The repository's data-samples/: sessions we made ourselves, of every format.
ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "data-samples").is_dir())
SAMPLES = ROOT / "data-samples"
CLAUDE = SAMPLES / "claude" / "projects"
pl.Config.set_tbl_rows(20)
pl.Config.set_fmt_str_lengths(40)"""

QUICKSTART = [
    new_markdown_cell(
        "# Quickstart: load sessions, look at the frames, read a gauge\n\n"
        "Three steps: load Claude Code transcripts into Polars frames, find the sessions whose "
        "context windows got fullest, and look at one of them with `ContextGauge`. Point the "
        "loaders at `~/.claude/projects` (the default when you pass nothing) to see your own."
    ),
    new_code_cell(SETUP),
    new_markdown_cell(
        "## Sessions\n\nOne row per session (a main transcript plus its subagent files): "
        "deduplicated token totals, last and peak occupancy, the window, compactions and the "
        "heuristic buckets."
    ),
    new_code_cell(
        """\
import cc_analytics.frames as frames

sessions = frames.read_sessions(CLAUDE)
overview = sessions.select(
    "session_id", "project", "last_model", "turns", "peak_occupancy", "window",
    (pl.col("peak_occupancy") / pl.col("window")).alias("peak_fraction"), "compactions",
).sort("peak_fraction", descending=True)
assert sessions.height == 14
assert sessions["compactions"].sum() == 3
assert sessions["subagent_files"].sum() == 3
overview"""
    ),
    new_markdown_cell(
        "## Turns\n\nOne row per turn, cut exactly as the ContextWindow core cuts them, with the "
        "recorded occupancy at the turn's last main-chain request."
    ),
    new_code_cell(
        """\
turns = frames.read_turns(CLAUDE)
main = turns.filter(~pl.col("is_subagent_file"))
assert main["session_id"].n_unique() == 14
assert main.filter(pl.col("tool_errors") > 0).height >= 4
main.select("session_id", "turn_index", "occupancy", "used_fraction", "tool_names", "compacted", "prompt").head(12)"""
    ),
    new_markdown_cell(
        "## A gauge\n\nGreen up to 70% of the window, yellow above, red above 90%. The dashed "
        "marks are the auto-compact threshold and the effective window (window minus the "
        "output reserve); recorded and estimated occupancy sit side by side."
    ),
    new_code_cell(
        """\
from cc_analytics.views import ContextGauge

fullest = overview["session_id"][0]
gauge = ContextGauge.from_frame(sessions, fullest)
assert gauge.figures.zone == "red" and not gauge.figures.overflows
assert gauge.figures.threshold == 167_000
gauge"""
    ),
    new_markdown_cell(
        "## Both formats, one explorer\n\nThe report loader reads ChainlessChain sessions too "
        "(their occupancy is the heuristic estimate). `SessionExplorer` filters by project, "
        "model, date, peak occupancy or text, and shows the window preview of a selected turn."
    ),
    new_code_cell(
        """\
from cc_analytics.report import load
from cc_analytics.views import SessionExplorer

data = load(samples=True)
assert dict(data.sessions.group_by("format").len().iter_rows()) == {"claude-code": 14, "chainlesschain": 7, "codex": 6, "gemini": 3, "opencode": 2, "qwen": 3, "copilot": 3}
explorer = SessionExplorer(data.sessions, data.turns)
assert explorer.session_id == fullest
explorer"""
    ),
    new_markdown_cell(
        "## Every agent at once\n\nThe same verbs read every format cc-analytics knows "
        "(`cc_analytics.formats()`), told apart by content: here the samples' Claude Code, "
        "ChainlessChain, OpenAI Codex CLI, Gemini CLI, Qwen Code and OpenCode sessions in one frame (Qwen "
        "Code's own models have no offline price: their requests are counted as unpriced, never "
        "as free). Codex records the occupancy "
        "of every request against its `model_context_window`, and the account's rate limits "
        "(`frames.codex.read_rate_limits`: the 5-hour and weekly windows, used percent and reset "
        "time)."
    ),
    new_code_cell(
        """\
import cc_analytics
import cc_analytics.frames.codex as codex

every = cc_analytics.read_sessions(SAMPLES)
assert sorted(every["format"].unique()) == sorted(p.name for p in cc_analytics.formats())
codex_sessions = every.filter(pl.col("format") == "codex")
assert (codex_sessions["occupancy_source"] == "recorded").all() and codex_sessions["window"].min() == 258_400
limits = codex.read_rate_limits(SAMPLES / "codex")
assert set(limits["window_minutes"]) == {300, 10_080}
display(every.group_by("format").agg(pl.len().alias("sessions"), pl.col("requests").sum(), pl.col("cost_usd").sum()))
limits.select("session_id", "time", "limit_window", "used_percent", "window_minutes", "resets_at").tail(4)"""
    ),
]

CONTEXT_USAGE = [
    new_markdown_cell(
        "# Context usage across sessions\n\nHow full do windows get, what fills them, when does "
        "compaction strike, and how far is the heuristic estimate from what the API recorded."
    ),
    new_code_cell(SETUP),
    new_code_cell(
        """\
import cc_analytics.frames as frames
from cc_analytics.views import charts

sessions = frames.read_sessions(CLAUDE)
turns = frames.read_turns(CLAUDE)
peak = (pl.col("peak_occupancy") / pl.col("window")).alias("peak_fraction")
bands = sessions.select(peak).select(
    (pl.col("peak_fraction") > 0.9).sum().alias("red"),
    ((pl.col("peak_fraction") > 0.7) & (pl.col("peak_fraction") <= 0.9)).sum().alias("yellow"),
)
assert bands.row(0) == (1, 1)
charts.peak_distribution(sessions)"""
    ),
    new_markdown_cell("## Occupancy over turns\n\nThe sessions with the highest peaks, with their limits."),
    new_code_cell("charts.occupancy_over_turns(turns)"),
    new_markdown_cell(
        "## Compaction analysis\n\nEach compaction: its trigger, the occupancy before "
        "(`preTokens`) and the first recorded occupancy after it."
    ),
    new_code_cell(
        """\
compactions = (
    sessions.filter(pl.col("compactions") > 0)
    .select("session_id", "window", "autocompact_threshold", "compaction_triggers",
            "compaction_pre_tokens", "compaction_post_tokens")
    .explode("compaction_triggers", "compaction_pre_tokens", "compaction_post_tokens")
    .with_columns((pl.col("compaction_pre_tokens") - pl.col("compaction_post_tokens")).alias("freed"))
)
auto = compactions.filter(pl.col("compaction_triggers") == "auto")
assert compactions.height == 3 and auto.height == 2
assert (auto["compaction_pre_tokens"] >= auto["autocompact_threshold"]).all()
assert (auto["freed"] > 100_000).all()
compactions"""
    ),
    new_code_cell("charts.occupancy_over_turns(turns, session_id=auto['session_id'][0])"),
    new_markdown_cell("## What fills the context, and the daily trend"),
    new_code_cell("charts.bucket_breakdown(sessions)"),
    new_code_cell(
        """\
daily = charts.daily_trend(sessions)
token_columns = ["input_tokens", "cache_creation_tokens", "cache_read_tokens", "output_tokens"]
total = sessions.select(pl.sum_horizontal(token_columns).sum()).item()
assert sessions["cache_read_tokens"].sum() > total / 2  # the prompt cache serves most input
daily"""
    ),
    new_markdown_cell("## By model and by project"),
    new_code_cell(
        """\
by_model = sessions.group_by("last_model").agg(pl.len().alias("sessions"), peak.max().alias("max_peak"))
assert by_model.height == 7
charts.comparison(sessions, by="model")"""
    ),
    new_code_cell("charts.comparison(sessions, by='project')"),
    new_markdown_cell(
        "## Calibration\n\nThe heuristic estimate counts only the transcript's text; the recorded "
        "occupancy also holds the system prompt, tool schemas and outputs saved outside the "
        "transcript. The two still rise together."
    ),
    new_code_cell(
        """\
pairs = turns.filter(
    ~pl.col("is_subagent_file") & (pl.col("occupancy") > 0) & (pl.col("estimated_context") > 0)
)
rank_correlation = pairs.select(pl.corr("estimated_context", "occupancy", method="spearman")).item()
assert (pairs["occupancy"] > pairs["estimated_context"]).all()
assert rank_correlation > 0.5, rank_correlation
charts.calibration(turns)"""
    ),
]

CONTEXT_WINDOWS = [
    new_markdown_cell(
        "# Context windows around the moments that matter\n\nPick anchors with ordinary Polars "
        "filters (the turn of peak occupancy in each session, each compaction), capture a "
        "`cc-transcript.context/2` window around each, render the previews, and check that the "
        "JSON round-trips."
    ),
    new_code_cell(SETUP),
    new_code_cell(
        """\
import cc_analytics.frames as frames
from cc_analytics.frames.capture import capture_window_frame

turns = frames.read_turns(CLAUDE)
peak_turns = (
    turns.filter(~pl.col("is_subagent_file") & pl.col("occupancy").is_not_null())
    .sort("occupancy", descending=True)
    .group_by("session_id", maintain_order=True)
    .first()
    .select("session_id", pl.col("event_uuids").list.first().alias("event_uuid"),
            "source_file", "turn_index", "occupancy")
)
assert peak_turns.height == 14
peak_windows = capture_window_frame(peak_turns, before=2, after=1)
assert peak_windows["error"].null_count() == peak_windows.height
peak_windows.select("session_id", "event_uuid", pl.col("window_json").str.len_bytes().alias("json_bytes"))"""
    ),
    new_markdown_cell("## The preview of the fullest moment"),
    new_code_cell(
        """\
from cc_analytics.core import Budget, ContextWindow

fullest = peak_turns.sort("occupancy", descending=True).row(0, named=True)
window = ContextWindow.from_json(
    peak_windows.filter(pl.col("session_id") == fullest["session_id"])["window_json"][0]
)
preview = window.render_preview(budget=Budget())
assert window.trigger is not None and window.fidelity == "full"
assert preview.count("Read(") >= 3
print(preview)"""
    ),
    new_markdown_cell("## Windows around each compaction"),
    new_code_cell(
        """\
events = frames.read_events(CLAUDE)
boundaries = events.filter(pl.col("subtype") == "compact_boundary").select(
    "session_id", pl.col("uuid").alias("event_uuid"), "source_file", "compact_trigger", "compact_pre_tokens"
)
compaction_windows = capture_window_frame(boundaries, before=1, after=1)
assert compaction_windows.height == 3 and compaction_windows["error"].null_count() == 3
for row in compaction_windows.iter_rows(named=True):
    w = ContextWindow.from_json(row["window_json"])
    assert any(ref.event_uuid == row["event_uuid"] for ref in w.trigger.refs)
    print(f"--- {row['session_id'][:8]} ---")
    print(w.render_preview(budget=Budget(turn_chars=300)))"""
    ),
    new_markdown_cell(
        "## Round trip and hydration\n\nWindows are byte-stable JSON: parsing and serialising "
        "again gives the same bytes. `hydrate()` re-reads the transcript for a full render."
    ),
    new_code_cell(
        """\
documents = pl.concat([peak_windows["window_json"], compaction_windows["window_json"]]).to_list()
parsed = [ContextWindow.from_json(doc) for doc in documents]
assert [w.to_json() for w in parsed] == documents
assert all(ContextWindow.from_json(w.to_json()) == w for w in parsed)
hydrated = window.hydrate(root=CLAUDE)
assert hydrated is not None
full = hydrated.render(budget=Budget())
assert len(full) >= len(preview)
print(full[:1500])"""
    ),
]


COST = [
    new_markdown_cell(
        "# What it cost: requests, prices, usage over time and 5-hour blocks\n\n"
        "Every API request of every format becomes one row of the requests frame, priced offline "
        "(genai-prices' bundled snapshot) at its own date: cache writes at their 5-minute or 1-hour "
        "rate, long-context tiers, web searches. From there: cost per session and turn, usage by "
        "day, model or project, and the 5-hour blocks ccusage users know."
    ),
    new_code_cell(SETUP),
    new_markdown_cell(
        "## The requests frame\n\nClaude Code responses are split over several lines that share "
        "their message and request ids: each counts once (the last line wins), subagents included, "
        "exactly as the sessions' token totals count them. ChainlessChain `token_usage` records are "
        "one request each, priced by provider and model (local models cost 0)."
    ),
    new_code_cell(
        """\
import cc_analytics.frames as frames

requests = frames.read_requests(SAMPLES)
sessions = frames.read_sessions(SAMPLES)
assert requests.height == sessions["requests"].sum() == 197
assert requests["cost_usd"].null_count() == 6  # Qwen Code's own models: no offline price, never free
assert round(requests["cost_usd"].sum(), 2) == 10.64
assert abs(sessions["cost_usd"].sum() - requests["cost_usd"].sum()) < 1e-9
requests.select("format", "session_id", "agent_id", "time", "model", "input_tokens",
                "cache_creation_5m_tokens", "cache_read_tokens", "output_tokens", "cost_usd").head(8)"""
    ),
    new_markdown_cell(
        "## The prices used\n\n`price_table` shows, for each model and price period, what a "
        "million tokens of each kind cost (and above which prompt size a long-context tier starts)."
    ),
    new_code_cell(
        """\
from cc_analytics.frames.prices import price_table

prices = price_table(requests).filter(pl.col("status") == "priced")
opus = prices.filter((pl.col("priced_model") == "claude-opus-4-6") & pl.col("above_prompt_tokens").is_null())
assert opus["input_mtok"].cast(pl.Float64).to_list()[0] == 5.0
assert opus["cache_write_1h_mtok"].cast(pl.Float64).to_list()[0] == 10.0
prices.select("model", "period_start", "above_prompt_tokens", "input_mtok", "cache_write_5m_mtok",
              "cache_write_1h_mtok", "cache_read_mtok", "output_mtok")"""
    ),
    new_markdown_cell(
        "## The costliest sessions\n\n`cost_usd` is in the sessions and turns frames too: the sum "
        "of their requests' costs, null when none of them has a price (never a silent zero)."
    ),
    new_code_cell(
        """\
costliest = sessions.sort("cost_usd", descending=True, nulls_last=True).select(
    "format", "session_id", "project", "last_model", "requests", "cost_usd", "unpriced_requests"
)
assert costliest["session_id"][0].startswith("24422850")
assert sessions.filter(pl.col("requests") == 0)["cost_usd"].null_count() == 5  # nothing recorded, no cost
costliest.head(6)"""
    ),
    new_markdown_cell(
        "## Usage over time\n\nBy day, week or month in any timezone, with a row per model under "
        "each group (`breakdown=True`)."
    ),
    new_code_cell(
        """\
by_day = frames.read_usage(SAMPLES, by="day", timezone="UTC")
assert by_day.height == 19 and by_day["requests"].sum() == 197
by_week = frames.read_usage(SAMPLES, by="week", timezone="Europe/Paris", breakdown=True)
assert by_week.filter(pl.col("model").is_null()).height == 5
by_week.select("week", "model", "total_tokens", "cost_usd", "requests")"""
    ),
    new_markdown_cell(
        "## 5-hour blocks\n\nA block starts at its first request's hour and lasts 5 hours; the "
        "next request after it opens the next one. Burn rates are over the block's active time; "
        "the block still running at the newest request gets a projection to its end."
    ),
    new_code_cell(
        """\
from cc_analytics.frames.usage import usage

blocks = usage(requests, "block")
assert blocks.height == 28 and blocks["is_active"].sum() == 1
assert (blocks["block_end"] - blocks["block_start"]).dt.total_hours().unique().to_list() == [5]
blocks.select("block_start", "is_active", "requests", "total_tokens", "cost_usd",
              "cost_per_hour", "projected_cost_usd").tail(5)"""
    ),
    new_markdown_cell(
        "## What the prompt cache saved\n\nPrice the same requests as if every cached token had "
        "been sent as plain input: the frame is ordinary Polars, so a what-if is one `with_columns`."
    ),
    new_code_cell(
        """\
from cc_analytics.frames.prices import price_requests

cached = ["cache_creation_5m_tokens", "cache_creation_1h_tokens", "cache_read_tokens"]
uncached = requests.with_columns(
    (pl.col("input_tokens") + pl.sum_horizontal(cached)).alias("input_tokens"),
    *(pl.lit(0).alias(name) for name in cached),
)
without_cache = price_requests(uncached)["cost_usd"].sum()
saved = 1 - requests["cost_usd"].sum() / without_cache
assert round(without_cache, 2) == 50.89 and saved > 0.75
print(f"with the cache ${requests['cost_usd'].sum():.2f}, without ${without_cache:.2f}: {saved:.0%} saved")"""
    ),
    new_markdown_cell("## Charts\n\nCost per day stacked by model, then by project and by model."),
    new_code_cell(
        """\
from cc_analytics.views import charts

charts.cost_per_day(requests)"""
    ),
    new_code_cell("charts.cost_by(requests, by='project') | charts.cost_by(requests, by='model')"),
    new_markdown_cell(
        "## A model without a price\n\nA request whose model the price list does not know gets a "
        "null cost, and `unpriced` names it with its count: the CLI prints the same on stderr."
    ),
    new_code_cell(
        """\
from cc_analytics.frames.prices import unpriced

mystery = requests.head(3).with_columns(pl.lit("mystery-model-1").alias("model"))
priced = price_requests(pl.concat([requests, mystery]))
assert priced["cost_usd"].null_count() == 3 + 6  # and the samples' Qwen Code models
assert ("anthropic", "mystery-model-1", None, 3) in unpriced(priced).rows()
unpriced(priced)"""
    ),
    new_markdown_cell("## A session's gauge shows its cost"),
    new_code_cell(
        """\
from cc_analytics.views import ContextGauge

gauge = ContextGauge.from_frame(sessions, costliest["session_id"][0])
assert "cost $4.49" in repr(gauge)
gauge"""
    ),
]


TEAM = [
    new_markdown_cell(
        "# A team's history: one archive per machine, one bucket, read as one\n\n"
        "Three machines archive what their agents wrote to one bucket, each under a prefix of its "
        "own, sharing only what a team should see (`--share`: no prompt, response or tool text; "
        "project paths as pseudonyms; no raw copies). The bucket is then read as one frame, "
        "usage is split by machine, and DuckDB reads the same bucket without this package. The "
        "bucket here is a local S3 server (moto's, as the tests use); point the URLs at your own "
        "bucket to do the same for real."
    ),
    new_code_cell(SETUP),
    new_markdown_cell(
        "## A bucket\n\nA moto S3 server on loopback, and fsspec (which the archive writes "
        "through) pointed at it. With a real bucket, credentials come from the environment as "
        "usual and none of this is needed."
    ),
    new_code_cell(
        """\
import logging
import os

import fsspec
import fsspec.config
from moto.server import ThreadedMotoServer

logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's request log
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
ENDPOINT = f"http://{host}:{port}"
os.environ.update(
    AWS_ACCESS_KEY_ID="team", AWS_SECRET_ACCESS_KEY="team", AWS_DEFAULT_REGION="us-east-1",
    FSSPEC_S3_ENDPOINT_URL=ENDPOINT,
)
fsspec.config.conf.setdefault("s3", {})["endpoint_url"] = ENDPOINT
s3 = fsspec.filesystem("s3")
s3.mkdir("team-archive")
BUCKET = "s3://team-archive"
ENDPOINT.startswith("http://127.0.0.1:")"""
    ),
    new_markdown_cell(
        "## Three machines archive\n\n`data-samples/` split in three: anna's laptop has the "
        "Claude Code projects, ben's devbox the other agents' sessions (Codex and more), and the CI runner the "
        "ChainlessChain sessions plus a copy of one of anna's projects (the same sessions, "
        "archived from two machines). Each runs `cc-analytics archive --to "
        "s3://team-archive/NAME --machine NAME --share`; in Python that is `archive.update`."
    ),
    new_code_cell(
        """\
import shutil
import tempfile

from cc_analytics.archive import update

ci_home = Path(tempfile.mkdtemp()) / "-home-dev-webshop"
shutil.copytree(CLAUDE / "-home-dev-webshop", ci_home)  # the same sessions on the CI runner
machines = {
    "anna-laptop": [SAMPLES / "claude"],
    "ben-devbox": sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name not in ("claude", "chainless")),
    "ci-runner": [SAMPLES / "chainless", ci_home],
}
for machine, sources in machines.items():
    summary = update(sources, f"{BUCKET}/{machine}", machine=machine, share=True)
    print(f"{machine:12} {summary.new:3} files, {summary.sessions:3} sessions, {summary.parts_written} parts")
sorted(path.rpartition("/")[2] for path in s3.ls("team-archive"))"""
    ),
    new_markdown_cell(
        "## Read as one\n\nEvery reader takes the prefix: each archive under it is scanned, "
        "every row gets its `machine`, and what two machines both archived counts once (a "
        "session from the archive where it has the most events; a request once by its message "
        "and request ids). The bucket gives exactly what the transcripts of the three machines "
        "give."
    ),
    new_code_cell(
        """\
import cc_analytics.frames as frames

sessions = frames.read_sessions(f"{BUCKET}/")
everything = frames.read_sessions(SAMPLES)
assert sessions.height == everything.height
assert sessions["cost_usd"].sum() == everything["cost_usd"].sum()
assert sessions["project"].drop_nulls().str.starts_with("project-").all()  # pseudonyms, not paths
sessions.group_by("machine", "format").agg(pl.len().alias("sessions"), pl.col("cost_usd").sum()).sort("machine")"""
    ),
    new_markdown_cell(
        '### On a Dask cluster, when asked\n\n`open_archives([...], engine="dask", client=...)` '
        '(or `scheduler="tcp://…"`; `--engine dask --scheduler …` for `usage`, `sessions` and `report`) '
        "reads the archives' Parquet parts as tasks on the cluster's workers, which must reach the "
        "bucket; the frames are the same. Here a cluster of threads in this process stands in for one."
    ),
    new_code_cell(
        """\
from distributed import Client, LocalCluster

from cc_analytics.archive import open_archives

with (
    LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
    Client(cluster) as client,
    open_archives([f"{BUCKET}/"], engine="dask", client=client) as team,
):
    on_dask = frames.read_sessions(team)  # every reader takes the archives as opened
    tasks = len(team.tasks("requests"))
assert on_dask.equals(sessions)
f'{tasks} tasks read the requests of {len(team.archives)} archives'"""
    ),
    new_markdown_cell(
        "## Usage by machine\n\n`cc-analytics usage s3://team-archive/ --by machine` in a "
        "terminal; the report (`cc-analytics report s3://team-archive/`) adds a per-machine "
        "table. The CI runner's copy of anna's project is not counted twice: its sessions are "
        "anna's."
    ),
    new_code_cell(
        """\
by_machine = frames.read_usage(f"{BUCKET}/", by="machine")
requests = dict(by_machine.select("machine", "requests").iter_rows())
assert requests["anna-laptop"] == 142 and requests["ci-runner"] == 11  # the copy: counted as anna's
assert sum(requests.values()) == frames.read_usage(SAMPLES, by="month")["requests"].sum()
by_machine.select("machine", "models", "input_tokens", "output_tokens", "cache_read_tokens", "cost_usd", "requests")"""
    ),
    new_markdown_cell(
        "## Nothing private in the bucket\n\nA shared archive keeps tokens, times, models, tool "
        "names, sizes and costs; the prompts are gone, and so are the raw copies."
    ),
    new_code_cell(
        """\
turns = frames.read_turns(f"{BUCKET}/")
assert turns["prompt"].null_count() == turns.height
assert not s3.glob("team-archive/*/raw/**")
turns.select("machine", "session_id", "turn_index", "occupancy", "tool_names", "prompt").head(6)"""
    ),
    new_markdown_cell(
        "## The team's composition of context\n\nWhat filled the window is measured from the "
        "transcripts' content blocks (`frames.read_composition`; Claude Code's transcripts say "
        "it), which a shared bucket does not keep: each machine measures its own, and the team "
        "compares the parts' token sums, which hold no text. Each session is taken from the "
        "machine the bucket gives it to, so the CI runner's copy of anna's project counts once, "
        "as anna's. Below: the parts of the window at each session's last turn, summed by machine."
    ),
    new_code_cell(
        """\
measured = pl.concat(
    [frames.read_composition(sources).with_columns(machine=pl.lit(machine)) for machine, sources in machines.items()]
)
assert set(measured["machine"]) == {"anna-laptop", "ci-runner"}  # the CI runner measured its copy too
owners = sessions.select("format", "session_id", "machine")  # the machine the bucket gives each session to
parts = measured.join(owners, on=["format", "session_id", "machine"], how="semi")
last = parts.filter(pl.col("turn_index") == pl.col("turn_index").max().over("machine", "session_id"))
everyone = frames.read_composition(SAMPLES)  # the three machines' transcripts in one place
assert last["tokens"].sum() == everyone.filter(
    pl.col("turn_index") == pl.col("turn_index").max().over("session_id")
)["tokens"].sum()
(
    last.group_by("machine", "category")
    .agg(pl.col("tokens").sum(), pl.col("session_id").n_unique().alias("sessions"))
    .with_columns(share=(pl.col("tokens") / pl.col("tokens").sum().over("machine")).round(3))
    .sort("machine", "tokens", descending=[False, True])
)"""
    ),
    new_markdown_cell(
        "## DuckDB reads the same bucket\n\nThe tables are Hive-partitioned Parquet datasets: "
        "DuckDB (here through the same fsspec file system) queries the bucket with no code of "
        "ours. It sees every archive's rows as they are, so the session the CI runner archived "
        "too shows twice there: our readers' de-duplication is theirs to repeat."
    ),
    new_code_cell(
        """\
import duckdb

con = duckdb.connect()
con.register_filesystem(s3)
per_machine = con.sql(
    \"\"\"
    select machine, format, count(*) as requests, round(sum(cost_usd), 2) as cost_usd
    from read_parquet('s3://team-archive/*/requests/**/*.parquet', hive_partitioning = true)
    group by all order by all
    \"\"\"
).pl()
assert per_machine.filter(pl.col("machine") == "ci-runner")["requests"].sum() > 11  # the copy, counted again
per_machine"""
    ),
    new_code_cell(
        """\
server.stop()
shutil.rmtree(ci_home.parent)"""
    ),
]


WINDOWS = [
    new_markdown_cell(
        "# What filled the window: the composition turn by turn, and the findings\n\n"
        "The question is not only *how full* a context window got but *why*, and what that cost. "
        "The composition frame says what the window held at each turn, part by part (the baseline "
        "of system prompt, tool definitions and memory files, prompts, thinking, tool calls and "
        "results by tool and MCP server), calibrated so that a turn's parts sum to the occupancy the "
        "transcript recorded. The findings frame points at what is worth a look: the largest items, "
        "files read more than once, the turns where the window jumped and what entered, tool "
        "definitions, MCP servers, the cache rebuilt after an idle gap, the cache hit ratio per turn. "
        "Each finding names its session, turn, line and uuid, so it can be opened."
    ),
    new_code_cell(SETUP),
    new_markdown_cell(
        "## The composition\n\nOne row per main transcript, turn and part. On a turn with a recorded "
        "request the calibrated `tokens` sum to its `occupancy` exactly (the factor and the unscaled "
        "error are columns)."
    ),
    new_code_cell(
        """\
import cc_analytics.frames as frames

parts = frames.read_composition(CLAUDE)
measured = (
    parts.filter(pl.col("occupancy").is_not_null())
    .group_by("session_id", "source_file", "turn_index")
    .agg(pl.col("tokens").sum(), pl.col("occupancy").first())
)
assert measured.height == 34 and (measured["tokens"] == measured["occupancy"]).all()
assert parts["session_id"].n_unique() == 14
parts.filter(pl.col("turn_index") == pl.col("turn_index").max().over("session_id")).group_by(
    "category", "item"
).agg(pl.col("tokens").sum()).sort("tokens", descending=True).head(8)"""
    ),
    new_code_cell(
        """\
from cc_analytics.views import charts

fullest = frames.read_sessions(CLAUDE).sort("peak_occupancy", descending=True)["session_id"][0]
charts.composition_over_turns(parts, session_id=fullest)"""
    ),
    new_markdown_cell(
        "## The findings\n\nOne row per finding: its `kind`, its `rank` in the session, the part "
        "(`category`, `item`), what a tool call named (`target`), and its figures."
    ),
    new_code_cell(
        """\
findings = frames.read_findings(CLAUDE)
kinds = dict(findings.group_by("kind").len().iter_rows())
assert findings["session_id"].n_unique() == 14
assert kinds["tool_definitions"] == 14 and kinds["mcp_server"] == 1
assert findings["uuid"].null_count() == 0
findings.group_by("kind").len().sort("kind")"""
    ),
    new_markdown_cell("### The largest items across sessions"),
    new_code_cell(
        """\
largest = findings.filter(pl.col("kind") == "largest_item").sort("tokens", descending=True)
assert largest["item"][0] == "Read" and largest["tokens"][0] == 7915
largest.select("session_id", "turn_index", "uuid", "category", "item", "target", "tokens").head(6)"""
    ),
    new_markdown_cell(
        "### Where the window jumped, and what entered\n\nThe largest rises of the recorded "
        "occupancy from one turn to the next, each with the parts that brought the most in "
        "(`part_tokens`, calibrated)."
    ),
    new_code_cell(
        """\
jumps = findings.filter(pl.col("kind") == "window_jump", pl.col("session_id") == fullest)
assert jumps["turn_index"].to_list() == [2, 2, 2, 3, 3, 3] and jumps["item"][0] == "Read"
jumps.select("turn_index", "rank", "tokens", "category", "item", "part_tokens")"""
    ),
    new_markdown_cell(
        "### Tool definitions, and the cache\n\nThe baseline every request carries, and the "
        "turns whose prompts were read least from the cache (a rebuilt cache shows here, and as "
        "a `cache_rebuild` finding when an idle gap outlived it)."
    ),
    new_code_cell(
        """\
baseline = findings.filter(pl.col("kind") == "tool_definitions")
hits = findings.filter(pl.col("kind") == "cache_hit")
assert baseline["tokens"].min() > 10_000 and hits["ratio"].is_between(0, 1).all()
hits.sort("ratio").select("session_id", "turn_index", "ratio", "tokens", "count", "cost_usd").head(5)"""
    ),
    new_markdown_cell(
        "## Across sessions\n\nWhat the report's *What fills the windows* section shows: the parts "
        "of each window at its fullest turn, summed by tool, and by project."
    ),
    new_code_cell(
        """\
from cc_analytics.report import windows_tables

tables = windows_tables(findings)
assert abs(tables["parts"]["share"].sum() - 1) < 1e-9
tables["parts"].head(6)"""
    ),
    new_code_cell('tables["projects"]'),
    new_markdown_cell(
        "## Open one\n\nA finding's uuid anchors a ContextWindow: the turns around it "
        "(`cc-analytics window FILE --uuid UUID --render` on the command line)."
    ),
    new_code_cell(
        """\
from cc_analytics.core import Budget, EventRef, capture_window

top = largest.row(0, named=True)
raw = Path(top["source_file"]).read_bytes()
window = capture_window(raw, EventRef(top["session_id"], top["uuid"]), before=1, after=0)
preview = window.render_preview(budget=Budget(turn_chars=300))
assert preview
print(preview)"""
    ),
    new_markdown_cell(
        "## In the explorer\n\nGiven the composition, the explorer shows what was in the window at the picked turn."
    ),
    new_code_cell(
        """\
from cc_analytics.views.widgets import SessionExplorer

explorer = SessionExplorer(frames.read_sessions(CLAUDE), frames.read_turns(CLAUDE), composition=parts)
shown = explorer.select(fullest).window_parts()
assert sum(row["tokens"] for row in shown) == shown[0]["occupancy"]
print(explorer.window_text())"""
    ),
]


def write(name: str, cells: list) -> None:
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{Path(name).stem[:2]}-{index:02d}"
    nbformat.validate(notebook)
    (HERE / name).write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")


def main() -> None:
    write("01-quickstart.ipynb", QUICKSTART)
    write("02-context-usage.ipynb", CONTEXT_USAGE)
    write("03-context-windows.ipynb", CONTEXT_WINDOWS)
    write("04-cost.ipynb", COST)
    write("05-what-filled-the-window.ipynb", WINDOWS)
    write("06-team.ipynb", TEAM)


if __name__ == "__main__":
    main()
