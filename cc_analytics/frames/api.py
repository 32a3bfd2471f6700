"""The one API in front of every format: ``scan_*``/``read_*`` with ``format="auto"``.

Imports: polars (on first use), the standard library, ``frames.sources``, ``frames.registry``,
``frames.tablecache`` and, on demand, each registered format's verbs module (``frames.plugin``),
which exposes the same verbs with the same signatures. Sources are told apart by content
(:func:`~cc_analytics.frames.sources.sniff_format`), so one folder may hold several formats;
sessions, turns, requests and problems of every format share one schema (``frames.schema``)
and are concatenated as they are, with a ``format`` column. A source that holds the tables
already (an archive: a table source the registry lists, ``frames.plugin.TableSource``) is read
from them instead.

Every verb takes ``workers``, the processes that decode, this one included: ``1`` (the default)
reads in this process; ``None`` lets the batch engine choose: one process for sources up to 96
MiB, two above (never more than the machine's cores), which is what the command line does; a
number asks for that many. Worker processes are started with ``spawn``: a script that asks for
them keeps its code under ``if __name__ == "__main__":`` (the engine says so when it is
missing); a notebook needs nothing. ``on_progress(done_bytes, total_bytes)`` is called as
batches finish.

Every verb but the events' takes ``cache`` too: ``True`` (the default) reads through the cache of
decoded sessions (``frames.tablecache``: a session whose files did not change since it was
decoded is read from its kept tables, the others are decoded and kept), ``False`` decodes every
file and keeps nothing. The frames are the same either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cc_analytics.errors import InputError
from cc_analytics.frames import schema as S
from cc_analytics.frames.plugin import FRONT, VERBS, Engine, check_engine
from cc_analytics.frames.registry import UNRECOGNIZED, fallback, names, order
from cc_analytics.frames.sources import (
    Format,
    Plan,
    Source,
    TranscriptFile,
    open_stored,
    package,
    plan,
    table_source_of,
)
from cc_analytics.frames.tables import Tables

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.engine import Progress
    from cc_analytics.frames.plugin import StoredTables
    from cc_analytics.frames.usage import By
else:
    from cc_analytics.lazy import LazyModule

    # Imported on first use: the command line plans its files and hands the first batches to
    # its workers before this process imports Polars to decode its own (``tablecache._decode``).
    pl = LazyModule("polars")


def archived(source: Source | Plan) -> StoredTables | None:
    """The tables ``source`` holds when it names a table source (a folder or URL holding an
    archive manifest), else None.

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> archived(SAMPLES_DIR) is None  # transcripts, decoded by the formats
        True
    """
    return open_stored(source)


def _per_format(
    verb: str,
    source: Source,
    format: Format,
    workers: int | None,
    on_progress: Progress | None,
    cache: bool,
    schema: pl.Schema,
) -> list[pl.LazyFrame]:
    table = verb.removeprefix("scan_")
    archive = archived(source)
    if archive is not None:
        return [archive.scan(table, format=format)]
    if cache:
        from cc_analytics.frames import tablecache
        from cc_analytics.frames.engine import lazy_source

        by_plan = tablecache.plan(source, format=format)

        def produce() -> Iterator[pl.DataFrame]:
            batches = tablecache.iter_tables(
                by_plan,
                turns=table == "turns",
                workers=workers,
                on_progress=on_progress,
                requests_only=table == "requests",  # as the formats' own scan_requests read them
            )
            for _name, tables in batches:
                yield getattr(tables, table)

        return [lazy_source(produce, schema, f"cached {table}")]
    by_format = plan(source, format=format)
    steps = _progress_steps(by_format, on_progress)
    frames = [
        getattr(package(name), verb)(files, workers=workers, on_progress=step)
        for (name, files), step in zip(by_format.items(), steps, strict=True)
    ]
    return frames or [pl.LazyFrame(schema=schema)]


def _progress_steps(by_format: dict[str, list[TranscriptFile]], on_progress: Progress | None) -> list[Progress | None]:
    """One progress callback per format, reporting bytes done over the whole plan."""
    if on_progress is None:
        return [None] * len(by_format)
    sizes = [sum(f.size for f in files) for files in by_format.values()]
    total = sum(sizes)
    report = on_progress

    def step_from(base: int) -> Progress:
        return lambda done, _total: report(base + done, total)

    offsets = [sum(sizes[:index]) for index in range(len(sizes))]
    return [step_from(base) for base in offsets]


def scan_sessions(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.LazyFrame:
    """Lazily, one row per session of every format found in ``source`` (``SESSIONS_SCHEMA``).

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> from cc_analytics.frames.registry import names
        >>> frame = scan_sessions(SAMPLES_DIR).collect()
        >>> set(frame["format"]) == set(names())  # the samples hold every format
        True
    """
    frames = _per_format("scan_sessions", source, format, workers, on_progress, cache, S.SESSIONS_SCHEMA)
    return pl.concat(frames, how="vertical")


def read_sessions(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.DataFrame:
    """Eager :func:`scan_sessions`, sorted by format and session id."""
    frame = scan_sessions(source, format=format, workers=workers, on_progress=on_progress, cache=cache)
    return frame.collect().sort(S.FORMAT, S.SESSION_ID)


def scan_turns(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.LazyFrame:
    """Lazily, one row per turn of every format found in ``source`` (``TURNS_SCHEMA``)."""
    frames = _per_format("scan_turns", source, format, workers, on_progress, cache, S.TURNS_SCHEMA)
    return pl.concat(frames, how="vertical")


def read_turns(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.DataFrame:
    """Eager :func:`scan_turns`."""
    return scan_turns(source, format=format, workers=workers, on_progress=on_progress, cache=cache).collect()


def scan_problems(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.LazyFrame:
    """Lazily, one row per line (or file: ``line`` null) that could not be used whole."""
    frames = _per_format("scan_problems", source, format, workers, on_progress, cache, S.PROBLEMS_SCHEMA)
    return pl.concat(frames, how="vertical")


def read_problems(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.DataFrame:
    """Eager :func:`scan_problems`."""
    return scan_problems(source, format=format, workers=workers, on_progress=on_progress, cache=cache).collect()


def scan_requests(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.LazyFrame:
    """Lazily, one row per API request of every format found in ``source`` (``REQUESTS_SCHEMA``),
    priced (``cost_usd``; null for a model the price list does not know).

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> from cc_analytics.frames.registry import names
        >>> frame = scan_requests(SAMPLES_DIR).collect()
        >>> set(frame["format"]) == set(names()), frame["cost_usd"].null_count()
        (True, 6)
    """
    frames = _per_format("scan_requests", source, format, workers, on_progress, cache, S.REQUESTS_SCHEMA)
    return pl.concat(frames, how="vertical")


def read_requests(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.DataFrame:
    """Eager :func:`scan_requests`, in format, session and line order."""
    return scan_requests(source, format=format, workers=workers, on_progress=on_progress, cache=cache).collect()


def iter_requests(
    source: Source = None,
    *,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> Iterator[tuple[str, pl.DataFrame, pl.DataFrame]]:
    """(format, priced requests, problems) batch by batch, each batch decoded once: what the
    ``usage`` command consumes. An archive gives its tables, one batch per format."""
    archive = archived(source)
    if archive is not None:
        for name in names() if format == "auto" else (format,):
            requests = archive.scan("requests", format=name).collect()
            problems = archive.scan("problems", format=name).collect()
            if requests.height or problems.height:
                yield name, requests, problems
        return
    if cache:
        from cc_analytics.frames import tablecache

        by_plan = tablecache.plan(source, format=format)
        cached = tablecache.iter_tables(
            by_plan, turns=False, workers=workers, on_progress=on_progress, requests_only=True
        )
        for name, tables in cached:
            yield name, tables.requests, tables.problems
        return
    by_format = plan(source, format=format)
    steps = _progress_steps(by_format, on_progress)
    for (name, files), step in zip(by_format.items(), steps, strict=True):
        for requests, problems in package(name).iter_requests(files, workers=workers, on_progress=step):
            yield name, requests, problems


def read_usage(
    source: Source = None,
    *,
    by: By = "day",
    timezone: str | None = None,
    breakdown: bool = False,
    since: date | datetime | str | None = None,
    until: date | datetime | str | None = None,
    format: Format = "auto",
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
) -> pl.DataFrame:
    """Tokens, cost and requests of ``source`` per day, week, month, session, model, project or
    5-hour block (see :func:`cc_analytics.frames.usage.usage` for the columns and rules).

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> by_model = read_usage(SAMPLES_DIR, by="model")
        >>> by_model.filter(pl.col("model") == "qwen2.5-coder:14b").select("requests", "cost_usd").row(0)
        (6, 0.0)
    """
    from cc_analytics.frames.usage import usage

    requests = scan_requests(source, format=format, workers=workers, on_progress=on_progress, cache=cache).collect()
    return usage(requests, by, timezone=timezone, breakdown=breakdown, since=since, until=until)


def scan_limits(
    source: Source = None,
    *,
    format: Format = "auto",
    history: str | Path | Literal[False] | None = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.LazyFrame:
    """Lazily, the plans' rate-limit windows as the agents reported them (``LIMITS_SCHEMA``):
    one row per window per report, from every format that has limits (``FormatPlugin.has_limits``).

    A format whose transcripts record them (Codex) reads them from ``source``'s files; one
    whose agent passes them elsewhere reads what was kept of them, ``history`` (None: its
    default place, False: none; Claude Code's is the history ``statusline`` keeps in the cache
    folder, all of it whatever the source: limits are the account's, not a session's). An
    archive holds no limits: only the kept history is read beside it.

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> frame = read_limits(SAMPLES_DIR, history=False)
        >>> frame.columns[:4], frame.height > 0
        (['format', 'session_id', 'time', 'limit_window'], True)
    """
    from cc_analytics.frames.registry import formats

    by_format = {} if archived(source) is not None else plan(source, format=format)
    frames = [
        plugin.module().scan_limits(by_format.get(plugin.name, []), history=history, workers=workers, on_progress=None)
        for plugin in formats()
        if plugin.has_limits and format in ("auto", plugin.name)
    ]
    if on_progress is not None:
        total = sum(f.size for files in by_format.values() for f in files)
        on_progress(total, total)
    return pl.concat(frames, how="vertical") if frames else pl.LazyFrame(schema=S.LIMITS_SCHEMA)


def read_limits(
    source: Source = None,
    *,
    format: Format = "auto",
    history: str | Path | Literal[False] | None = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.DataFrame:
    """Eager :func:`scan_limits`, by time (then format, window and session)."""
    frame = scan_limits(source, format=format, history=history, workers=workers, on_progress=on_progress)
    return frame.sort(S.TIME, S.FORMAT, S.LIMIT_WINDOW, S.SESSION_ID, nulls_last=True, maintain_order=True).collect()


def _optional_verb(
    verb: str, source: Source, format: Format, workers: int | None, on_progress: Progress | None
) -> pl.LazyFrame:
    """``scan_<table>``, one of an optional verb group (:data:`~cc_analytics.frames.plugin.COMPOSITION_VERBS`,
    :data:`~cc_analytics.frames.plugin.FINDINGS_VERBS`), from every format of ``source`` whose
    plugin has it (``FormatPlugin.has_<table>``), concatenated (``<TABLE>_SCHEMA`` when none has)."""
    from cc_analytics.frames.registry import get

    table = verb.removeprefix("scan_")
    if archived(source) is not None:
        msg = f"an archive keeps tables, not the content blocks the {table} of a transcript is measured from"
        raise InputError(msg)
    by_format = plan(source, format=format)
    steps = _progress_steps(by_format, on_progress)
    frames = [
        getattr(package(name), verb)(files, workers=workers, on_progress=step)
        for (name, files), step in zip(by_format.items(), steps, strict=True)
        if name != UNRECOGNIZED and getattr(get(name), f"has_{table}")
    ]
    return pl.concat(frames, how="vertical") if frames else pl.LazyFrame(schema=getattr(S, f"{table.upper()}_SCHEMA"))


def scan_composition(
    source: Source = None, *, format: Format = "auto", workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what filled each transcript's window at each turn, part by part
    (``COMPOSITION_SCHEMA``), for every format whose transcripts say (``FormatPlugin.has_composition``;
    the rules are in each such format's package).

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> frame = read_composition(SAMPLES_DIR)
        >>> frame.filter(pl.col("occupancy").is_not_null()).height > 0
        True
    """
    return _optional_verb("scan_composition", source, format, workers, on_progress)


