"""The chat-log family's batch functions, the verbs made for a format's
:class:`~cc_analytics.frames.chatlog.messages.Spec` (``frames.plugin.VERBS`` and the batch
functions) and the ``context`` report.

Imports: polars (inside functions), the standard library, the shared ``frames`` modules
(``engine``, ``tables``, ``context_report``, ``schema``, ``sources``) and
``frames.chatlog.messages``, ``frames.chatlog.builders``.

A format whose files become :class:`~cc_analytics.frames.chatlog.messages.Message` rows (its
``Spec.parse``) gets every batch from here; one whose files do not gives its own
:class:`Batches` (``Spec.batches``), and gets the same verbs and report made of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from cc_analytics.frames import schema as S
from cc_analytics.frames.chatlog.builders import (
    decode,
    events_frame,
    events_schema,
    in_context,
    messages_with_session,
    priced_requests,
    summarize,
    turn_rows,
)
from cc_analytics.frames.chatlog.messages import ASSISTANT, SYSTEM, TOOL, USER, Spec
from cc_analytics.frames.chatlog.store import BATCH_BYTES
from cc_analytics.frames.engine import BATCH_ENGINE

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.engine import Progress
    from cc_analytics.frames.sources import Source, TranscriptFile
    from cc_analytics.frames.tables import Tables


def tables_batch(
    spec: Spec, files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None
) -> Tables:
    """Sessions, turns (empty unless ``turns``), problems and priced requests of one batch from
    one decode (run in a worker process); ``contents``: the files' bytes, when read elsewhere."""
    from cc_analytics.frames.tables import Tables

    decoded = decode(spec, files, contents)
    messages = messages_with_session(decoded).collect(engine=BATCH_ENGINE).lazy()
    requests = priced_requests(spec, decoded, messages)
    turn_frame = turn_rows(spec, decoded, messages, requests).collect(engine=BATCH_ENGINE)
    sessions = summarize(spec, decoded, messages, turn_frame.lazy(), requests)
    return Tables(
        sessions,
        turn_frame if turns else turn_frame.clear(),
        decoded.problems,
        requests.select(list(S.REQUESTS_SCHEMA)),
    )


