"""Bounded fuzzing of the core: the line decoder, capture, and the ContextWindow wire format.

Each target runs a few hundred mutated inputs here (a few seconds); ``run_long.py`` runs the
same targets for as long as you like. Only documented outcomes are allowed (see targets.py).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz.targets import TARGETS, check

EXAMPLES = {"core.decode_line": 300, "core.capture": 150, "core.from_json": 300}


def test_every_core_target_is_fuzzed_here():
    assert sorted(EXAMPLES) == sorted(name for name, t in TARGETS.items() if t.group == "core")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_only_documented_outcomes(name):
    target = TARGETS[name]

    @settings(
        max_examples=EXAMPLES[name],
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(target.inputs)
    def fuzz(value):
        finding = check(target, value)
        assert finding is None, f"{finding.kind} at {finding.where}: {finding.summary}"

    fuzz()
