"""Where the repository and ../shared are (no pytest here: scripts under tests/ import it too).

``CC_SHARED_DIR`` overrides ../shared; tests that need it skip through ``conftest.shared_path``.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CC_SHARED_DIR", ROOT.parent / "shared"))
