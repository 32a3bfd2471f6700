"""Bounded fuzzing of the frames loaders of the formats, their C extensions and discovery.

Each target decodes a few small batches of mutated transcripts (or generated folder trees)
here, a few seconds each; ``run_long.py`` runs the same targets for as long as you like. Only
documented outcomes are allowed (see targets.py): what cannot be read is a problems row.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.targets import TARGETS, check

EXAMPLES = {
    "frames.claude": 12,
    "frames.claude.skim": 40,
    "frames.claude.columns": 40,
    "frames.codex.scan": 40,
    "frames.copilot.events": 40,
    "frames.copilot.otel": 40,
    "frames.chainless": 12,
    "frames.discovery": 12,
}
MAX_BATCH = 8


def test_every_frames_target_is_fuzzed_here():
    assert sorted(EXAMPLES) == sorted(name for name, t in TARGETS.items() if t.group == "frames")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_only_documented_outcomes(name):
    target = TARGETS[name]
    assert target.batch > 1, "the frames targets decode a folder of inputs at once"
    if (reason := target.unavailable()) is not None:
        pytest.skip(reason)

    @settings(
        max_examples=EXAMPLES[name],
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(st.lists(target.inputs, min_size=1, max_size=MAX_BATCH))
    def fuzz(batch):
        finding = check(target, batch)
        assert finding is None, f"{finding.kind} at {finding.where}: {finding.summary}"

    fuzz()


@pytest.mark.parametrize("name", sorted(name for name in EXAMPLES if TARGETS[name].seeds()))
def test_the_seeds(name):
    # The fuzz corpus: each seed transcript whole, and lines nested thousands deep at a file's head.
    target = TARGETS[name]
    if (reason := target.unavailable()) is not None:
        pytest.skip(reason)
    seeds = list(target.seeds())
    for start in range(0, len(seeds), target.batch):
        finding = check(target, seeds[start : start + target.batch])
        assert finding is None, f"{finding.kind} at {finding.where}: {finding.summary}"
