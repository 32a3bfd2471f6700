"""The public verbs of ``cc_analytics.frames.claude``: one signature, lazy names, schemas."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import cc_analytics.frames.claude as claude
from cc_analytics.frames.claude import schema as S
from tests.conftest import ROOT

VERBS = {
    "events": S.EVENTS_SCHEMA,
    "turns": S.TURNS_SCHEMA,
    "sessions": S.SESSIONS_SCHEMA,
    "problems": S.PROBLEMS_SCHEMA,
}
SAMPLES = ROOT / "data-samples" / "claude"


@pytest.mark.parametrize("noun", VERBS)
def test_scan_and_read_share_one_signature(noun: str) -> None:
    for verb in ("scan", "read"):
        signature = inspect.signature(getattr(claude, f"{verb}_{noun}"))
        assert list(signature.parameters) == ["source", "workers", "on_progress"]
        source, workers, on_progress = signature.parameters.values()
        assert source.default is None and source.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        assert (workers.default, workers.kind) == (1, inspect.Parameter.KEYWORD_ONLY)
        assert (on_progress.default, on_progress.kind) == (None, inspect.Parameter.KEYWORD_ONLY)


@pytest.mark.parametrize("noun", VERBS)
def test_verbs_give_their_schema_and_report_progress(noun: str) -> None:
    seen: list[tuple[int, int]] = []
    lazy = getattr(claude, f"scan_{noun}")(SAMPLES, on_progress=lambda done, total: seen.append((done, total)))
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == VERBS[noun]
    eager = getattr(claude, f"read_{noun}")(SAMPLES)
    assert eager.schema == VERBS[noun]
    assert lazy.collect().sort(pl.all()).equals(eager.sort(pl.all()))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] > 0


@pytest.mark.parametrize("source", ["str", "path", "glob", "list", "files"])
def test_every_kind_of_source(source: str) -> None:
    files = claude.discover([SAMPLES])
    given = {
        "str": str(SAMPLES),
        "path": SAMPLES,
        "glob": f"{SAMPLES}/**/*.jsonl",
        "list": [str(f.path) for f in files],
        "files": files,
    }[source]
    assert claude.read_sessions(given).equals(claude.read_sessions(SAMPLES))


def test_default_source_is_the_claude_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(SAMPLES))
    assert claude.read_sessions().equals(claude.read_sessions(SAMPLES))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    assert claude.read_sessions().is_empty()


def test_names_resolve_lazily() -> None:
    for name in claude.__all__:
        assert getattr(claude, name) is not None
    with pytest.raises(AttributeError):
        _ = claude.not_a_verb
    probe = "import sys, cc_analytics.frames.claude\nprint('polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
