"""Write the OpenCode sample under ``data-samples/opencode`` (an OpenCode data folder).

Run: ``python data-samples/make_opencode.py`` (``make samples`` runs it). The database is
made by the OpenCode test fixtures' generator (``tests/fixtures/opencode/make_fixtures.py``)
from OpenCode's schema: three sessions of March 2026 (one with a sub-task session and a
compaction, one of another provider with reasoning), in the rollback-journal mode so that a
read leaves nothing beside it in the checkout.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "opencode"
FIXTURES = HERE.parent / "tests" / "fixtures" / "opencode" / "make_fixtures.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("opencode_fixtures", FIXTURES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = OUT / "opencode.db"
    target.unlink(missing_ok=True)
    module.write_database(target, module.sample_sessions(), wal=False)
    print(f"wrote {target.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
