"""Notebook views of sessions: ``SessionExplorer`` (many), beside ``ContextGauge`` (one, from ``views.gauge``).

Imports: polars, ``format``, ``frames.schema``, ``views.common``, ``views.gauge``, and what
the first display needs (``core``, ``frames.lines``, ``views.sparkline``, and ipywidgets with
``views.searchbox`` when installed), so that a notebook's import cell pays for them, not the
explorer's first display. The explorer renders a static HTML/text repr wherever no widget
front end runs (plain IPython, nbval, HTML export).
"""

from __future__ import annotations

import html
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from cc_analytics.format import composition_lines, group_thousands, usd
from cc_analytics.frames import metrics
from cc_analytics.frames import schema as S
from cc_analytics.views.common import ZONE_COLOURS, Frame, collect
from cc_analytics.views.gauge import ContextGauge, GaugeFigures, find_session, gauge_figures, gauge_html, gauge_text

if TYPE_CHECKING:
    from cc_analytics.frames.plugin import Engine

ALL = "(all)"
ROW = "_row"
TURN_PROMPT_CHARS = 60
STATIC_SESSIONS = 15
LIST_LIMIT = 200  # sessions in the live list: a 10,000-option <select> blocks the page for 400 ms per rebuild
LIST_ROWS = 10
SEARCH_TEXT = "_search_text"
LABEL = "_label"
HAS_TURNS = "_has_turns"
# A live explorer reads a transcript at least this large for a preview in the background: the
# gauge, chart and turns show at once, and the preview pane fills when it is parsed (a 17.6 MB
# transcript takes about 170 ms).
BACKGROUND_PREVIEW_BYTES = 4 * 1024 * 1024


# ------------------------------------------------------------------ SessionExplorer


def _with_filter_columns(df: pl.DataFrame) -> pl.DataFrame:
    """``peak_fraction``, ``day`` and the lowercased search text, computed once per frame."""
    return df.with_columns(
        (pl.col(S.PEAK_OCCUPANCY) / pl.col(S.WINDOW)).fill_null(0.0).alias("peak_fraction"),
        pl.coalesce(pl.col(S.FIRST_TIME), pl.col(S.LAST_TIME)).dt.date().alias("day"),
        pl.concat_str(
            pl.col(S.SESSION_ID),
            pl.col(S.PROJECT).fill_null(""),
            pl.col(S.MODELS).list.join(" ").fill_null(""),
            separator=" ",
        )
        .str.to_lowercase()
        .alias(SEARCH_TEXT),
    ).sort("peak_fraction", S.SESSION_ID, descending=[True, False])


def _matching(
    df: pl.DataFrame,
    *,
    project: str | None = None,
    model: str | None = None,
    start: date | None = None,
    end: date | None = None,
    min_peak: float = 0.0,
    search: str = "",
) -> pl.DataFrame:
    """Rows of a ``_with_filter_columns`` frame matching every filter, one vectorized pass, order kept."""
    conditions = []
    if project and project != ALL:
        conditions.append(pl.col(S.PROJECT) == project)
    if model and model != ALL:
        conditions.append(pl.col(S.MODELS).list.contains(model))
    if start is not None:
        conditions.append(pl.col("day") >= start)
    if end is not None:
        conditions.append(pl.col("day") <= end)
    if min_peak:
        conditions.append(pl.col("peak_fraction") >= min_peak)
    if search.strip():
        conditions.append(pl.col(SEARCH_TEXT).str.contains(search.strip().lower(), literal=True))
    return df.filter(*conditions) if conditions else df


def filter_sessions(
    sessions: Frame,
    *,
    project: str | None = None,
    model: str | None = None,
    start: date | None = None,
    end: date | None = None,
    min_peak: float = 0.0,
    search: str = "",
) -> pl.DataFrame:
    """Sessions matching every given filter, highest peak occupancy first.

    ``min_peak`` is a fraction of the window; ``search`` matches (case-insensitively) the
    session id, project and models.

    Examples:
        >>> from cc_analytics.report import load
        >>> sessions = load(samples=True).sessions
        >>> filter_sessions(sessions, min_peak=0.9)["peak_fraction"].min() >= 0.9
        True
    """
    return _matching(
        _with_filter_columns(collect(sessions)),
        project=project,
        model=model,
        start=start,
        end=end,
        min_peak=min_peak,
        search=search,
    ).drop(SEARCH_TEXT)


