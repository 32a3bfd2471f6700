"""Every golden record of the conformance corpus, byte for byte (spec-exact windows).

Goldens come from ``../shared/data/claude`` (skipped when absent) and from our own
``tests/golden/claude`` (always present). Per record: the window JSON, its preview, the
hydrated render, the not-found and parse errors (strict mode), from_json/to_json round
trips, and that lenient capture of malformed files never crashes.
"""

from __future__ import annotations

import pytest

from tests.conformance.goldens import (
    OWN_CLAUDE,
    SHARED_CLAUDE,
    check_batch_golden,
    check_golden,
    iter_all,
)

SHARED_GOLDENS = list(iter_all(SHARED_CLAUDE))
OWN_GOLDENS = list(iter_all(OWN_CLAUDE))


def _run(kind, golden):
    count, mismatches = (check_golden if kind == "window" else check_batch_golden)(golden)
    assert count > 0, f"{golden.golden} holds no records"
    assert not mismatches, "\n".join(str(m) for m in mismatches[:5])


@pytest.mark.skipif(
    not SHARED_GOLDENS,
    reason=f"shared conformance corpus not found at {SHARED_CLAUDE} (needs ../shared next to the repo)",
)
@pytest.mark.parametrize(("kind", "golden"), SHARED_GOLDENS, ids=[g.golden for _, g in SHARED_GOLDENS])
def test_shared_golden(kind, golden):
    _run(kind, golden)


@pytest.mark.parametrize(("kind", "golden"), OWN_GOLDENS, ids=[g.golden for _, g in OWN_GOLDENS])
def test_own_golden(kind, golden):
    _run(kind, golden)


def test_own_goldens_exist():
    assert len(OWN_GOLDENS) >= 5, f"our own goldens are missing from {OWN_CLAUDE}"
