"""Sessions, turns and problems of Claude Code transcripts from one decode per batch.

Imports: polars, the standard library, ``frames.engine`` and the other modules of
``frames.claude``. What the report needs: each batch is read once with the measured profile
(:data:`~cc_analytics.frames.claude.decode.TURNS`), prepared once, then summarised per
session and lifted per turn, so a report costs about one ``sessions`` decode.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import FINDINGS, SESSIONS, TURNS, Profile, Walked, frames_of, walk_files
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.claude.events import Source, resolve
from cc_analytics.frames.claude.findings import findings_of_decoded
from cc_analytics.frames.claude.requests import priced_requests
from cc_analytics.frames.claude.sessions import prepared, summarize
from cc_analytics.frames.claude.turns import lift_turns
from cc_analytics.frames.engine import Progress, run_batches
from cc_analytics.frames.tables import Tables


def tables_batch(
    files: list[TranscriptFile],
    *,
    turns: bool = True,
    contents: Sequence[bytes] | None = None,
    findings: bool = False,
) -> Tables:
    """Sessions, turns (when ``turns``), problems and, when ``findings``, the findings
    (``findings.scan_findings``) of one batch, decoded once.

    ``contents``: the files' bytes, when read elsewhere (see :func:`decode_files`).

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.claude.discovery import discover
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n[1]\\n')
        >>> tables = tables_batch(discover([folder]))
        >>> tables.sessions.height, tables.turns["event_uuids"].to_list(), tables.problems["line"].to_list()
        (1, [['u1']], [2])
    """
    walked = walk_files(files, _profile(turns=turns, findings=findings), contents=contents)
    return tables_of(walked, turns=turns, findings=findings)


def _profile(*, turns: bool, findings: bool) -> Profile:
    """What the tables' walk keeps: the findings' marks (which hold the turns' columns too), else
    the turns' columns, else the sessions'."""
    return FINDINGS if findings else TURNS if turns else SESSIONS


def tables_of(walked: Walked, *, turns: bool = True, findings: bool = False) -> Tables:
    """:func:`tables_batch` from a batch's walk (the half a worker process hands back)."""
    decoded = frames_of(walked)
    problems = decoded.problems
    events, blocks = prepared(decoded, prompts=turns)
    del decoded  # its events' texts can go before the summary is made (the turns keep them)
    requests = priced_requests(events, walked.files)
    sessions = summarize(events, blocks, walked.files, requests)
    if turns:
        lifted = lift_turns(events.lazy(), blocks.lazy(), requests.lazy()).collect()
    else:
        lifted = pl.DataFrame(schema=S.TURNS_SCHEMA)
    found = findings_of_decoded(events, blocks, walked.files) if findings else None
    return Tables(sessions, lifted, problems, requests.select(list(S.REQUESTS_SCHEMA)), found)


def iter_tables(
    source: Source = None,
    *,
    turns: bool = True,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    findings: bool = False,
) -> Iterator[Tables]:
    """:class:`Tables` of ``source`` batch by batch (a session never spans two batches).

    ``source`` is a transcript file, a folder, a glob, a list of these (or of
    ``TranscriptFile``), or None for the Claude Code projects folders. ``turns=False`` skips
    the turns (what the ``sessions`` command needs), ``findings=True`` adds the findings of the
    same decode; ``workers`` and ``on_progress`` are the batch engine's
    (``frames.engine.run_batches``).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n')
        >>> [(t.sessions.height, t.turns.height) for t in iter_tables(folder)]
        [(1, 1)]
        >>> [(t.sessions.height, t.turns.height) for t in iter_tables(folder, turns=False)]
        [(1, 0)]
    """
    files = resolve(source)
    profile = _profile(turns=turns, findings=findings)
    # Each batch is made whole where it is taken (a worker process hands back its tables): with
    # the C skimmer, walking the lines costs less than building the tables, so a process that
    # built every batch's tables would keep the workers waiting.
    yield from run_batches(
        partial(tables_batch, turns=turns, findings=findings),
        files,
        workers=workers,
        on_progress=on_progress,
        batch_bytes=profile.batch_bytes,
    )