def requests_batch(spec: Spec, files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(priced requests, problems) of one batch (a lean parse: ``messages.LEAN``)."""
    decoded = decode(spec, files, lean=True)
    requests = priced_requests(spec, decoded, messages_with_session(decoded))
    return requests.select(list(S.REQUESTS_SCHEMA)), decoded.problems


def events_batch(spec: Spec, files: list[TranscriptFile]) -> pl.DataFrame:
    return events_frame(spec, decode(spec, files))


def problems_batch(spec: Spec, files: list[TranscriptFile]) -> pl.DataFrame:
    return decode(spec, files).problems


def context_messages(spec: Spec, files: list[TranscriptFile], contents: Sequence[bytes] | None = None) -> pl.LazyFrame:
    """The messages of a batch with their session (what the ``context`` report reads)."""
    return messages_with_session(decode(spec, files, contents))


# ------------------------------------------------------------------ the verbs


@dataclass(frozen=True, slots=True)
class Batches:
    """A format's batch functions, each of a list of files (module-level functions, or partials
    of them: batches are pickled); the verbs and the ``context`` report are made of them.

    Examples:
        >>> batches = batches_of(Spec("toy", "Toy", parse=lambda shown, data: Chat(), resolve=lambda s, planned=False: []))
        >>> batches.problems([]).height, batches.batch_bytes == BATCH_BYTES
        (0, True)
    """

    tables: Callable[..., Tables]  # (files, *, turns=True, contents=None): one decode, every table
    requests: Callable[[list[TranscriptFile]], tuple[pl.DataFrame, pl.DataFrame]]  # (priced requests, problems)
    events: Callable[[list[TranscriptFile]], pl.DataFrame]
    problems: Callable[[list[TranscriptFile]], pl.DataFrame]
    messages: Callable[..., pl.LazyFrame]  # (files, contents=None): messages with their session
    events_schema: Callable[[], pl.Schema]
    batch_bytes: int = BATCH_BYTES
    # The requests-only read's (``usage``): it keeps no messages, so a format whose lean read
    # holds little takes bigger batches (fewer of Polars' fixed per-batch queries); None: ``batch_bytes``.
    requests_bytes: int | None = None
    # The sessions' read (``tables`` without turns): a format whose sessions need no message rows
    # (a tally of each file) takes bigger batches too; None: ``batch_bytes``.
    sessions_bytes: int | None = None


def batches_of(spec: Spec) -> Batches:
    """The format's own :class:`Batches` (``spec.batches``), else the family's, of its parser."""
    if spec.batches is not None:
        return spec.batches
    return Batches(
        partial(tables_batch, spec),
        partial(requests_batch, spec),
        partial(events_batch, spec),
        partial(problems_batch, spec),
        partial(context_messages, spec),
        events_schema,
    )


def sessions_batch(tables: Callable[..., Tables], files: list[TranscriptFile]) -> pl.DataFrame:
    return tables(files, turns=False).sessions


def turns_batch(tables: Callable[..., Tables], files: list[TranscriptFile]) -> pl.DataFrame:
    return tables(files).turns


def verbs(spec: Spec) -> dict[str, Any]:
    """The verbs module's functions for a format (``frames.plugin.VERBS``, the batch functions
    and ``context_report``), each with the front's signature.

    Examples:
        >>> from cc_analytics.frames.plugin import BATCH_VERBS, VERBS
        >>> made = verbs(Spec("toy", "Toy", parse=lambda shown, data: Chat(), resolve=lambda source, planned=False: []))
        >>> sorted({*VERBS, *BATCH_VERBS, "context_report"}) == sorted(made)
        True
        >>> made["read_sessions"]([]).height, made["scan_requests"].__doc__
        (0, 'Lazily, the requests frame of Toy chats in ``source`` (None: the default stores).')
    """

    from cc_analytics.frames.engine import run_batches, scan_batches

    batches = batches_of(spec)
    made: dict[str, Any] = {}

    requests_bytes = batches.requests_bytes or batches.batch_bytes
    sessions_bytes = batches.sessions_bytes or batches.batch_bytes

    def lazy(
        work: Callable[..., Any],
        schema: pl.Schema,
        table: str,
        *,
        pick: Callable[[Any], pl.DataFrame] | None = None,
        size: int = batches.batch_bytes,
    ) -> None:
        def scan(
            source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
        ) -> pl.LazyFrame:
            return scan_batches(
                work,
                spec.resolve(source),
                schema,
                f"{spec.format}_{table}",
                workers=workers,
                on_progress=on_progress,
                batch_bytes=size,
                pick=pick,
            )

        def read(
            source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
        ) -> pl.DataFrame:
            frame = scan(source, workers=workers, on_progress=on_progress).collect()
            return frame.sort(S.SESSION_ID, maintain_order=True) if table == "sessions" else frame

        scan.__doc__ = f"Lazily, the {table} frame of {spec.label} chats in ``source`` (None: the default stores)."
        read.__doc__ = f"Eager ``scan_{table}``."
        scan.__name__, read.__name__ = f"scan_{table}", f"read_{table}"
        made[scan.__name__], made[read.__name__] = scan, read

    lazy(batches.events, batches.events_schema(), "events")
    lazy(partial(turns_batch, batches.tables), S.TURNS_SCHEMA, "turns")
    lazy(partial(sessions_batch, batches.tables), S.SESSIONS_SCHEMA, "sessions", size=sessions_bytes)
    lazy(batches.problems, S.PROBLEMS_SCHEMA, "problems")
    # priced; the problems left out
    lazy(batches.requests, S.REQUESTS_SCHEMA, "requests", pick=itemgetter(0), size=requests_bytes)

    def iter_requests(
        source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
    ) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
        """(priced requests, problems) of ``source`` batch by batch: what ``usage`` reads."""
        yield from run_batches(
            batches.requests,
            spec.resolve(source),
            workers=workers,
            on_progress=on_progress,
            batch_bytes=requests_bytes,
        )

    def iter_tables(
        source: Source = None, *, turns: bool = True, workers: int | None = 1, on_progress: Progress | None = None
    ) -> Iterator[Tables]:
        """Sessions, turns (empty unless ``turns``), problems and requests batch by batch, each
        batch decoded once."""
        work = partial(batches.tables, turns=turns)
        size = batches.batch_bytes if turns else sessions_bytes
        yield from run_batches(work, spec.resolve(source), workers=workers, on_progress=on_progress, batch_bytes=size)

    report = partial(context_report, spec)
    report.__doc__ = f"What ``cc-analytics context`` prints for a {spec.label} session (:func:`context_report`)."
    # The tables of one batch (bytes in: what the archive and the table cache run, in worker
    # processes too): the batch function itself, which pickles (a function made here would not).
    made.update(
        iter_requests=iter_requests,
        iter_tables=iter_tables,
        tables_batch=batches.tables,
        requests_batch=batches.requests,
        context_report=report,
    )
    return made


# ------------------------------------------------------------------ the context report


def context_report(
    spec: Spec,
    session_id: str,
    files: Sequence[TranscriptFile],
    *,
    contents: Sequence[bytes] | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> dict[str, Any] | None:
    """The ``context`` report of one session: the recorded occupancy (the last request's
    prompt) against the window (recorded, else the model's, else ``spec.default_window``, the
    agent's own default: ``windowAssumed``), with the estimate's breakdown of the messages in
    the context now. None when the files hold no message."""
    import polars as pl

    from cc_analytics.frames.context_report import BREAKDOWN_KEYS
    from cc_analytics.frames.context_report import context_report as build_report

    if not files:
        return None
    batches = batches_of(spec)
    batch = batches.tables(list(files), contents=contents)
    sessions = batch.sessions.filter(pl.col(S.SESSION_ID) == session_id)
    if sessions.is_empty():
        return None
    row = sessions.row(0, named=True)
    shown_model = model or row[S.LAST_MODEL]
    known = (spec.window_of(model) if model else None) or row[S.WINDOW] or spec.window_of(shown_model)
    window = known or spec.default_window  # a window neither recorded nor known: the agent's default, assumed
    now = (
        batches.messages(list(files), contents)
        .filter(pl.col(S.SESSION_ID) == session_id)
        .filter(in_context())
        .collect()
    )
    breakdown = dict(zip(BREAKDOWN_KEYS, (int(now[bucket].sum()) for bucket in S.BUCKETS), strict=True))
    roles = dict(now.group_by(S.ROLE).len().iter_rows())
    counts = {key: int(roles.get(key, 0)) for key in (SYSTEM, USER, ASSISTANT, TOOL)}
    recorded = {
        "windowAssumed": not known,
        "recordedTokens": row[S.LAST_OCCUPANCY],
        "estimatedTokens": row[S.CONTEXT_ESTIMATE],
        "requests": row[S.REQUESTS],
        "costUsd": row[S.COST_USD],
    }
    return build_report(
        session_id,
        model=shown_model,
        provider=provider or row[S.PROVIDER] or "",
        window=int(window),
        breakdown=breakdown,
        counts=counts,
        message_count=int(row[S.MESSAGES] or 0),
        recorded=recorded,
        total=row[S.LAST_OCCUPANCY],
    )
