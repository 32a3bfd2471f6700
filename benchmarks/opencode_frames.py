"""Benchmark: ``cc-analytics sessions`` and ``usage`` on a generated OpenCode database, against ccusage.

Imports: the standard library, ``measure`` beside it and the OpenCode fixtures' generator
``tests/fixtures/opencode/make_fixtures.py`` (every measured task is a fresh process).

    python benchmarks/opencode_frames.py --smoke                 # a ~2 MB database, one round
    python benchmarks/opencode_frames.py --make 100 --make 1000  # generate under $TMPDIR, measure
    python benchmarks/opencode_frames.py --corpus mine=$HOME/.local/share --rounds 5

A corpus is a folder holding ``opencode/opencode.db`` (what ``$XDG_DATA_HOME`` points at):
``--make SIZE_MB`` writes sessions of random usage (``make_fixtures.corpus_sessions``, seed 1)
until the database holds that many megabytes, kept under ``--tmp`` and reused. ccusage
(``opencode session --json --offline``, ``XDG_DATA_HOME`` set to the corpus) runs beside us
when found. The table shows medians of wall time, CPU seconds, peak RSS of the largest process
and of the whole tree, and the ratios to ccusage; on a shared machine compare CPU seconds.
"""

from __future__ import annotations

import sys
from pathlib import Path

from measure import Plan, against_ccusage, session_plan

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "opencode"))
import make_fixtures as F  # noqa: E402

SESSIONS_PER_ROUND = 200


def tasks(corpus: Path, scratch: Path, workers: str | None, ccusage: str | None) -> Plan:
    """The measured commands on one corpus, each with its environment (ccusage's own HOME, so
    that it finds no other agent's data of this machine)."""
    parquet = scratch / f"{corpus.name}-sessions.parquet"
    env = {"XDG_DATA_HOME": str(corpus), "HOME": str(scratch), "TZ": "UTC"}
    return session_plan("opencode", corpus / "opencode", parquet, workers=workers, ccusage=ccusage, env=env)


def generate(corpus: Path, size_mb: int, seed: int = 1) -> Path:
    """``corpus/opencode/opencode.db`` grown by rounds of generated sessions to ``size_mb`` MB."""
    import sqlite3

    database = corpus / "opencode" / "opencode.db"
    database.unlink(missing_ok=True)
    F.write_database(database, [])
    connection = sqlite3.connect(database)
    round_index = 0
    while database.stat().st_size < size_mb * 1_000_000:
        sessions = F.corpus_sessions(SESSIONS_PER_ROUND, seed=seed + round_index, turns=8)
        for session in sessions:
            session["id"] = f"{session['id']}_{round_index:04d}"
            if session["parent"]:
                session["parent"] = f"{session['parent']}_{round_index:04d}"
        session_rows, message_rows, part_rows = F.rows(sessions)
        connection.executemany("INSERT INTO session VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", session_rows)
        connection.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", message_rows)
        connection.executemany("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", part_rows)
        connection.commit()
        round_index += 1
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return corpus


def make_corpus(size_mb: int, parent: Path) -> Path:
    target = parent / f"cc-analytics-opencode-corpus-{size_mb}mb"
    database = target / "opencode" / "opencode.db"
    if not (database.is_file() and database.stat().st_size >= size_mb * 1_000_000):
        generate(target, size_mb)
    return target


def database_bytes(corpus: Path) -> int:
    return sum(path.stat().st_size for path in (corpus / "opencode").glob("opencode*.db"))


def smoke_corpus(folder: Path) -> Path:
    return generate(folder, 2)


def main(argv: list[str] | None = None) -> int:
    description = __doc__.splitlines()[0]
    return against_ccusage(
        description, "opencode", argv, make=make_corpus, smoke=smoke_corpus, plan=tasks, size=database_bytes
    )


if __name__ == "__main__":
    raise SystemExit(main())
