"""Every case of ../shared/data/chainless/cases.json through the installed console script, byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import SHARED, run_cli, shared_path

CASES_FILE = SHARED / "data" / "chainless" / "cases.json"
# Without ../shared, one placeholder case whose runs skip with shared_path's reason.
CASES = json.loads(CASES_FILE.read_text()) if CASES_FILE.exists() else [{"case": "shared-cases-absent"}]
RUNS = [("json", "jsonStream", "0"), ("txt", "textStream", "0"), ("ansi", "textStream", "1")]


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
@pytest.mark.parametrize(("ext", "stream_key", "force_color"), RUNS, ids=[r[0] for r in RUNS])
def test_case_bytes(case: dict, ext: str, stream_key: str, force_color: str, tmp_path: Path) -> None:
    shared_path("data", "chainless", "cases.json")
    data = shared_path("data", "chainless")
    store = tmp_path / ".chainlesschain" / "sessions"
    store.mkdir(parents=True, mode=0o700)
    for name in case["sessionFiles"]:
        shutil.copy(data / "sessions" / name, store / name)
    before = sorted(p.name for p in store.iterdir())
    args = case["args"] + (["--json"] if ext == "json" else [])
    result = run_cli(args, env={"HOME": str(tmp_path), "FORCE_COLOR": force_color})
    expected = (data / "expected" / f"{case['case']}.{ext}").read_bytes()
    wanted, other = (result.stdout, result.stderr) if case[stream_key] == "stdout" else (result.stderr, result.stdout)
    assert wanted == expected
    assert other == b""
    assert result.returncode == case["exitCode"]
    assert sorted(p.name for p in store.iterdir()) == before, "the store must never be written"


def test_cases_present() -> None:
    shared_path("data", "chainless", "cases.json")
    assert len(CASES) >= 51
