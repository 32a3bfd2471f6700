"""Write the OpenAI Codex CLI samples under ``data-samples/codex`` (a ``$CODEX_HOME`` layout).

Run: ``python data-samples/make_codex.py`` (``make samples`` runs it). The rollouts are the
hand-made ones of the Codex test fixtures (``tests/fixtures/codex/make_fixtures.py``: a main
session with a compaction and rate limits, its subagent, a fork, a fork whose parent is gone,
usage without ``last_token_usage``, cache writes, an archived session), without the fixtures'
edge cases for pricing, hostile lines and pre-envelope rollouts: samples read cleanly. Every
date is moved by :data:`SHIFT` (timestamps, dates, file and folder names, reset times), so that
the Codex samples fall in the same month as the other formats' (March 2026).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "codex"
FIXTURES = HERE.parent / "tests" / "fixtures" / "codex" / "make_fixtures.py"
LEFT_OUT = ("07.jsonl", "08.jsonl", "0a.jsonl")  # unpriced models, hostile lines, no usage
SHIFT = timedelta(days=141)  # 2025-10-20 (the first sample) -> 2026-03-10
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:\.\d+)?Z?")
DAY = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\dT])")
FOLDER = re.compile(r"\d{4}/\d{2}/\d{2}")
EPOCH = re.compile(r'("resets_at":\s*)(\d{9,10})')


def shifted(text: str) -> str:
    """``text`` with every timestamp, date, date folder and reset time moved by :data:`SHIFT`."""

    def stamp(match: re.Match[str]) -> str:
        value = match.group(0)
        dashed = value[13] == "-"  # a file name's time: HH-MM-SS
        parsed = datetime.fromisoformat(
            (value[:13] + ":" + value[14:16] + ":" + value[17:]) if dashed else value.replace("Z", "+00:00")
        )
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        moved = parsed + SHIFT
        if dashed:
            return moved.strftime("%Y-%m-%dT%H-%M-%S") + value[19:]
        return moved.isoformat(timespec="milliseconds" if "." in value else "seconds").replace("+00:00", "Z")

    text = STAMP.sub(stamp, text)
    text = DAY.sub(lambda m: (datetime.fromisoformat(m.group(0)) + SHIFT).strftime("%Y-%m-%d"), text)
    text = FOLDER.sub(lambda m: (datetime.strptime(m.group(0), "%Y/%m/%d") + SHIFT).strftime("%Y/%m/%d"), text)
    return EPOCH.sub(lambda m: m.group(1) + str(int(m.group(2)) + int(SHIFT.total_seconds())), text)


def main() -> int:
    spec = importlib.util.spec_from_file_location("codex_fixtures", FIXTURES)
    if spec is None or spec.loader is None:
        print(f"cannot load {FIXTURES}", file=sys.stderr)
        return 1
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        fixtures.main(home, history=False)
        shutil.rmtree(OUT, ignore_errors=True)
        for path in sorted(home.rglob("rollout-*.jsonl")):
            if path.name.endswith(LEFT_OUT):
                continue
            target = OUT / shifted(path.relative_to(home).as_posix())
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(shifted(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {sum(1 for _ in OUT.rglob('*.jsonl'))} Codex rollouts under {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
