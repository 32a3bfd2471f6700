"""Bounded fuzzing of the core: the line decoder, capture, and the ContextWindow wire format.

Each target runs a few hundred mutated inputs here (a few seconds); ``run_long.py`` runs the
same targets for as long as you like. Only documented outcomes are allowed (see targets.py).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from cc_analytics.core import TranscriptWarning
from tests.fuzz.targets import SOURCE, TARGETS, check

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


def _raises(exc: BaseException):
    def run(_value):
        raise exc

    return run


def _warns(message: str, category: type[Warning] = TranscriptWarning):
    def run(_value):
        warnings.warn(message, category, stacklevel=1)

    return run


@pytest.mark.parametrize(
    ("run", "finding"),
    [
        (lambda _value: None, None),
        (_raises(ValueError("anchor u9 not found in session S")), None),
        (_warns(f"{SOURCE}:3: KeyError: \"'uuid'\"; line skipped"), None),
        (_raises(ValueError("something else")), "exception"),
        (_raises(RecursionError("maximum recursion depth exceeded")), "exception"),
        (_raises(AssertionError("from_json(to_json(w)) != w")), "exception"),
        (_warns("no file and line"), "warning"),
        (_warns(f"{SOURCE}:3: right form, wrong category", UserWarning), "warning"),
    ],
)
def test_check_tells_documented_outcomes_from_findings(run, finding):
    target = replace(TARGETS["core.capture"], run=run)
    result = check(target, None)
    assert (result and result.kind) == finding
