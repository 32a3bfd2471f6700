"""The one human formatter: numbers, percents, bars and colours for every CLI output.

Imports: the standard library and the leaf ``windowmath`` only (so every layer from ``frames``
up may use it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import TextIO

from cc_analytics.windowmath import scale_parts, zone_of

BAR_CELLS = 24
FULL_CELL = "\u2588"
EMPTY_CELL = "\u2591"

SGR = {
    "bold": ("\x1b[1m", "\x1b[22m"),
    "gray": ("\x1b[90m", "\x1b[39m"),
    "cyan": ("\x1b[36m", "\x1b[39m"),
    "green": ("\x1b[32m", "\x1b[39m"),
    "yellow": ("\x1b[33m", "\x1b[39m"),
    "red": ("\x1b[31m", "\x1b[39m"),
}


def round_half_up(value: float, places: int = 0) -> Decimal:
    """Round the exact binary value of ``value`` to ``places`` decimals, ties away from zero.

    This is JavaScript's ``toFixed`` for non-negative numbers and ``Math.round`` for
    ``places=0``; Python's ``round`` picks the even neighbour instead.

    Examples:
        >>> round_half_up(1024 / 32768, 4), round_half_up(12.5), round_half_up(0.25, 1)
        (Decimal('0.0313'), Decimal('13'), Decimal('0.3'))
    """
    return Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def fraction_4(used: float) -> float:
    """``Number(used.toFixed(4))``: the used fraction as reported in JSON."""
    return float(round_half_up(used, 4))


def bar(fraction: float, cells: int = BAR_CELLS) -> str:
    """A ``cells``-wide bar of full and empty blocks, filled by half-up rounding.

    Examples:
        >>> bar(1536 / 8192)
        '█████░░░░░░░░░░░░░░░░░░░'
    """
    filled = int(round_half_up(min(max(fraction, 0.0), 1.0) * cells))
    return FULL_CELL * filled + EMPTY_CELL * (cells - filled)


def group_thousands(value: int) -> str:
    """en-US digit grouping: ``32768`` → ``32,768``."""
    return f"{value:,}"


def colour_enabled(stream: TextIO | None = None) -> bool:
    """Whether to colour output: FORCE_COLOR wins, then NO_COLOR, then ``stream.isatty()``."""
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force.strip().lower() not in ("0", "false")
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class Painter:
    """Wraps text in SGR sequences when colour is on; identity otherwise."""

    __slots__ = ("enabled",)

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        if not self.enabled:
            return text
        start, end = SGR[style]
        return f"{start}{text}{end}"


def utf16_prefix(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text``; a split surrogate pair becomes U+FFFD.

    Examples:
        >>> utf16_prefix("ab👍c", 3)
        'ab\ufffd'
    """
    encoded = text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return encoded.decode("utf-16-le", "replace")


