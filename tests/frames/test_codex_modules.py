"""How the Codex package's modules stand to one another: the lean scan (``scan.py``) needs no
Polars, its packed usage rows are the usage schema's numbers in the schema's order, and the
package's schemas, made on first use, are its own even where a shared schema has the same name."""

from __future__ import annotations

import subprocess
import sys

from cc_analytics.frames.codex import lean
from cc_analytics.frames.codex import scan as lean_scan
from cc_analytics.frames.codex import schema as S


def run(code: str) -> str:
    """``code`` in a fresh interpreter (nothing imported before it): its output."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.strip()


def test_the_scan_and_the_codex_values_import_no_polars() -> None:
    code = (
        "import sys\n"
        "import cc_analytics.frames.codex.scan, cc_analytics.frames.codex.values\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'polars'))"
    )
    assert run(code) == "[]"


def test_a_packed_usage_row_holds_the_usage_schemas_numbers_in_its_order() -> None:
    skipped = (S.FILE, S.TIMESTAMP, S.USAGE_MODEL)
    assert lean_scan.USAGE_NUMBERS == tuple(name for name in S.USAGE_SCHEMA if name not in skipped)
    assert lean_scan.USAGE_ROW.size == 8 * len(lean_scan.USAGE_NUMBERS)
    assert lean.USAGE_ROW is lean_scan.USAGE_ROW  # one layout, named in both


def test_the_codex_limits_schema_is_its_own_whichever_schema_module_was_made_first() -> None:
    # The shared module names a LIMITS_SCHEMA too (the rate-limits frame every format shares):
    # made before this package's schema module is imported, it must not come in with the star
    # import in place of the package's own (its rows have a file and a line).
    code = (
        "from cc_analytics.frames import schema as shared\n"
        "shared.LIMITS_SCHEMA\n"
        "from cc_analytics.frames.codex import schema as S\n"
        "print(S.LIMITS_SCHEMA.names()[:2], shared.LIMITS_SCHEMA.names()[:1])"
    )
    assert run(code) == "['file', 'line'] ['format']"
    assert S.LIMITS_SCHEMA.names()[:2] == [S.FILE, S.LINE]
    assert S.PROBLEMS_SCHEMA is S.PROBLEMS_SCHEMA  # the shared ones pass through, made once