def session_label() -> pl.Expr:
    """One line per session for the explorer's list, whole: peak %, project, id, model (the explorer adds the cost)."""
    project = pl.col(S.PROJECT).fill_null("").str.strip_chars_end("/").str.split("/").list.last().fill_null("")
    model = pl.col(S.LAST_MODEL).fill_null("").str.strip_prefix("claude-")
    return pl.concat_str(
        (pl.col("peak_fraction") * 100).round(1).cast(pl.String).str.pad_start(5),
        pl.lit("%  "),
        pl.when(project != "").then(project + " · ").otherwise(pl.lit("")),
        pl.col(S.SESSION_ID).str.slice(0, 8),
        pl.when(model != "").then(" · " + model).otherwise(pl.lit("")),
    )


def session_turns(turns: Frame, session_id: str) -> pl.DataFrame:
    """The main-transcript turns of one session, in order."""
    return (
        collect(turns)
        .filter((pl.col(S.SESSION_ID) == session_id) & ~pl.col(S.IS_SUBAGENT_FILE).fill_null(False))
        .sort(S.TURN_INDEX)
    )


def turn_label(turn: Mapping[str, Any]) -> str:
    occupancy = turn.get(S.OCCUPANCY)
    used = "" if occupancy is None else f"{occupancy:>9,} tok {100 * (turn.get(S.USED_FRACTION) or 0):5.1f}%"
    tools = ",".join(dict.fromkeys(turn.get(S.TOOL_NAMES) or []))
    prompt = " ".join((turn.get(S.PROMPT) or "").split())[:TURN_PROMPT_CHARS]
    flags = (" ⤵compacted" if turn.get(S.COMPACTED) else "") + (
        f" ✖{turn[S.TOOL_ERRORS]}" if turn.get(S.TOOL_ERRORS) else ""
    )
    return f"#{turn[S.TURN_INDEX]:<3} {used:>20}{flags} · {tools or '-'} · {prompt}"


