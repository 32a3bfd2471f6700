"""benchmarks/corpus.py: the corpora it writes read back through ``cc-analytics sessions`` as generated."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their siblings by name
corpus = importlib.import_module("corpus")
corpus_session = importlib.import_module("corpus_session")

# Seed 2 at this size holds torn lines, compactions and subagents (checked below, so a
# generator change that loses them fails here instead of quietly testing less).
SIZE_MB, SESSIONS, SEED = 3, 10, 2
COMPARED = (
    "project",
    "project_dir",
    "subagent_files",
    "compactions",
    "requests",
    "input_tokens",
    "cache_creation_tokens",
    "cache_read_tokens",
    "output_tokens",
    "peak_occupancy",
    "last_occupancy",
)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("corpus")
    return out, corpus.generate(out, size_mb=SIZE_MB, sessions=SESSIONS, seed=SEED)


def test_the_corpus_has_what_the_tests_rely_on(generated: tuple[Path, dict]) -> None:
    out, manifest = generated
    facts = manifest["by_session"].values()
    assert manifest["malformed_lines"] > 0
    assert sum(f["compactions"] for f in facts) > 0
    assert manifest["subagent_files"] > 0
    mains = list((out / "projects").glob("*/*.jsonl"))
    agents = list((out / "projects").glob("*/*/subagents/agent-*.jsonl"))
    assert sorted(p.stem for p in mains) == sorted(manifest["by_session"])
    assert len(agents) == manifest["subagent_files"]
    assert manifest["bytes"] == sum(p.stat().st_size for p in mains + agents)
    assert abs(manifest["bytes"] / (SIZE_MB * 1e6) - 1) < 0.25


def test_lines_look_like_claude_code(generated: tuple[Path, dict]) -> None:
    out, _ = generated
    kinds: set[str] = set()
    models: set[str] = set()
    split_ids: dict[str, set[str]] = {}
    non_ascii = False
    for path in (out / "projects").rglob("*.jsonl"):
        raw = path.read_bytes()
        non_ascii = non_ascii or re.search(rb"[\xe4-\xe9][\x80-\xbf]{2}", raw) is not None
        for line in raw.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            kinds.add(obj["type"] + "/" + obj.get("subtype", ""))
            if obj["type"] == "assistant":
                models.add(obj["message"]["model"])
                assert obj["version"].startswith("2.1.")
                usage = obj["message"]["usage"]
                assert {"cache_creation_input_tokens", "cache_read_input_tokens"} <= usage.keys()
                split_ids.setdefault(obj["message"]["id"], set()).add(obj["requestId"] if "requestId" in obj else "")
            if obj.get("subtype") == "compact_boundary":
                assert obj["compactMetadata"]["preTokens"] > 0
    assert {"user/", "assistant/", "system/turn_duration", "system/compact_boundary", "summary/"} <= kinds
    assert {"file-history-snapshot/"} <= kinds
    assert models & {"claude-opus-4-5-20251101", "claude-sonnet-4-6"}
    assert all(len(ids) == 1 for ids in split_ids.values())  # one requestId per message id
    assert non_ascii


def test_the_loader_reads_it_as_generated(generated: tuple[Path, dict]) -> None:
    out, manifest = generated
    done = run_cli(["sessions", str(out / "projects"), "--json"])
    assert done.returncode == 0, done.stderr.decode()
    rows = {row["session_id"]: row for row in json.loads(done.stdout)}
    assert rows.keys() == manifest["by_session"].keys()
    for session_id, facts in manifest["by_session"].items():
        got = {key: rows[session_id][key] for key in COMPARED}
        assert got == {key: facts[key] for key in COMPARED}, session_id
    notes = done.stderr.decode().splitlines()
    lines = manifest["malformed_lines"]
    files = sum(1 for f in manifest["by_session"].values() if f["malformed_lines"])
    assert len(notes) == 1, notes  # nothing unexpected: only the torn and garbled lines we wrote
    assert notes[0].startswith(
        f"note: {lines} malformed line{'s' * (lines != 1)} skipped or read in part, in {files} file"
    )


def test_same_seed_same_bytes(tmp_path: Path, generated: tuple[Path, dict]) -> None:
    out, _ = generated
    again = tmp_path / "again"
    corpus.generate(again, size_mb=SIZE_MB, sessions=SESSIONS, seed=SEED, jobs=2)
    assert tree(again) == tree(out)
    other = tmp_path / "other"
    corpus.generate(other, size_mb=SIZE_MB, sessions=SESSIONS, seed=SEED + 1)
    assert tree(other)["corpus.json"] != tree(out)["corpus.json"]


def test_the_stdlib_encoder_writes_the_same_bytes(
    tmp_path: Path, generated: tuple[Path, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = generated
    monkeypatch.setattr(corpus_session, "dumps", corpus_session.json_dumps)
    corpus.generate(tmp_path / "stdlib", size_mb=SIZE_MB, sessions=SESSIONS, seed=SEED)
    assert tree(tmp_path / "stdlib") == tree(out)


def test_cached_reuses_a_matching_corpus_and_replaces_a_stale_one(tmp_path: Path) -> None:
    out = tmp_path / "c"
    first = corpus.cached(out, size_mb=0.3, sessions=2, seed=1)
    marker = out / "projects" / "marker"
    marker.write_text("kept")
    assert corpus.cached(out, size_mb=0.3, sessions=2, seed=1) == first
    assert marker.exists()
    second = corpus.cached(out, size_mb=0.3, sessions=3, seed=1)
    assert len(second["by_session"]) == 3
    assert not marker.exists()


def test_generate_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="is not empty"):
        corpus.generate(tmp_path, size_mb=0.3, sessions=2)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
