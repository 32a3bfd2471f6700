"""Regenerate tests/golden/chainless/ from data-samples/chainless/ with OUR implementation.

Run only on purpose, and review the diff in the same commit: these files pin behaviour that
../shared's conformance cases verified, so the suite keeps byte coverage without ../shared.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data-samples" / "chainless"
OUT = Path(__file__).resolve().parent / "chainless"
SCRIPT = Path(sys.executable).with_name("cc-analytics")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for path in sorted(SAMPLES.glob("*.jsonl")):
        sid = path.stem
        for ext, extra, colour in (("json", ["--json"], "0"), ("txt", [], "0"), ("ansi", [], "1")):
            env = {"PATH": os.environ["PATH"], "LANG": "C", "LC_ALL": "C", "TZ": "UTC", "FORCE_COLOR": colour}
            cmd = [str(SCRIPT), "context", sid, "--sessions-dir", str(SAMPLES), *extra]
            result = subprocess.run(cmd, env=env, capture_output=True, check=True)
            (OUT / f"{sid}.{ext}").write_bytes(result.stdout)
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")


if __name__ == "__main__":
    main()