class Transcripts:
    """Parsed transcripts for previews, each read and parsed once while it is unchanged.

    Keyed by path, size and modification time; the ``size`` most recently used are kept, as
    long as their files hold at most ``max_bytes`` together (the most recent one always).
    A parsed transcript takes about 1.2 times its file's size in memory.

    Examples:
        >>> cache = Transcripts(size=2)
        >>> cache.session("/no/such/file.jsonl")
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '/no/such/file.jsonl'
    """

    def __init__(self, *, size: int = 8, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.reads = 0
        self._parsed: OrderedDict[tuple[str, int, int], Any] = OrderedDict()
        # An explorer parses in the background (BACKGROUND_PREVIEW_BYTES): ``_lock`` guards the
        # kept sessions for a moment; a path's own lock makes a second caller wait for the
        # first's parse of it (then find it kept) without holding up callers for other files.
        self._lock = threading.Lock()
        self._parsing: dict[str, threading.Lock] = {}

    def clear(self) -> None:
        """Forget every parsed transcript."""
        with self._lock:
            self._parsed.clear()

    def unparsed_bytes(self, path: str) -> int:
        """The size of the transcript at ``path`` when :meth:`session` would parse it, else 0
        (parsed and unchanged, or unreadable: that is a message, not a parse)."""
        try:
            stat = Path(path).stat()
        except OSError:
            return 0
        with self._lock:
            return 0 if (path, stat.st_size, stat.st_mtime_ns) in self._parsed else stat.st_size

    def session(self, path: str) -> Any:
        """The ``core.Session`` of the transcript at ``path`` (OSError when it cannot be read)."""
        with self._lock:
            parsing = self._parsing.setdefault(path, threading.Lock())
        with parsing:
            return self._session(path)

    def _session(self, path: str) -> Any:
        from cc_analytics.core import Session
        from cc_analytics.frames.lines import decode_line
        from cc_analytics.frames.memory import no_cycle_collection

        stat = Path(path).stat()
        key = (path, stat.st_size, stat.st_mtime_ns)
        with self._lock:
            if key in self._parsed:
                self._parsed.move_to_end(key)
                return self._parsed[key]
        raw = Path(path).read_bytes()
        with warnings.catch_warnings(), no_cycle_collection():
            warnings.simplefilter("ignore")  # malformed lines are the problems frame's business, not the preview's
            parsed = Session(raw, source=path, decode=decode_line)
        with self._lock:
            self.reads += 1
            self._parsed[key] = parsed
            while len(self._parsed) > 1 and (
                len(self._parsed) > self.size or sum(size for _, size, _ in self._parsed) > self.max_bytes
            ):
                self._parsed.popitem(last=False)
        return parsed


# Shared by every explorer of the kernel: running the explorer's cell again (or a second
# explorer over the same sessions) does not parse its transcripts again.
TRANSCRIPTS = Transcripts()


def _previews_windows(turn: Mapping[str, Any]) -> bool:
    """Whether the turn's format anchors ContextWindow previews on its events' uuids."""
    from cc_analytics.errors import InputError
    from cc_analytics.frames.registry import get

    try:
        return get(str(turn.get(S.FORMAT))).previews_windows
    except InputError:  # a format no longer registered: show the prompt
        return False


def turn_preview(
    turn: Mapping[str, Any], *, before: int = 2, after: int = 1, transcripts: Transcripts | None = None
) -> str:
    """The ContextWindow preview around a turn's first event (``render_preview(budget=Budget())``).

    A turn of a format whose transcripts carry no ContextWindow (``FormatPlugin.previews_windows``
    false) shows its prompt; a transcript that cannot be read or no longer holds the turn's
    event gives a one-line message instead of an error. ``transcripts`` keeps parsed
    transcripts between calls (by default the process's shared ``TRANSCRIPTS``).

    Examples:
        >>> from cc_analytics.frames.registry import formats
        >>> windowed = next(plugin.name for plugin in formats() if plugin.previews_windows)
        >>> turn = {"format": windowed, "session_id": "S", "turn_index": 3,
        ...         "event_uuids": ["u1"], "source_file": "gone/relative.jsonl"}
        >>> turn_preview(turn)
        '(cannot read gone/relative.jsonl: No such file or directory)'
    """
    from cc_analytics.core import Budget, EventRef

    if not _previews_windows(turn):
        # ContextWindows are captured from one format's transcripts; other turns show their prompt.
        prompt = turn.get(S.PROMPT)
        return f"user: {prompt}" if prompt else f"(turn {turn[S.TURN_INDEX]} has no user prompt)"
    uuids = turn.get(S.EVENT_UUIDS) or []
    if not uuids:
        return f"(turn {turn[S.TURN_INDEX]} has no events to anchor a window on)"
    source = str(turn[S.SOURCE_FILE])
    try:
        session = (transcripts or TRANSCRIPTS).session(source)
    except OSError as exc:
        return f"(cannot read {source}: {exc.strerror or exc})"
    try:
        window = session.window(EventRef(turn[S.SESSION_ID], uuids[0]), before, after, 200)
    except ValueError as exc:  # the file changed since the frames were read
        return f"(no window around turn {turn[S.TURN_INDEX]} in {source}: {exc})"
    return window.render_preview(budget=Budget())


def _after_this_cell(start: Callable[[], None]) -> None:
    """``start()`` once the notebook cell that runs now has finished (its output is sent), or
    at once outside a cell (a widget's event, plain Python).

    A parse started in the cell would share the interpreter with the kernel's sending of the
    explorer's widgets, and delay the first frame by as much as it saves.
    """
    shell = _running_cell_shell()
    if shell is None:
        start()
        return

    def once(*_: Any) -> None:
        shell.events.unregister("post_run_cell", once)
        start()

    shell.events.register("post_run_cell", once)


def _running_cell_shell() -> Any:
    """The IPython shell when a Jupyter kernel is running a cell now, else None."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        from ipykernel.kernelbase import Kernel

        if not Kernel.initialized():
            return None
        kernel = Kernel.instance()
        parent = kernel.get_parent("shell") or {}
        if parent.get("header", {}).get("msg_type") != "execute_request":
            return None
        return getattr(kernel, "shell", None)
    except Exception:  # noqa: BLE001 (another kernel's internals: then start at once)
        return None


def _pre(text: str) -> str:
    return f"<pre style='white-space:pre-wrap;font-size:12px;background:#f7f7f7;padding:6px'>{html.escape(text)}</pre>"


class SessionExplorer:
    """Pick a session by project, model, date, peak occupancy or text; see its gauge, its
    occupancy over turns and its turns; select a turn to read its ContextWindow preview and,
    given the ``composition`` frame (``frames.read_composition``), what was in its window then.

    In JupyterLab it is a live ipywidgets UI; elsewhere it renders the static state: the
    matching sessions, the selected session's gauge, chart and turns, and one preview.
    The live list shows the first ``LIST_LIMIT`` matching sessions and says how many more
    there are; a filter change keeps the picked session unless it no longer matches. The
    transcripts parsed for previews are kept in ``TRANSCRIPTS``, which every explorer of the
    process shares (the 8 most recent, 256 MiB of files at most).

    Examples:
        >>> from cc_analytics.report import load
        >>> data = load(samples=True)
        >>> ex = SessionExplorer(data.sessions, data.turns)
        >>> ex.turn_rows().height > 0 and ex.preview().startswith("user: ")
        True
    """

    def __init__(
        self, sessions: Frame, turns: Frame, *, session_id: str | None = None, composition: Frame | None = None
    ) -> None:
        self.sessions = collect(sessions)
        self.turns = collect(turns)
        self.composition = None if composition is None else collect(composition)
        self.filters: dict[str, Any] = {}
        self.transcripts = TRANSCRIPTS
        self._table = _with_filter_columns(self.sessions)
        label = session_label()
        if S.COST_USD in self._table.columns:
            # The one dollar formatter, once per session when the explorer is made (not per filter).
            partial = (
                self._table[S.UNPRICED_REQUESTS].fill_null(0).to_list()
                if S.UNPRICED_REQUESTS in self._table.columns
                else [0] * self._table.height
            )
            costs = [usd(c, partial=bool(p)) for c, p in zip(self._table[S.COST_USD].to_list(), partial, strict=True)]
            label = pl.concat_str(label, pl.lit(" · "), pl.Series(costs, dtype=pl.String))
        self._table = self._table.with_columns(label.alias(LABEL))
        # The main-transcript turns' row numbers, in session and turn order: a pick gathers its
        # few rows from them (sorting every column of 106,000 turns took 70-150 ms, the keys 5).
        main = (
            self.turns.select(S.SESSION_ID, S.TURN_INDEX, S.IS_SUBAGENT_FILE)
            .with_row_index(ROW)
            .filter(~pl.col(S.IS_SUBAGENT_FILE).fill_null(False))
            .sort(S.SESSION_ID, S.TURN_INDEX)
        )
        self._main_rows = main[ROW]
        spans = main.group_by(S.SESSION_ID).agg(pl.len().alias("n")).sort(S.SESSION_ID)
        offsets = spans["n"].cum_sum() - spans["n"]
        self._spans: dict[str, tuple[int, int]] = dict(
            zip(spans[S.SESSION_ID].to_list(), zip(offsets.to_list(), spans["n"].to_list(), strict=True), strict=True)
        )
        self._table = self._table.with_columns(
            pl.col(S.SESSION_ID).is_in(spans[S.SESSION_ID].implode()).alias(HAS_TURNS)
        )
        self._matches = self._table
        self.session_id: str | None = (
            find_session(self.sessions, session_id)[S.SESSION_ID] if session_id else self._default_session()
        )
        self.turn_index: int | None = self._peak_turn()
        self._widget: Any = None
        self._quiet = False
        # The live preview pane: what it shows is the latest pick's (a background parse that
        # finishes after another pick leaves the pane alone).
        self._shown_preview = 0
        self._preview_lock = threading.Lock()
        self.preview_thread: threading.Thread | None = None

    @classmethod
    def from_source(
        cls,
        source: str | Sequence[str] | None = None,
        *,
        cache: bool = True,
        composition: bool = False,
        engine: Engine = "local",
        scheduler: str | None = None,
    ) -> SessionExplorer:
        """Read the sessions and turns of every format in ``source`` (every agent's default store
        when None; an archive reads its tables, or several archives, on a Dask cluster with
        ``engine="dask"``: the one at ``scheduler``, else a local one for the read), each
        transcript decoded once (and kept, unless ``cache=False``: ``frames.tablecache``); with
        ``composition``, their composition too (the transcripts of the formats that have one
        decoded again, with their text).

        Examples:
            >>> from cc_analytics.report import SAMPLES_DIR
            >>> SessionExplorer.from_source(SAMPLES_DIR).sessions.height > 0
            True
            >>> SessionExplorer.from_source(SAMPLES_DIR, engine="dask")  # transcripts: read them here
            Traceback (most recent call last):
            ...
            cc_analytics.errors.InputError: engine='dask' reads archives (their Parquet parts as Dask tasks), not transcripts
            Hint: give archives (or the prefix that holds them), or leave out the engine.
        """
        from cc_analytics.frames.api import read_composition, read_tables

        workers = None if engine == "dask" else 1  # a local cluster: a process per CPU
        tables = read_tables(source, cache=cache, engine=engine, scheduler=scheduler, workers=workers)
        parts = read_composition(source) if composition else None
        return cls(tables.sessions, tables.turns, composition=parts)

    # -- state, usable without a front end
    def filtered(self) -> pl.DataFrame:
        """The sessions matching ``filters``, highest peak first."""
        return self._matches.drop(SEARCH_TEXT, LABEL, HAS_TURNS)

    def set_filters(self, **filters: Any) -> SessionExplorer:
        """Filter the sessions (``filter_sessions``' keywords); the pick stays unless filtered out.

        Examples:
            >>> from cc_analytics.report import load
            >>> data = load(samples=True)
            >>> ex = SessionExplorer(data.sessions, data.turns)
            >>> picked = ex.session_id
            >>> ex.set_filters(min_peak=0.5).session_id == picked
            True
            >>> ex.set_filters(search="no such session").session_id is None
            True
        """
        self.filters = filters
        self._matches = _matching(self._table, **filters)
        if self.session_id is None or self._matches.filter(pl.col(S.SESSION_ID) == self.session_id).is_empty():
            self.session_id = self._default_session()
            self.turn_index = self._peak_turn()
            if self._widget is not None:
                self._sync_list()
                self._sync_detail()
        elif self._widget is not None:
            self._sync_list()
        return self

    def select(self, session_id: str, turn_index: int | None = None) -> SessionExplorer:
        """Show ``session_id`` (a unique prefix will do), at ``turn_index`` or its peak turn."""
        self.session_id = find_session(self.sessions, session_id)[S.SESSION_ID]
        self.turn_index = turn_index if turn_index is not None else self._peak_turn()
        if self._widget is not None:
            self._sync_list()
            self._sync_detail()
        return self

    def gauge(self) -> ContextGauge | None:
        if self.session_id is None:
            return None
        rows = self._table.filter(pl.col(S.SESSION_ID) == self.session_id)
        return ContextGauge(rows.row(0, named=True)) if rows.height else None

    def turn_rows(self) -> pl.DataFrame:
        """The picked session's main-transcript turns, in order (its rows gathered, no scan of all turns)."""
        span = self._spans.get(self.session_id or "")
        return self.turns[self._main_rows.slice(*span)] if span else self.turns.clear()

    def chart(self) -> Any:
        """The picked session's occupancy over turns as an Altair chart (the widget draws ``chart_svg``)."""
        from cc_analytics.views.charts import occupancy_over_turns

        return occupancy_over_turns(self.turns, session_id=self.session_id) if self.session_id else None

    def chart_svg(self) -> str:
        """The picked session's occupancy over turns as SVG text, drawn without Vega."""
        from cc_analytics.views.sparkline import occupancy_svg

        if self.session_id is None:
            return ""
        return occupancy_svg(self.turn_rows(), title=f"session {self.session_id[:8]} · occupancy over turns")

    def preview(self) -> str:
        turn = self._picked_turn()
        return "(no turn selected)" if turn is None else turn_preview(turn, transcripts=self.transcripts)

    def window_parts(self) -> list[dict[str, Any]]:
        """The composition rows of the picked session's main transcript at the picked turn
        (empty without a ``composition`` frame, or for a turn it does not measure).

        Examples:
            >>> from cc_analytics.report import load
            >>> from cc_analytics.frames.api import read_composition
            >>> data = load(samples=True)
            >>> ex = SessionExplorer(data.sessions, data.turns, composition=read_composition("data-samples"))
            >>> parts = ex.window_parts()
            >>> sum(row["tokens"] for row in parts) == parts[0]["occupancy"]  # the peak turn, calibrated
            True
        """
        if self.composition is None or self.session_id is None or self.turn_index is None:
            return []
        mine = self.composition.filter(pl.col(S.SESSION_ID) == self.session_id)
        if not mine.height:
            return []
        main = mine.filter(pl.col(S.SOURCE_FILE) == mine[S.SOURCE_FILE][0])
        return main.filter(pl.col(S.TURN_INDEX) == self.turn_index).to_dicts()

    def window_text(self) -> str:
        """What was in the window at the picked turn, part by part (``format.composition_lines``);
        empty without a ``composition`` frame."""
        return "" if self.composition is None else composition_lines(self.window_parts())

    def _picked_turn(self) -> dict[str, Any] | None:
        if self.turn_index is None:
            return None
        rows = self.turn_rows().filter(pl.col(S.TURN_INDEX) == self.turn_index)
        return None if rows.is_empty() else rows.row(0, named=True)

    def _default_session(self) -> str | None:
        """The highest-peak matching session that has turns, recorded occupancy first (a
        measurement beats an estimate); else the highest-peak one."""
        matching = self._matches
        with_turns = matching.filter(pl.col(HAS_TURNS))
        pick = with_turns if with_turns.height else matching
        if S.OCCUPANCY_SOURCE in pick.columns:
            pick = pick.sort(pl.col(S.OCCUPANCY_SOURCE).ne_missing("recorded"), maintain_order=True)
        return pick[S.SESSION_ID][0] if pick.height else None

    def _peak_turn(self) -> int | None:
        turns = self.turn_rows()
        rows = turns.filter(pl.col(S.OCCUPANCY).is_not_null())
        if rows.is_empty():
            return turns[S.TURN_INDEX][-1] if turns.height else None
        return rows.sort(S.OCCUPANCY, descending=True, maintain_order=True)[S.TURN_INDEX][0]

    # -- static reprs
    def to_html(self) -> str:
        matching = self.filtered()
        rows = []
        for r in matching.head(STATIC_SESSIONS).iter_rows(named=True):
            shade = " style='background:#eef3fb'" if r[S.SESSION_ID] == self.session_id else ""
            colour = ZONE_COLOURS[metrics.zone_of(r["peak_fraction"])]
            rows.append(
                f"<tr{shade}><td>{html.escape(str(r[S.PROJECT] or ''))}</td>"
                f"<td><code>{html.escape(r[S.SESSION_ID][:8])}</code></td>"
                f"<td>{html.escape(r[S.LAST_MODEL] or '')}</td>"
                f"<td style='text-align:right'>{group_thousands(r[S.PEAK_OCCUPANCY] or 0)}</td>"
                f"<td style='text-align:right;color:{colour}'>{r['peak_fraction'] * 100:.1f}%</td>"
                f"<td style='text-align:right'>{usd(r.get(S.COST_USD), partial=bool(r.get(S.UNPRICED_REQUESTS)))}</td></tr>"
            )
        table = (
            "<table style='border-collapse:collapse;font:12px system-ui,sans-serif'><tr><th>project</th><th>session</th>"
            f"<th>model</th><th>peak</th><th>peak %</th><th>cost</th></tr>{''.join(rows)}</table>"
        )
        parts = [
            f"<div style='font:600 14px system-ui,sans-serif'>SessionExplorer — {matching.height} of {self.sessions.height} sessions</div>",
            table,
        ]
        gauge = self.gauge()
        if gauge is not None:
            parts.append(gauge.to_html())
            parts.append(self.chart_svg())
            turns = "\n".join(html.escape(turn_label(t)) for t in self.turn_rows().iter_rows(named=True))
            parts.append(f"<pre style='font-size:12px'>{turns}</pre>")
            parts.append(
                f"<div style='font:600 13px system-ui,sans-serif'>window around turn {self.turn_index}</div>{_pre(self.preview())}"
            )
            if self.composition is not None:
                parts.append(self._window_html())
        return "<div class='cc-explorer'>" + "\n".join(parts) + "</div>"

    def to_text(self) -> str:
        matching = self.filtered()
        lines = [f"SessionExplorer — {matching.height} of {self.sessions.height} sessions"]
        for r in matching.head(STATIC_SESSIONS).iter_rows(named=True):
            mark = ">" if r[S.SESSION_ID] == self.session_id else " "
            lines.append(
                f"{mark} {r[S.SESSION_ID][:8]}  {str(r[S.PROJECT] or '')[:28]:<28} {r['peak_fraction'] * 100:5.1f}%"
                f"  {usd(r.get(S.COST_USD), partial=bool(r.get(S.UNPRICED_REQUESTS))):>9}"
            )
        gauge = self.gauge()
        if gauge is not None:
            lines += ["", gauge_text(gauge.figures), ""]
            lines += [turn_label(t) for t in self.turn_rows().iter_rows(named=True)]
            if self.composition is not None:
                lines += ["", self.window_text().rstrip("\n")]
        return "\n".join(lines)

    def _window_html(self) -> str:
        return (
            f"<div style='font:600 13px system-ui,sans-serif'>in the window at turn {self.turn_index}</div>"
            f"{_pre(self.window_text())}"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget where ipywidgets is installed (with a one-line text fallback: the
        static HTML would be rendered for nothing, JupyterLab shows the widget); else the static reprs."""
        widget = self.widget
        if widget is None:
            return {"text/plain": self.to_text(), "text/html": self.to_html()}
        bundle: dict[str, Any] = {
            "text/plain": f"SessionExplorer — {self._matches.height} of {self.sessions.height} sessions"
        }
        bundle.update({k: v for k, v in widget._repr_mimebundle_().items() if k != "text/plain"})
        return bundle

    def __repr__(self) -> str:
        return self.to_text()

    # -- the live widget
    @property
    def widget(self) -> Any:
        """The ipywidgets UI (built on first use; None when ipywidgets is not installed)."""
        if self._widget is None:
            try:
                import ipywidgets  # noqa: F401
            except ImportError:
                return None
            self._widget = self._build_widget()
        return self._widget

    def _build_widget(self) -> Any:
        import ipywidgets as W

        df = self.sessions
        projects = sorted(p for p in df[S.PROJECT].drop_nulls().unique().to_list())
        models = sorted(m for m in df[S.MODELS].explode().drop_nulls().unique().to_list())
        self._all_days = sorted(str(d) for d in self._table["day"].drop_nulls().unique())
        days = self._all_days
        self._project = W.Dropdown(options=[ALL, *projects], description="project")
        self._model = W.Dropdown(options=[ALL, *models], description="model")
        self._days = W.SelectionRangeSlider(
            options=days or ["-"],
            index=(0, max(len(days) - 1, 0)),
            description="dates",
            disabled=len(days) < 2,
            readout=False,  # the readout box cuts two ISO dates off; the line below shows them whole
            layout=W.Layout(width="100%"),
            style={"description_width": "initial"},
        )
        self._days_label = W.HTML(layout=W.Layout(width="100%"))
        self._min_peak = W.IntSlider(value=0, min=0, max=100, step=5, description="peak ≥ %", readout_format="d")
        self._search = self._search_box(W)
        self._list = W.Select(rows=LIST_ROWS, layout=W.Layout(width="100%"))
        self._list.add_class("cc-explorer-list")
        self._more = W.HTML()
        self._gauge = W.HTML()
        self._chart = W.HTML()
        self._turns = W.Select(rows=12, layout=W.Layout(width="100%"))
        self._preview = W.HTML()
        self._window = W.HTML()
        for control in (self._project, self._model, self._days, self._min_peak, self._search):
            control.observe(self._on_filter, names="value")
        self._list.observe(self._on_session, names="value")
        self._turns.observe(self._on_turn, names="value")
        controls = W.VBox(
            [
                self._project,
                self._model,
                self._days,
                self._days_label,
                self._min_peak,
                self._search,
                self._list,
                self._more,
            ],
            layout=W.Layout(width="40%", min_width="360px"),
        )
        detail = W.VBox(
            [self._gauge, self._chart, W.HTML("<b>turns</b>"), self._turns, self._preview, self._window],
            layout=W.Layout(width="60%"),
        )
        self._widget = W.HBox([controls, detail])
        self._sync_days_label()
        self._sync_list()
        self._sync_detail()
        return self._widget

    @staticmethod
    def _search_box(W: Any) -> Any:
        try:
            from cc_analytics.views.searchbox import SearchBox
        except ImportError:  # without anywidget: no keystroke reaches the kernel before Enter
            return W.Text(
                placeholder="search id, project, model (Enter)", description="search", continuous_update=False
            )
        return SearchBox(placeholder="search id, project, model")

    def _on_filter(self, _change: Any) -> None:
        if self._quiet:
            return
        days = self._days.value if not self._days.disabled else None
        self._sync_days_label()
        self.set_filters(
            project=self._project.value,
            model=self._model.value,
            start=date.fromisoformat(days[0]) if days else None,
            end=date.fromisoformat(days[1]) if days else None,
            min_peak=self._min_peak.value / 100,
            search=self._search.value,
        )

    def _sync_days_label(self) -> None:
        if self._days.disabled:
            text = self._all_days[0] if self._all_days else "no dates"
        else:
            first, last = self._days.value
            text = f"{first} → {last}"
        self._days_label.value = f"<div style='font-size:12px;color:#444;margin-left:4px'>{html.escape(text)}</div>"

    def _sync_list(self) -> None:
        """The first LIST_LIMIT matches (and the picked session, wherever it ranks) and a count of the rest."""
        shown = self._matches.head(LIST_LIMIT)
        options = list(zip(shown[LABEL].to_list(), shown[S.SESSION_ID].to_list(), strict=True))
        ids = shown[S.SESSION_ID]
        pinned = self.session_id is not None and not ids.is_in([self.session_id]).any()
        if pinned:
            picked = self._matches.filter(pl.col(S.SESSION_ID) == self.session_id)
            if picked.height:
                options.append((picked[LABEL][0], self.session_id))
            else:
                pinned = False
        more = self._matches.height - shown.height
        self._quiet = True
        try:
            if self._list.options != tuple(options):
                self._list.options = options
            self._list.value = self.session_id if options and self.session_id else None
        finally:
            self._quiet = False
        note = f"{group_thousands(self._matches.height)} of {group_thousands(self.sessions.height)} sessions match"
        if more > 0:
            note += f"; the first {group_thousands(shown.height)} are listed" + (
                ", and the picked one" if pinned else ""
            )
            note += " — narrow the filters or search to see the rest"
        self._more.value = f"<div style='font-size:12px;color:#666'>{html.escape(note)}</div>"

    def _on_session(self, change: Any) -> None:
        if self._quiet:
            return
        if change["new"] and change["new"] != self.session_id:
            self.session_id = change["new"]
            self.turn_index = self._peak_turn()
            self._sync_detail()

    def _on_turn(self, change: Any) -> None:
        if self._quiet or change["new"] is None or change["new"] == self.turn_index:
            return
        self.turn_index = change["new"]
        self._sync_window()
        self._show_preview()

    def _sync_window(self) -> None:
        self._window.value = self._window_html() if self.composition is not None and self.session_id else ""

    def _sync_detail(self) -> None:
        """Gauge, chart, turn list and preview of the picked session: each computed once."""
        gauge = self.gauge()
        self._gauge.value = gauge.to_html() if gauge else "<i>no session matches</i>"
        self._chart.value = self.chart_svg()
        turns = self.turn_rows()
        options = [(turn_label(t), t[S.TURN_INDEX]) for t in turns.iter_rows(named=True)]
        self._quiet = True
        try:
            self._turns.options = options
            self._turns.value = self.turn_index if options else None
        finally:
            self._quiet = False
        self._sync_window()
        self._show_preview()

    def _show_preview(self) -> None:
        """The picked turn's preview in its pane; from a large transcript not parsed yet, a note
        at once and the preview when a background thread has parsed it (``preview_thread``)."""
        with self._preview_lock:
            self._shown_preview += 1
            ticket = self._shown_preview
        if self.session_id is None:
            self._set_preview(ticket, "")
            return
        turn = self._picked_turn()
        size = 0  # no turn, a ChainlessChain prompt or a parsed transcript: shown at once
        if turn is not None and _previews_windows(turn) and turn.get(S.SOURCE_FILE):
            size = self.transcripts.unparsed_bytes(str(turn[S.SOURCE_FILE]))
        if turn is None or size < BACKGROUND_PREVIEW_BYTES:
            self._set_preview(ticket, _pre(self.preview()))
            return
        self._set_preview(ticket, _pre(f"(reading {size / 1e6:.1f} MB of transcript for turn {turn[S.TURN_INDEX]}…)"))

        def fill() -> None:
            # A pick made meanwhile makes this preview another turn's, or the same one's: either
            # way the ticket decides whether it is shown.
            if ticket != self._shown_preview:
                return
            try:
                text = self.preview()
            except Exception as exc:  # noqa: BLE001 (a thread's error would otherwise go to the kernel's log only)
                text = f"(no window around turn {turn[S.TURN_INDEX]}: {type(exc).__name__}: {exc})"
            self._set_preview(ticket, _pre(text))

        self.preview_thread = threading.Thread(target=fill, name="cc-analytics preview", daemon=True)
        _after_this_cell(self.preview_thread.start)

    def _set_preview(self, ticket: int, value: str) -> None:
        with self._preview_lock:
            if ticket == self._shown_preview:
                self._preview.value = value


__all__ = [
    "ContextGauge",
    "GaugeFigures",
    "SessionExplorer",
    "Transcripts",
    "filter_sessions",
    "find_session",
    "gauge_figures",
    "gauge_html",
    "gauge_text",
    "turn_preview",
]


# What the first display needs is loaded with this module (about 0.15 s, most of it
# ipywidgets): a notebook pays it in the cell that imports the explorer, and the explorer's
# first display only builds its widgets. Without ipywidgets it renders its static page.
import cc_analytics.core  # noqa: E402
import cc_analytics.frames.lines  # noqa: E402
import cc_analytics.views.sparkline  # noqa: E402, F401

with suppress(ImportError):
    import ipywidgets  # noqa: F401

    import cc_analytics.views.searchbox  # noqa: F401
