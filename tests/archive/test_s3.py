"""Sources and archives on object storage: a real S3 API (moto's server) on loopback, through fsspec."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cc_analytics.archive import update
from cc_analytics.archive.storage import ArchiveLockedError
from tests.archive.conftest import BUCKET, CREDENTIALS, Corpus, assert_same, make_corpus, tables
from tests.conftest import run_cli

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")


def _upload(fs: object, corpus: Corpus) -> str:
    for name, folder in (("claude", corpus.claude), ("chainless", corpus.chainless), ("gen", corpus.generated)):
        for path in sorted(folder.rglob("*.jsonl")):
            fs.pipe_file(f"{BUCKET}/src/{name}/{path.relative_to(folder)}", path.read_bytes())  # type: ignore[attr-defined]
    return f"s3://{BUCKET}/src"


def _as_local(frames: dict[str, pl.DataFrame], corpus: Corpus) -> dict[str, pl.DataFrame]:
    """Source URLs spelled as the local paths they were uploaded from."""
    prefixes = {
        f"s3://{BUCKET}/src/claude/": f"{corpus.claude}/",
        f"s3://{BUCKET}/src/chainless/": f"{corpus.chainless}/",
        f"s3://{BUCKET}/src/gen/": f"{corpus.generated}/",
    }
    out = {}
    for name, frame in frames.items():
        if "source_file" in frame.columns:
            column = pl.col("source_file")
            for url, path in prefixes.items():
                column = column.str.replace(url, path, literal=True)
            frame = frame.with_columns(column)
        order = (
            "format",
            "session_id",
            "source_file",
            "turn_index",
            "line",
            "agent_id",
            "time",
            "message_id",
            "request_id",
        )
        sort = [c for c in order if c in frame.columns]
        out[name] = frame.sort(sort, nulls_last=True)
    return out


def test_s3_sources_and_archive_round_trip(s3: object, endpoint: str, tmp_path: Path) -> None:
    small = make_corpus(tmp_path / "src", size_mb=0.3, sessions=3)
    source = _upload(s3, small)
    archive = f"s3://{BUCKET}/archive"
    first = update(source, archive)
    assert first.new == first.listed > 10
    local = tables(small.sources)
    got = tables(archive)  # frames.read_tables takes the archive's URL
    assert_same(_as_local(got, small), _as_local(local, small))
    assert s3.exists(f"{BUCKET}/archive/manifest.json")  # type: ignore[attr-defined]
    assert s3.glob(f"{BUCKET}/archive/sessions/format=*/month=*/*.parquet")  # type: ignore[attr-defined]
    assert not s3.exists(f"{BUCKET}/archive/.lock")  # type: ignore[attr-defined]

    env = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
    again = run_cli(["archive", source, "--to", archive], env=env)
    assert again.returncode == 0, again.stderr
    assert "nothing to write" in again.stderr.decode()

    # A session grows on S3: its rows are replaced, as a fresh archive has them.
    key = sorted(s3.glob(f"{BUCKET}/src/gen/*/*.jsonl"))[0]  # type: ignore[attr-defined]
    extra = s3.cat_file(key).splitlines(keepends=True)[0]  # type: ignore[attr-defined]
    s3.pipe_file(key, s3.cat_file(key) + extra)  # type: ignore[attr-defined]
    grown = update(source, archive)
    assert (grown.appended, grown.sessions) == (1, 1)
    update(source, f"s3://{BUCKET}/fresh")
    assert_same(tables(archive), tables(f"s3://{BUCKET}/fresh"))

    # S3 sources into a local archive, local sources into S3: the same tables.
    update(source, tmp_path / "local")
    assert_same(tables(tmp_path / "local"), tables(archive))
    update(small.sources, f"s3://{BUCKET}/from-local")
    assert_same(tables(f"s3://{BUCKET}/from-local"), tables(small.sources))

    # The writer's lock is an object created only if absent.
    s3.pipe_file(f"{BUCKET}/archive/.lock", b'{"host": "elsewhere", "pid": 1, "since": 0}')  # type: ignore[attr-defined]
    with pytest.raises(ArchiveLockedError, match="pid 1 on elsewhere"):
        update(source, archive)


def test_object_storage_failures_are_named_not_tracebacks(endpoint: str, small: Corpus) -> None:
    # A bucket that does not exist, then no credentials at all: what s3fs and botocore raise
    # (FileNotFoundError, NoCredentialsError) becomes one message naming the URL, exit 1.
    with_credentials = {**CREDENTIALS, "FSSPEC_S3_ENDPOINT_URL": endpoint}
    without = {"FSSPEC_S3_ENDPOINT_URL": endpoint, "HOME": str(small.root), "AWS_EC2_METADATA_DISABLED": "true"}
    cases = [
        (["archive", *small.sources, "--to", "s3://no-such-bucket/archive"], with_credentials,
         "the archive run on 's3://no-such-bucket/archive' stopped: object storage failed"),
        (["archive", *small.sources, "--to", f"s3://{BUCKET}/archive"], without,
         "NoCredentialsError: Unable to locate credentials"),
        (["sessions", f"s3://{BUCKET}/archive"], without, f"cannot reach 's3://{BUCKET}/archive': NoCredentialsError"),
    ]  # fmt: skip
    for args, env, expected in cases:
        result = run_cli(args, env=env)
        message = result.stderr.decode()
        assert result.returncode == 1, message
        assert expected in message and "FSSPEC_S3_ENDPOINT_URL" in message and "Traceback" not in message