def well_formed(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, printable on any stream."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def human_int(value: int | float | None) -> str:
    """Compact human number for tables: ``1234`` → ``1.2k``, ``2500000`` → ``2.5M``."""
    if value is None:
        return "-"
    value = float(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}{suffix}"
    return str(int(value))


def unread_files_note(count: int, outcome: str, first: str) -> str:
    """The stderr note for files that could not be read, with the first of them.

    Examples:
        >>> unread_files_note(2, "skipped", "a.jsonl: permission denied")
        'note: 2 files could not be read and were skipped (first: a.jsonl: permission denied)'
        >>> unread_files_note(1, "not archived", "b.jsonl: a broken link")
        'note: 1 file could not be read and was not archived (first: b.jsonl: a broken link)'
    """
    return (
        f"note: {count} file{'s' * (count != 1)} could not be read and {'were' if count != 1 else 'was'} "
        f"{outcome} (first: {first})"
    )


def usd(value: float | None, *, partial: bool = False) -> str:
    """Dollars for tables: ``$1,234.57``, ``<$0.01`` under a cent, ``-`` when unknown, and a
    trailing ``*`` when ``partial`` (some requests had no price and are left out).

    Examples:
        >>> usd(1234.567), usd(0.004), usd(0.0), usd(None), usd(2.5, partial=True)
        ('$1,234.57', '<$0.01', '$0.00', '-', '$2.50*')
    """
    if value is None:
        return "-"
    text = "<$0.01" if 0 < value < 0.005 else f"${value:,.2f}"
    return text + "*" if partial else text


def unpriced_name(model: str | None, mode: str | None) -> str:
    """How a model (and mode) without a price is named: ``claude-opus-4-6 [speed fast]``.

    Examples:
        >>> unpriced_name("claude-opus-4-6", "speed fast"), unpriced_name(None, None)
        ('claude-opus-4-6 [speed fast]', '(no model)')
    """
    return (model or "(no model)") + (f" [{mode}]" if mode else "")


def unpriced_note(missing: Sequence[tuple[str, int]]) -> str:
    """The stderr note naming the models (and modes) of the requests without a price, with counts.

    Examples:
        >>> print(unpriced_note([("mystery-1", 3), ("(no model)", 1)]))
        note: 4 requests have no price and are left out of the costs: mystery-1 (3), (no model) (1)
        Hint: the offline price list (genai-prices) does not know these models or modes; a newer release may.
    """
    total = sum(count for _, count in missing)
    named = ", ".join(f"{name} ({count})" for name, count in missing)
    return (
        f"note: {total} request{'s' * (total != 1)} {'have' if total != 1 else 'has'} no price and "
        f"{'are' if total != 1 else 'is'} left out of the costs: {named}\n"
        "Hint: the offline price list (genai-prices) does not know these models or modes; a newer release may."
    )


GAUGE_ROWS = (
    ("system", "system", "system"),
    ("user", "user", "user"),
    ("assistant", "assistant", "assistant"),
    ("tool results", "tool", "tool"),
    ("tool calls", "toolCalls", None),
)
WARNING_SIGN = "\u26a0"
EM_DASH = "\u2014"
MIDDLE_DOT = "\u00b7"
HEADER_ID_UNITS = 28
TOTAL_LABEL = "total".ljust(11)
CROSS = "\u2716"


def context_gauge(report: dict, *, colour: bool = False) -> str:
    """The ``context`` gauge of a report dict (the ``--json`` keys), every line ending in LF.

    A report whose transcript recorded the occupancy (a ``recordedTokens`` that is not null)
    leads with it (:func:`recorded_gauge`); any other is drawn as ``cc context`` draws it,
    byte for byte.

    Examples:
        >>> r = {"sessionId": "s", "model": None, "provider": "ollama", "contextWindow": 32768,
        ...      "totalTokens": 0, "remainingTokens": 32768, "messageCount": 0,
        ...      "breakdown": dict.fromkeys(["system", "user", "assistant", "tool", "toolCalls"], 0),
        ...      "counts": dict.fromkeys(["system", "user", "assistant", "tool"], 0), "overflows": False}
        >>> print(context_gauge(r).splitlines()[1])
          model (default) · provider ollama · window 32,768 tokens · 0 messages
    """
    if report.get("recordedTokens") is not None:
        return recorded_gauge(report, colour=colour)
    paint = Painter(colour)
    window = report["contextWindow"]
    total = report["totalTokens"]
    used = total / window
    model = report["model"]
    lines = [
        paint(
            "bold", f"Context {EM_DASH} session " + paint("gray", utf16_prefix(report["sessionId"], HEADER_ID_UNITS))
        ),
        paint(
            "gray",
            f"  model {'(default)' if model is None else model} {MIDDLE_DOT} provider {report['provider']}"
            f" {MIDDLE_DOT} window {group_thousands(window)} tokens {MIDDLE_DOT} {report['messageCount']} messages",
        ),
        "",
    ]
    for label, key, count_key in GAUGE_ROWS:
        tokens = report["breakdown"][key]
        if not tokens:
            continue
        share = tokens / total
        row = f"  {label:<13} {tokens:>7}  {paint('cyan', bar(share))} {int(round_half_up(share * 100)):>3}%"
        if count_key is not None:
            row += paint("gray", f"  ({report['counts'][count_key]})")
        lines.append(row)
    lines.append("")
    tone = zone_of(used)
    percent = round_half_up(used * 100, 1)
    lines.append(
        f"  {paint('bold', TOTAL_LABEL)} {total:>7}  {paint(tone, bar(used))} {paint(tone, f'{percent}% of window')}"
    )
    lines.append(paint("gray", f"  headroom      {report['remainingTokens']:>7} tokens remaining"))
    if report["overflows"]:
        lines.append(paint("red", f"  {WARNING_SIGN} exceeds the model context window {EM_DASH} compaction required"))
    return "".join(line + "\n" for line in lines)


def recorded_gauge(report: dict, *, colour: bool = False) -> str:
    """The gauge of a session whose transcript recorded its occupancy: the recorded tokens and
    their share of the window first, then of the auto-compact threshold (when the agent has
    one), then the heuristic composition, scaled to the recorded total and labelled as
    estimated (the scale factor shown). Above 100 % of the window, a line says why.

    Examples:
        >>> r = {"sessionId": "s", "model": "claude-opus-4-6", "provider": "anthropic", "contextWindow": 200000,
        ...      "messageCount": 3, "recordedTokens": 50000, "autoCompactThreshold": 167000,
        ...      "windowSource": "the default window",
        ...      "breakdown": {"system": 0, "user": 100, "assistant": 300, "tool": 600, "toolCalls": 0},
        ...      "counts": {"system": 0, "user": 1, "assistant": 1, "tool": 1}}
        >>> print(recorded_gauge(r), end="")
        Context — session s
          model claude-opus-4-6 · provider anthropic · window 200,000 tokens · 3 messages
          window from the default window
        <BLANKLINE>
          recorded        50000  ██████░░░░░░░░░░░░░░░░░░ 25.0% of window
          auto-compact   167000  29.9% of the threshold · 117000 tokens to go
          headroom       150000 tokens remaining
        <BLANKLINE>
          estimated composition (heuristic, 1000 tokens scaled ×50.00 to the recorded total)
          user             5000  ██░░░░░░░░░░░░░░░░░░░░░░  10%  (1)
          assistant       15000  ███████░░░░░░░░░░░░░░░░░  30%  (1)
          tool results    30000  ██████████████░░░░░░░░░░  60%  (1)
    """
    paint = Painter(colour)
    window = report["contextWindow"]
    recorded = report["recordedTokens"]
    used = recorded / window if window else 0.0
    model = report["model"]
    lines = [
        paint(
            "bold", f"Context {EM_DASH} session " + paint("gray", utf16_prefix(report["sessionId"], HEADER_ID_UNITS))
        ),
        paint(
            "gray",
            f"  model {'(default)' if model is None else model} {MIDDLE_DOT} provider {report['provider']}"
            f" {MIDDLE_DOT} window {group_thousands(window)} tokens {MIDDLE_DOT} {report['messageCount']} messages",
        ),
    ]
    source = report.get("windowSource")
    if source:
        lines.append(paint("gray", f"  window from {source}"))
    tone = zone_of(used)
    percent = round_half_up(used * 100, 1)
    lines += [
        "",
        f"  {paint('bold', 'recorded'.ljust(13))} {recorded:>7}  {paint(tone, bar(used))} "
        + paint(tone, f"{percent}% of window"),
    ]
    threshold = report.get("autoCompactThreshold")
    if threshold:
        share = round_half_up(recorded / threshold * 100, 1)
        left = threshold - recorded
        to_go = f"{left} tokens to go" if left > 0 else "reached: Claude Code compacts before the next request"
        lines.append(f"  {'auto-compact':<13} {threshold:>7}  {share}% of the threshold {MIDDLE_DOT} {to_go}")
    lines.append(paint("gray", f"  headroom      {max(window - recorded, 0):>7} tokens remaining"))
    if recorded > window:
        lines.append(
            paint(
                "red",
                f"  {WARNING_SIGN} above the window: its size ({group_thousands(window)}) comes from "
                f"{source or 'an inference'}, and this session's last request held more, so its window was larger",
            )
        )
    parts = [int(report["breakdown"][key]) for _, key, _ in GAUGE_ROWS]
    estimated = sum(parts)
    lines.append("")
    if not estimated:
        lines.append(paint("gray", "  estimated composition: the transcript holds no text to estimate"))
        return "".join(line + "\n" for line in lines)
    lines.append(
        paint(
            "gray",
            f"  estimated composition (heuristic, {estimated} tokens scaled "
            f"\u00d7{round_half_up(recorded / estimated, 2)} to the recorded total)",
        )
    )
    for (label, _, count_key), tokens in zip(GAUGE_ROWS, scale_parts(parts, recorded), strict=True):
        if not tokens:
            continue
        share = tokens / recorded
        row = f"  {label:<13} {tokens:>7}  {paint('cyan', bar(share))} {int(round_half_up(share * 100)):>3}%"
        if count_key is not None:
            row += paint("gray", f"  ({report['counts'][count_key]})")
        lines.append(row)
    return "".join(line + "\n" for line in lines)


PART_LABELS = {
    "baseline": "baseline (system prompt, tools, memory)",
    "memory": "memory files",
    "system": "injected text",
    "summary": "compaction summary",
    "user": "user prompts",
    "assistant": "assistant text",
    "thinking": "thinking",
    "tool_call": "tool calls",
    "tool_result": "tool results",
}
WHY_PARTS = 12


def composition_lines(rows: Sequence[dict], *, colour: bool = False) -> str:
    """What filled the window at one turn: its composition rows (``COMPOSITION_SCHEMA`` dicts),
    largest part first, calibrated where the turn recorded its occupancy, every line ending in LF.

    Examples:
        >>> rows = [dict(category="baseline", item=None, estimated_tokens=900, tokens=900, dropped_tokens=0,
        ...              turn_index=2, occupancy=1000, calibration=2.0, uncalibrated_error=-50, compacted=False),
        ...         dict(category="tool_result", item="Read", estimated_tokens=50, tokens=100, dropped_tokens=0,
        ...              turn_index=2, occupancy=1000, calibration=2.0, uncalibrated_error=-50, compacted=False)]
        >>> print(composition_lines(rows), end="")
          what filled the window at turn 2 (estimated parts scaled ×2.00 to the recorded 1000; unscaled error -50)
          baseline (system prompt, tools, memory)      900  ██████████████████████░░  90%
          tool results · Read                          100  ██░░░░░░░░░░░░░░░░░░░░░░  10%
    """
    paint = Painter(colour)
    if not rows:
        return paint("gray", "  what filled the window: no turn to measure") + "\n"
    first = rows[0]
    recorded = first["occupancy"] is not None
    column = "tokens" if recorded else "estimated_tokens"
    held = sorted((row for row in rows if row[column]), key=lambda row: -row[column])
    total = sum(row[column] for row in held) or 1
    if recorded and first["calibration"] is not None:
        how = (
            f"estimated parts scaled \u00d7{round_half_up(first['calibration'], 2)} to the recorded "
            f"{first['occupancy']}; unscaled error {first['uncalibrated_error']}"
        )
    elif recorded:
        how = f"recorded {first['occupancy']}"
    else:
        how = "estimated: no request recorded at this turn"
    lines = [paint("gray", f"  what filled the window at turn {first['turn_index']} ({how})")]
    for row in held[:WHY_PARTS]:
        label = PART_LABELS[row["category"]] + (f" {MIDDLE_DOT} {row['item']}" if row["item"] else "")
        share = row[column] / total
        lines.append(
            f"  {label:<40} {row[column]:>7}  {paint('cyan', bar(share))} {int(round_half_up(share * 100)):>3}%"
        )
    if len(held) > WHY_PARTS:
        rest = sum(row[column] for row in held[WHY_PARTS:])
        lines.append(paint("gray", f"  \u2026 {len(held) - WHY_PARTS} more parts, {rest} tokens"))
    if first["compacted"]:
        dropped = sum(row["dropped_tokens"] for row in rows)
        kept = sum(row["estimated_tokens"] for row in rows if row["category"] == "summary")
        lines.append(
            paint(
                "gray", f"  a compaction before this turn dropped {dropped} estimated tokens; its summary holds {kept}"
            )
        )
    return "".join(line + "\n" for line in lines)


FINDING_TITLES = {
    "largest_item": "largest items",
    "repeated_read": "files read more than once",
    "window_jump": "largest jumps of the window, and what entered",
    "peak_window": "what filled the window at its fullest",
    "tool_definitions": "tool definitions",
    "mcp_server": "MCP servers",
    "cache_rebuild": "cache rebuilt after an idle gap",
    "cache_hit": "turns with the lowest cache hit ratio",
}
WHY_FINDINGS = 5


def _part_label(row: dict) -> str:
    if row["category"] is None:
        return row["item"] or ""
    return PART_LABELS[row["category"]] + (f" {MIDDLE_DOT} {row['item']}" if row["item"] else "")


def _finding_line(row: dict, causes: Sequence[dict]) -> str:
    kind = row["kind"]
    at = f"turn {row['turn_index']}"
    if kind == "largest_item":
        what = _part_label(row) + (f" {MIDDLE_DOT} {row['target']}" if row["target"] else "")
        return f"{row['tokens']:>7}  {what} ({at})"
    if kind == "repeated_read":
        return f"{row['tokens']:>7}  {row['target']}: {row['count']} reads, the repeats' tokens (second read at {at})"
    if kind == "window_jump":
        entered = ", ".join(f"{_part_label(cause)} {cause['part_tokens']}" for cause in causes if cause["category"])
        return f"{'+' + str(row['tokens']):>7}  at {at}" + (f": {entered}" if entered else "")
    if kind == "peak_window":
        return f"{row['tokens']:>7}  {_part_label(row)} (at {at})"
    if kind == "tool_definitions":
        return f"{row['tokens']:>7}  {_part_label(row)}, sent with every request"
    if kind == "mcp_server":
        calls = f"{row['count']} call{'s' * (row['count'] != 1)}"
        return f"{row['tokens']:>7}  {row['item']}: the most it held, {calls} (first at {at})"
    if kind == "cache_rebuild":
        return (
            f"{row['tokens']:>7}  rewritten at {at} after {round(row['seconds'])} s idle "
            f"({row['item']} cache), {usd(row['cost_usd'])}"
        )
    ratio = "-" if row["ratio"] is None else f"{int(round_half_up(row['ratio'] * 100))}%"
    requests = f"{row['count']} request{'s' * (row['count'] != 1)}"
    return f"{ratio:>7}  of {at}'s prompts read from the cache ({requests}, {usd(row['cost_usd'])})"


def findings_lines(rows: Sequence[dict], *, colour: bool = False) -> str:
    """What is worth a look in a session's windows: its findings (``FINDINGS_SCHEMA`` dicts, in
    the frame's order), the first :data:`WHY_FINDINGS` of each kind, each with the ``uuid`` to
    open (``cc-analytics window --uuid``); every line ends in LF.

    Examples:
        >>> rows = [dict(kind="repeated_read", rank=1, turn_index=3, uuid="u7", category="tool_result",
        ...              item="Read", target="/w/a.py", tokens=500, count=2)]
        >>> print(findings_lines(rows), end="")
          findings (open one with: cc-analytics window TRANSCRIPT --uuid UUID --render)
          files read more than once
              500  /w/a.py: 2 reads, the repeats' tokens (second read at turn 3)  · u7
    """
    paint = Painter(colour)
    if not rows:
        return paint("gray", "  findings: none") + "\n"
    lines = [paint("gray", "  findings (open one with: cc-analytics window TRANSCRIPT --uuid UUID --render)")]
    kinds = list(dict.fromkeys(row["kind"] for row in rows))
    for kind in kinds:
        mine = [row for row in rows if row["kind"] == kind]
        firsts = [
            row
            for index, row in enumerate(mine)
            if index == 0
            or (row["rank"], row["turn_index"]) != (mine[index - 1]["rank"], mine[index - 1]["turn_index"])
        ]
        lines.append(f"  {FINDING_TITLES[kind]}")
        for row in firsts[:WHY_FINDINGS]:
            causes = [
                cause for cause in mine if (cause["rank"], cause["turn_index"]) == (row["rank"], row["turn_index"])
            ]
            lines.append(f"  {_finding_line(row, causes)}  {paint('gray', MIDDLE_DOT + ' ' + str(row['uuid']))}")
        if len(firsts) > WHY_FINDINGS:
            lines.append(paint("gray", f"  \u2026 {len(firsts) - WHY_FINDINGS} more"))
    return "".join(line + "\n" for line in lines)


def error_line(message: str, *, colour: bool = False) -> str:
    """A human error line: a (red) cross, a space, the message, LF."""
    return f"{Painter(colour)('red', CROSS)} {message}\n"


class ProgressBar:
    """The one progress bar: a line redrawn on a terminal's stderr as bytes are read.

    Call it as ``bar(done, total)`` (bytes); ``label`` names the phase shown after the figures.
    Use it only when the stream is a terminal; :meth:`close` clears the line.

    Examples:
        >>> import io
        >>> stream = io.StringIO()
        >>> ProgressBar(stream, label="sessions")(50_000_000, 100_000_000)
        >>> stream.getvalue().split("  ")[1:]
        ['50%', '50/100 MB', 'sessions\\x1b[K']
    """

    def __init__(self, stream: TextIO, *, label: str = "") -> None:
        self.stream = stream
        self.label = label
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        fraction = done / total if total else 1.0
        tail = f"  {self.label}" if self.label else ""
        self.stream.write(
            f"\r{bar(fraction)} {int(fraction * 100):3d}%  {done / 1e6:,.0f}/{total / 1e6:,.0f} MB{tail}\x1b[K"
        )
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.drawn = False
