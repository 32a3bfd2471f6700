"""Our own sample sessions (data-samples/chainless) against their pinned outputs (tests/golden/chainless).

These keep byte-level coverage of the gauge, colours and JSON when ../shared is absent. The pinned
files are written by tests/golden/regen_chainless.py; the numbers below were checked by hand
against the spec's rules, so a regeneration that changes them fails here too.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, run_cli

SAMPLES = ROOT / "data-samples" / "chainless"
GOLDEN = ROOT / "tests" / "golden" / "chainless"
IDS = sorted(p.stem for p in SAMPLES.glob("*.jsonl"))


@pytest.mark.parametrize("sid", IDS)
@pytest.mark.parametrize(("ext", "extra", "colour"), [("json", ["--json"], "0"), ("txt", [], "0"), ("ansi", [], "1")])
def test_sample_bytes(sid: str, ext: str, extra: list[str], colour: str) -> None:
    result = run_cli(["context", sid, "--sessions-dir", str(SAMPLES), *extra], env={"FORCE_COLOR": colour})
    assert result.returncode == 0 and result.stderr == b""
    assert result.stdout == (GOLDEN / f"{sid}.{ext}").read_bytes()


def report(sid: str) -> dict:
    return json.loads((GOLDEN / f"{sid}.json").read_text())


def test_hand_checked_numbers() -> None:
    assert len(IDS) >= 7
    compacted = report("sample-anthropic-compaction")
    # snapshot: 2 system + assistant(null content, 3 tool calls) + tool, then 2 later messages
    assert compacted["messageCount"] == 6
    assert compacted["counts"] == {"system": 2, "user": 1, "assistant": 2, "tool": 1}
    assert compacted["breakdown"]["assistant"] >= 1 and compacted["breakdown"]["toolCalls"] > 0
    recorded = report("sample-openai-recorded-window")
    assert recorded["contextWindow"] == 100000  # last main record; the later subagent record is ignored
    overflow = report("sample-llama3-overflow")
    assert overflow["overflows"] is True and overflow["remainingTokens"] == 0 and overflow["contextWindow"] == 8192
    ws = report("sample-gemini-ws-turns")
    assert ws["counts"] == {"system": 0, "user": 2, "assistant": 2, "tool": 0}
    assert ws["breakdown"]["assistant"] == 13 + 1  # 52 units -> 13 tokens; null content -> 1
    assert 0.7 < report("sample-deepseek-yellow")["usedFraction"] <= 0.9