def read_composition(
    source: Source = None, *, format: Format = "auto", workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_composition`, by format, session, file, turn and part."""
    frame = scan_composition(source, format=format, workers=workers, on_progress=on_progress)
    keys = [S.FORMAT, S.SESSION_ID, S.SOURCE_FILE, S.TURN_INDEX, S.CATEGORY, S.ITEM]
    return frame.sort(keys, nulls_last=True, maintain_order=True).collect()


def scan_findings(
    source: Source = None, *, format: Format = "auto", workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what is worth a look in each transcript's windows, one row per finding
    (``FINDINGS_SCHEMA``: the largest items, files read more than once, the largest jumps of
    the window and their causes, tool definitions, MCP servers, cache rebuilt after an idle gap,
    the cache hit ratio per turn), each naming its session, turn, line and ``uuid``, for every
    format whose transcripts say (``FormatPlugin.has_findings``; the rules are in each such
    format's package).

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> frame = read_findings(SAMPLES_DIR)
        >>> frame.filter(pl.col("kind") == "tool_definitions").height > 0
        True
    """
    return _optional_verb("scan_findings", source, format, workers, on_progress)


def read_findings(
    source: Source = None, *, format: Format = "auto", workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_findings`, by format, session, file, kind and rank."""
    return _sorted_findings(scan_findings(source, format=format, workers=workers, on_progress=on_progress)).collect()


def _sorted_findings(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Findings in :func:`read_findings`' order: by format, session, file, kind and rank."""
    return frame.sort(S.FORMAT, S.SESSION_ID, S.SOURCE_FILE, S.FINDING_KIND, S.RANK, maintain_order=True)


def scan_events(
    source: Source = None, *, format: Format = "auto", workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per line of one format's transcripts (each format has its own events schema).

    With ``format="auto"`` the sources must hold one format; pass ``format=`` to pick one of several.
    """
    found = table_source_of(source)
    if found is not None:
        kind, root = found
        kind.open(root)  # one that cannot be read says so first, as for every other verb
        raise InputError(kind.no_events)
    by_format = plan(source, format=format)
    by_format.pop(UNRECOGNIZED, None)  # no events: read_problems names them
    if len(by_format) > 1:
        msg = (
            f"the sources hold several formats ({', '.join(by_format)}), whose events frames differ\n"
            f"Hint: pass format= one of {', '.join(map(repr, by_format))}."
        )
        raise InputError(msg)
    name = next(iter(by_format), fallback() if format == "auto" else format)
    files = by_format.get(name, [])
    return package(name).scan_events(files, workers=workers, on_progress=on_progress)


def read_events(
    source: Source = None, *, format: Format = "auto", workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_events`."""
    return scan_events(source, format=format, workers=workers, on_progress=on_progress).collect()


def iter_tables(
    source: Source | Plan = None,
    *,
    format: Format = "auto",
    turns: bool = True,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
    findings: bool = False,
    requests: Literal["all", "unpriced"] = "all",
) -> Iterator[tuple[str, Tables]]:
    """(format, tables) batch by batch: sessions, turns (empty unless ``turns``), problems and
    priced requests decoded once per batch, and with ``findings`` the findings of the formats
    that have them (:func:`scan_findings`; empty for the others) from the same decode; what the
    report and the CLI consume. ``source`` may be a :func:`plan`; an archive has no findings
    (``Tables.findings`` is None). ``requests="unpriced"``: only the requests without a price
    (each once, as in the full table; what ``cc-analytics sessions`` counts), which an archive
    reads without reading the others.

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> [tables.requests.height for _name, tables in iter_tables(SAMPLES_DIR, requests="unpriced")][:1]
        [0]
    """
    if requests not in ("all", "unpriced"):
        msg = f"requests must be 'all' or 'unpriced', not {requests!r}"
        raise ValueError(msg)
    archive = archived(source)
    if archive is not None:
        from cc_analytics.frames.prices import without_price

        unpriced = without_price() if requests == "unpriced" else None
        sessions = archive.scan("sessions", format=format).collect()
        for name in sorted(set(sessions[S.FORMAT]), key=order):
            turns_frame = archive.scan("turns", format=name).collect() if turns else pl.DataFrame(schema=S.TURNS_SCHEMA)
            problems = archive.scan("problems", format=name).collect()
            wanted = archive.scan("requests", format=name, where=unpriced).collect()
            yield name, Tables(sessions.filter(pl.col(S.FORMAT) == name), turns_frame, problems, wanted)
        return
    if cache:
        from cc_analytics.frames import tablecache

        by_plan = tablecache.plan(source, format=format)
        for name, tables in tablecache.iter_tables(
            by_plan, turns=turns, workers=workers, on_progress=on_progress, findings=findings
        ):
            yield name, tables if requests == "all" else replace(tables, requests=_unpriced(tables.requests))
        return
    from cc_analytics.frames.registry import get

    by_format = plan(source, format=format)
    steps = _progress_steps(by_format, on_progress)
    for (name, files), step in zip(by_format.items(), steps, strict=True):
        found = findings and name != UNRECOGNIZED and get(name).has_findings
        options = {"findings": True} if found else {}
        for batch in package(name).iter_tables(files, turns=turns, workers=workers, on_progress=step, **options):
            kept = batch.findings if found else pl.DataFrame(schema=S.FINDINGS_SCHEMA) if findings else None
            asked = batch.requests if requests == "all" else _unpriced(batch.requests)
            yield name, Tables(batch.sessions, batch.turns, batch.problems, asked, kept)


def _unpriced(requests: pl.DataFrame) -> pl.DataFrame:
    from cc_analytics.frames.prices import without_price

    return requests.filter(without_price())


def read_tables(
    source: Source | Plan = None,
    *,
    format: Format = "auto",
    turns: bool = True,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    cache: bool = True,
    findings: bool = False,
    engine: Engine = "local",
    scheduler: str | None = None,
) -> Tables:
    """Sessions, turns, problems and priced requests of ``source`` from one decode of every file,
    and with ``findings`` what :func:`read_findings` gives (None from an archive), from the same decode.

    ``engine="dask"`` reads an archive's (or several archives') tables as tasks on the Dask
    cluster at ``scheduler``, else on a local one of ``workers`` processes, started for this
    read and ended after it (the ``dask`` extra); transcripts are refused.

    Examples:
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> tables = read_tables(SAMPLES_DIR)
        >>> tables.sessions.height > 0 and tables.turns.height > 0
        True
        >>> read_tables(SAMPLES_DIR, engine="dask")
        Traceback (most recent call last):
        ...
        cc_analytics.errors.InputError: engine='dask' reads archives (their Parquet parts as Dask tasks), not transcripts
        Hint: give archives (or the prefix that holds them), or leave out the engine.
    """
    check_engine(engine)
    stored = None
    if engine != "local":
        stored = open_stored(source, engine=engine, scheduler=scheduler, workers=workers)
        if stored is None:
            msg = (
                f"engine={engine!r} reads archives (their Parquet parts as Dask tasks), not transcripts\n"
                "Hint: give archives (or the prefix that holds them), or leave out the engine."
            )
            raise InputError(msg)
    parts: dict[str, list[pl.DataFrame]] = {"sessions": [], "turns": [], "problems": [], "requests": []}
    found: list[pl.DataFrame] | None = [] if findings else None
    try:
        for _name, batch in iter_tables(
            source if stored is None else stored.root,
            format=format,
            turns=turns,
            workers=workers,
            on_progress=on_progress,
            cache=cache,
            findings=findings,
        ):
            parts["sessions"].append(batch.sessions)
            parts["turns"].append(batch.turns)
            parts["problems"].append(batch.problems)
            parts["requests"].append(batch.requests)
            if found is not None:
                found = None if batch.findings is None else [*found, batch.findings]
    finally:
        if stored is not None:
            stored.close()
    sessions = _concat(parts["sessions"], S.SESSIONS_SCHEMA).sort(S.FORMAT, S.SESSION_ID)
    turns_frame = _concat(parts["turns"], S.TURNS_SCHEMA)
    problems = _concat(parts["problems"], S.PROBLEMS_SCHEMA)
    findings_frame = None if found is None else _sorted_findings(_concat(found, S.FINDINGS_SCHEMA).lazy()).collect()
    return Tables(sessions, turns_frame, problems, _concat(parts["requests"], S.REQUESTS_SCHEMA), findings_frame)


def _concat(frames: Sequence[pl.DataFrame], schema: pl.Schema) -> pl.DataFrame:
    return pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=schema)


__all__ = [*FRONT, "archived", "VERBS"]
