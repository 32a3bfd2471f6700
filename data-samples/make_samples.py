"""Regenerate every sample under ``data-samples/``: ChainlessChain, Claude Code, Codex, Gemini CLI and Qwen Code sessions.

Run: ``python data-samples/make_samples.py`` (``make samples``). Each generator is a
deterministic script beside this one; a generator that is not there yet is skipped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATORS = ("make_chainless.py", "make_claude.py", "make_codex.py", "make_copilot.py", "make_gemini.py", "make_opencode.py", "make_qwen.py")


def main() -> int:
    for name in GENERATORS:
        script = HERE / name
        if not script.is_file():
            print(f"skipping {name}: not present", file=sys.stderr)
            continue
        result = subprocess.run([sys.executable, str(script)], check=False)
        if result.returncode:
            print(f"{name} failed with exit code {result.returncode}", file=sys.stderr)
            return result.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
