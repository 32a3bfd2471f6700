"""A team's archives in one bucket (moto's S3 server): one archive per machine under a prefix, read as one."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import polars as pl
import pytest

from cc_analytics.archive import update
from cc_analytics.errors import InputError
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
    others = sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name not in ("claude", "chainless"))
    update(others, f"{team}/ben", machine="ben")  # every other format's samples
    update([SAMPLES / "chainless", copy], f"{team}/cara", machine="cara")
    return team, copy


def test_three_machines_in_one_bucket_read_as_one(s3: object, endpoint: str, tmp_path: Path) -> None:
    team, copy = _team(s3, tmp_path)
    got = tables(team, machine=True)
    # Exactly the union: what the transcripts of the three machines give, each request once.
    assert_same({k: v.drop("machine") for k, v in got.items()}, tables(SAMPLES))
    by_format = dict(got["sessions"].group_by("format").agg(pl.col("machine").unique().sort()).iter_rows())
    assert by_format.pop("claude-code") == ["anna"] and by_format.pop("chainlesschain") == ["cara"]
    assert by_format and all(machines == ["ben"] for machines in by_format.values())
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


def _texts(folder: Path) -> set[str]:
    """Every prose string of the transcripts under ``folder``: prompts, responses, tool inputs and
    outputs (string values of three words or more)."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            if len(value) >= 16 and value.count(" ") >= 2:
                found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in folder.rglob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                walk(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
    return found


def _bucket_text(fs: object, prefix: str) -> list[tuple[str, str]]:
    """Every object under ``prefix`` as text: its bytes, and a Parquet part's values too (its
    pages are compressed, so its bytes alone would hide what it holds)."""
    import io

    out = []
    for key in fs.find(prefix):  # type: ignore[attr-defined]
        data = fs.cat_file(key)  # type: ignore[attr-defined]
        out.append((key, data.decode("utf-8", "replace")))
        if key.endswith(".parquet"):
            frame = pl.read_parquet(io.BytesIO(data))
            values = frame.rows()
            out.append((key, repr(values) + "\n" + "\n".join(str(v) for row in values for v in row)))
    return out


def test_a_shared_archive_holds_no_text_and_no_path(s3: object, tmp_path: Path) -> None:
    team = f"s3://{BUCKET}/shared"
    source = SAMPLES
    first = update(source, f"{team}/anna", machine="anna", share=True)
    assert first.new > 20
    texts = _texts(source)
    assert len(texts) > 100 and any("checkout page shows prices" in text for text in texts)
    whole = tables(source)
    projects = set(whole["sessions"]["project"].drop_nulls()) | set(whole["sessions"]["project_dir"].drop_nulls())
    # the paths (a bare folder name such as "chainless" is also in the format's name, chainlesschain)
    paths = {str(SAMPLES), str(SAMPLES.resolve()), "data-samples/", *(p for p in projects if "/" in p or p[0] == "-")}
    assert "/home/dev/webshop" in projects and "-home-dev-webshop" in projects
    objects = _bucket_text(s3, f"{BUCKET}/shared")
    assert objects and not any("/raw/" in key for key, _ in objects)  # no raw copies
    for key, text in objects:
        leaked = [t for t in texts if t in text] + [p for p in paths if p in text]
        assert not leaked, (key, leaked[:3])
    # What stays: tokens, costs, models, tool names, sizes; pseudonyms stable across runs and machines.
    got = tables(f"{team}/anna", machine=True)
    keep = ["format", "session_id", "time", "model", "input_tokens", "output_tokens", "cache_read_tokens", "cost_usd"]
    assert got["requests"].select(keep).sort(keep).equals(whole["requests"].select(keep).sort(keep))
    assert got["turns"]["tool_names"].explode().drop_nulls().n_unique() > 3
    assert got["turns"]["prompt"].null_count() == got["turns"].height
    assert got["sessions"]["project"].drop_nulls().str.starts_with("project-").all()
    update(source, f"{team}/ben", machine="ben", share=True)
    both = tables(team, machine=True)["sessions"]
    assert both.height == whole["sessions"].height  # the same sessions: counted once
    assert set(both["project"].drop_nulls()) == set(got["sessions"]["project"].drop_nulls())
    again = update(source, f"{team}/anna")  # later runs share too: the archive says so
    assert not again.changed
    update(SAMPLES / "codex", tmp_path / "private")
    with pytest.raises(InputError, match="cannot become a shared one"):
        update(SAMPLES / "codex", tmp_path / "private", share=True)


def _planted() -> dict[str, str]:
    """Secrets of well-known shapes (made here, so that no scanner flags this file)."""
    body = "MIIEowIBAAKCAQEA" + "q7Bc9Xz" * 8
    return {
        "aws": "AKIA" + "QYLPMN5HZXQ2RT7W",
        "github": "ghp_" + "x2Tq9" * 7 + "Ab",
        "slack": "xoxb-" + "1234567890-" + "a1b2c3d4e5f6",
        "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "private key": "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----",
        "key body": body,
        "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    }


def test_masked_raw_copies_hold_none_of_the_planted_secrets(s3: object, tmp_path: Path) -> None:
    from cc_analytics.archive.read import open_archive
    from cc_analytics.archive.work import decompress

    folder = tmp_path / "src" / SHARED
    shutil.copytree(SAMPLES / "claude" / "projects" / SHARED, folder)
    secrets = _planted()
    target = folder / "bf264f08-ffcb-454f-98ad-e4caf6f91116.jsonl"
    lines = target.read_bytes().splitlines()
    event = orjson.loads(lines[2])
    planted = [secret for name, secret in secrets.items() if name != "key body"]  # the body: in the key
    event["message"]["content"] += " and the keys: " + " ".join(planted)
    lines[2] = orjson.dumps(event)
    tool = orjson.loads(lines[3])
    tool["message"]["content"][0]["input"]["pattern"] = secrets["aws"]  # in a tool's input too
    lines[3] = orjson.dumps(tool)
    target.write_bytes(b"\n".join(lines) + b"\n")
    archive = f"s3://{BUCKET}/masked"
    update(folder, archive, mask_secrets=True)
    opened = open_archive(archive)
    for record in opened.manifest.files.values():
        copy = s3.cat_file(f"{BUCKET}/masked/{record.copy}")  # type: ignore[attr-defined]
        text = decompress(copy, record.size)
        assert len(text) == record.size and all(orjson.loads(line) for line in text.splitlines())
        for name, secret in secrets.items():
            assert secret.encode() not in text, (name, record.copy)
    for key, text in _bucket_text(s3, f"{BUCKET}/masked"):
        assert not [name for name, secret in secrets.items() if secret in text], key
    masked = opened.raw_bytes(str(target))
    assert b"checkout page shows prices" in masked and b"****************" in masked  # the rest is kept
    prompt = tables(archive)["turns"].filter(pl.col("prompt").str.contains("checkout page"))["prompt"].item()
    assert "the keys: ****" in prompt and secrets["aws"] not in prompt
    # Unmasked copies are not mixed in: masking is the archive's for good.
    target.write_bytes(target.read_bytes() + lines[2] + b"\n")
    update(folder, archive)
    assert secrets["aws"].encode() not in open_archive(archive).raw_bytes(str(target))
    plain = tmp_path / "plain"
    update(folder, plain)
    with pytest.raises(InputError, match="written without --mask-secrets"):
        update(folder, plain, mask_secrets=True)


def test_context_finds_a_session_in_whichever_archive_of_the_bucket_holds_it(
    s3: object, endpoint: str, tmp_path: Path
) -> None:
    team, _copy = _team(s3, tmp_path)
    env = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
    got = tables(team, machine=True)["sessions"]
    chainless = got.filter(pl.col("machine") == "cara", pl.col("format") == "chainlesschain")["session_id"][0]
    webshop = got.filter(pl.col("project").str.contains("webshop"))["session_id"][0]  # in anna's and cara's
    for session, owner in ((chainless, "cara"), (webshop, "anna")):
        alone = run_cli(["context", session, "--archive", f"{team}/{owner}", "--json"], env=env)
        assert alone.returncode == 0 and orjson.loads(alone.stdout)["sessionId"] == session, alone.stderr
        for given in ([f"{team}/"], [f"{team}/anna", f"{team}/ben", f"{team}/cara"]):
            found = run_cli(["context", session, *(a for g in given for a in ("--archive", g)), "--json"], env=env)
            assert found.returncode == 0, found.stderr
            assert found.stdout == alone.stdout
            assert f"read from the archive of {owner} ({team}/{owner})" in found.stderr.decode()
    # Without an id: the latest session of every archive (each session once, as the readers count it).
    latest = got.sort("last_time", "session_id", descending=True, nulls_last=True).row(0, named=True)
    newest = run_cli(["context", "--archive", team, "--json"], env=env)
    owner_copy = run_cli(
        ["context", latest["session_id"], "--archive", f"{team}/{latest['machine']}", "--json"], env=env
    )
    assert newest.returncode == 0 and newest.stdout == owner_copy.stdout and owner_copy.stdout
    # None holds it: said, with the archives searched.
    missing = run_cli(["context", "no-such-session", "--archive", team], env=env)
    message = missing.stderr.decode()
    assert missing.returncode == 1 and 'No archive holds session "no-such-session"' in message
    assert all(f"{machine} ({team}/{machine})" in message for machine in ("anna", "ben", "cara"))
    assert "Traceback" not in message


def test_window_finds_a_transcript_in_whichever_archive_of_the_bucket_holds_it(
    s3: object, endpoint: str, tmp_path: Path
) -> None:
    team, copy = _team(s3, tmp_path)
    env = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
    for source in (  # anna's webshop transcript, and cara's copy of it (another path)
        next((SAMPLES / "claude" / "projects" / SHARED).glob("*.jsonl")),
        next(copy.glob("*.jsonl")),
    ):
        lines = [orjson.loads(line) for line in source.read_bytes().splitlines()]
        uuid = next(line["uuid"] for line in lines if line.get("type") == "assistant")
        expected = run_cli(["window", str(source), "--uuid", uuid])
        assert expected.returncode == 0 and expected.stdout, expected.stderr
        for given in ([f"{team}/"], [f"{team}/ben", f"{team}/cara", f"{team}/anna"]):
            found = run_cli(
                ["window", str(source), "--uuid", uuid, *(a for g in given for a in ("--archive", g))], env=env
            )
            assert found.returncode == 0, found.stderr
            assert found.stdout == expected.stdout
    missing = run_cli(["window", "/nowhere.jsonl", "--uuid", uuid, "--archive", f"{team}/"], env=env)
    message = missing.stderr.decode()
    assert missing.returncode == 1 and "'/nowhere.jsonl' is in none of the 3 archives" in message
    assert all(f"{machine} ({team}/{machine})" in message for machine in ("anna", "ben", "cara"))
    alone = run_cli(["window", "/nowhere.jsonl", "--uuid", uuid, "--archive", f"{team}/ben"], env=env)
    assert alone.returncode == 1 and "not in the archive" in alone.stderr.decode()
    assert "Traceback" not in message + alone.stderr.decode()


def test_a_request_copied_into_another_session_counts_once_from_the_first_archive(tmp_path: Path) -> None:
    # A session resumed on another machine: its history copied into a session of another id.
    original = SAMPLES / "claude" / "projects" / SHARED / "e3210487-5757-4980-836e-4d9b2e549b58.jsonl"
    resumed = "0d7c1f4e-1111-4222-8333-944455556666"
    laptop, devbox = tmp_path / "laptop" / SHARED, tmp_path / "devbox" / SHARED
    laptop.mkdir(parents=True)
    devbox.mkdir(parents=True)
    shutil.copy(original, laptop / original.name)
    (devbox / f"{resumed}.jsonl").write_bytes(original.read_bytes().replace(original.stem.encode(), resumed.encode()))
    update(laptop, tmp_path / "team" / "a-laptop", machine="laptop")
    update(devbox, tmp_path / "team" / "b-devbox", machine="devbox")
    alone = tables(laptop)["requests"]
    assert alone.drop_nulls(["message_id", "request_id"]).height > 0
    for order, first in (
        ([tmp_path / "team"], "laptop"),
        ([tmp_path / "team" / "b-devbox", tmp_path / "team" / "a-laptop"], "devbox"),
    ):
        got = tables([str(path) for path in order], machine=True)
        assert got["sessions"].height == 2  # two sessions, whose requests are the same ones
        requests = got["requests"]
        assert requests.height == alone.height and set(requests["machine"]) == {first}
        ids = requests.drop_nulls(["message_id", "request_id"]).select("format", "message_id", "request_id")
        assert (
            ids.is_duplicated().sum()
            == alone.drop_nulls(["message_id", "request_id"])
            .select("format", "message_id", "request_id")
            .is_duplicated()
            .sum()
        )


def test_only_rows_of_an_earlier_archive_under_all_three_ids_are_left_out() -> None:
    from cc_analytics.archive.read import _INDEX, SAME, _first_archive_of

    rows = [  # (format, message id, request id, archive)
        ("claude-code", "m1", "r1", 1),
        ("claude-code", "m1", "r1", 0),  # the same request, in an earlier archive: it gives it
        ("claude-code", "m1", "r2", 1),  # the same message id under another request id: another request
        ("claude-code", "m1", "r2", 1),  # repeated within one archive: kept (the loaders' frames have both)
        ("claude-code", "m2", None, 0),  # no request id: never the same as another row
        ("claude-code", "m2", None, 1),
        ("codex", "m1", "r1", 2),  # another format: another request
        ("gemini", "m3", "r3", 0),  # a format of which only one archive holds rows...
        ("gemini", "m3", "r3", 1),  # ...is not compared (here made up: both kept)
    ]
    frame = pl.LazyFrame(rows, schema=["format", "message_id", "request_id", _INDEX], orient="row")
    same, telling = SAME["requests"]
    kept = _first_archive_of(frame, same, telling, formats=["claude-code", "codex"]).collect()
    left_out = sorted(set(rows) - set(kept.rows()))
    assert left_out == [("claude-code", "m1", "r1", 1)]
    assert kept.height == len(rows) - 1


def test_a_filtered_read_of_several_archives_is_the_filtered_whole(tmp_path: Path) -> None:
    # A session in two archives (a synced folder, more of it on one) and a request copied into a
    # session of another id: what the cross-archive checks leave out must be left out of a
    # filtered read too (``where`` picks rows the whole read gives from another archive).
    from cc_analytics.archive.read import open_archives

    source = tmp_path / "synced" / SHARED
    shutil.copytree(SAMPLES / "claude" / "projects" / SHARED, source)
    original = source / "e3210487-5757-4980-836e-4d9b2e549b58.jsonl"
    resumed = "0d7c1f4e-1111-4222-8333-944455556666"
    update(source, tmp_path / "team" / "laptop", machine="laptop")
    lines = original.read_bytes().splitlines(keepends=True)
    original.write_bytes(b"".join(lines[: len(lines) // 2]))
    (source / f"{resumed}.jsonl").write_bytes(b"".join(lines).replace(original.stem.encode(), resumed.encode()))
    update([source, SAMPLES / "chainless"], tmp_path / "team" / "devbox", machine="devbox")
    team = open_archives([tmp_path / "team" / "devbox", tmp_path / "team" / "laptop"])
    whole = {table: team.scan(table).collect() for table in ("sessions", "turns", "problems", "requests")}
    ids = whole["requests"].drop_nulls(["message_id", "request_id"])
    copied = ids.filter(pl.col("session_id") == resumed)["message_id"][0]
    assert whole["requests"].filter(pl.col("message_id") == copied).height == 1  # the copy left out
    everywhere = [pl.col("machine") == "laptop", pl.col("machine") == "devbox", pl.lit(False), pl.lit(True)]
    asked = {
        "sessions": [*everywhere, pl.col("session_id") == original.stem],
        "turns": [*everywhere, pl.col("session_id") == original.stem],
        "problems": [*everywhere, pl.col("line") > 3],
        "requests": [
            *everywhere,
            pl.col("cost_usd").is_null(),
            pl.col("message_id") == copied,
            pl.col("session_id") == resumed,
            pl.col("request_id").is_null(),
        ],
    }
    from polars.testing import assert_frame_equal

    for table, wheres in asked.items():
        for where in wheres:
            got = team.scan(table, where=where).collect()
            assert_frame_equal(got, whole[table].filter(where), check_exact=True)
    # The laptop gives the session it has more of, but none of its requests: the devbox's copy
    # of them (in the resumed session) comes first; a filter on the laptop's rows meets them all.
    assert whole["sessions"].filter(pl.col("machine") == "laptop")["session_id"].to_list() == [original.stem]
    assert whole["requests"].filter(pl.col("machine") == "laptop").height == 0
    assert open_archives([tmp_path / "team" / "laptop"]).scan("requests").collect().height > 0
