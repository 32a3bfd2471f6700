"""``cc-analytics context [ID]``: the per-session context gauge, byte-compatible with ``cc context``.

Imports: argparse, json, ``format``; the format registry (``frames.registry``) when the parser is
built, and each format's verbs inside ``run``: every format that can report a session's context
(``FormatPlugin.context_report``) is asked for the id, ChainlessChain's first (byte parity with
``cc context``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cc_analytics.format import colour_enabled, composition_lines, context_gauge, error_line, findings_lines

if TYPE_CHECKING:
    from cc_analytics.archive.read import Archive, Archives
    from cc_analytics.frames.plugin import FormatPlugin

NO_SESSION = "No session found. Run a headless agent with `--session <id>` first, or pass a session id."
NO_TRANSCRIPT = 'No headless transcript for session "{id}" (headless sessions are JSONL-only).'
NOTHING_FOUND = "No session found: {stores}. Pass a session id, or {options}."
NOT_ARCHIVED = 'No archive holds session "{id}" (searched the {count} archives of {where}).'


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from cc_analytics.frames.registry import formats

    plugins = formats()
    parser = subparsers.add_parser(
        "context",
        help="how full a session's context window is (every agent)",
        description=(
            "How much of the model's context window a session fills: the recorded occupancy where the "
            "agent records it, with the heuristic breakdown. ID is a session id of any agent ("
            + "; ".join(f"{plugin.label}: {plugin.store_hint}" for plugin in plugins)
            + "). Without ID: the most recently active session, asked in this order: "
            + ", then ".join(" or ".join(group) for group in _label_groups(plugins))
            + "."
        ),
    )
    parser.add_argument("id", nargs="?", help="session id (default: the latest session)")
    parser.add_argument("--model", default=None, help="size against this model's window")
    parser.add_argument("--provider", default=None, help="replace the recorded provider")
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    parser.add_argument(
        "--why",
        action="store_true",
        help="also say what filled the window at the last turn, part by part (agents whose transcripts say)",
    )
    for plugin in plugins:
        if plugin.store_option:
            parser.add_argument(
                plugin.store_option,
                dest=_dest(plugin.name),
                type=Path,
                action="append",
                default=None,
                help=f"{plugin.label}'s store to search (repeatable; default: {plugin.store_hint})",
            )
    parser.add_argument(
        "--archive",
        metavar="DIR",
        action="append",
        default=None,
        help=(
            "read the session from an archive (`cc-analytics archive`) instead of the stores; repeat it, or give "
            "the folder or URL prefix that holds a team's archives, to find it in whichever holds it"
        ),
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cc_analytics.frames.registry import formats

    _tolerant_streams()
    if args.archive is not None:
        return _archived(args)
    model, provider = args.model or None, args.provider or None
    if args.id is not None:
        for plugin in _context_order(formats()):
            stores = _stores(args, plugin)
            files = plugin.find_session(args.id, stores)
            if not files:
                continue
            report = plugin.context_report(args.id, files, model=model, provider=provider)
            if report is not None:
                return _emit(report, as_json=args.json, why=_why(args, plugin, args.id, files))
        return _fail(NO_TRANSCRIPT.format(id=args.id), as_json=args.json)
    for index, group in enumerate(_groups(formats())):
        found = [(latest, plugin) for plugin in group if (latest := plugin.latest_session(_stores(args, plugin)))]
        if not found:
            continue
        (_, session_id), plugin = max(found, key=lambda item: item[0])
        files = plugin.find_session(session_id, _stores(args, plugin))
        report = plugin.context_report(session_id, files, model=model, provider=provider) if files else None
        if report is None:
            continue
        if index:
            sys.stderr.write(f"note: showing the most recently active {plugin.label} session, {session_id}\n")
        return _emit(report, as_json=args.json, why=_why(args, plugin, session_id, files))
    plugins = formats()
    if not any(store.is_dir() for plugin in plugins for store in (_stores(args, plugin) or plugin.default_stores())):
        stores = "; ".join(f"no {plugin.label} transcripts under {plugin.store_hint}" for plugin in plugins)
        options = " / ".join(plugin.store_option for plugin in plugins if plugin.store_option)
        return _fail(NOTHING_FOUND.format(stores=stores, options=options), as_json=args.json)
    return _fail(NO_SESSION, as_json=args.json)


def _archived(args: argparse.Namespace) -> int:
    """The report of a session from an archive's raw copies (the latest session without an ID):
    of the archives given (or under a prefix), the one that holds the session."""
    from cc_analytics.archive.read import open_archives
    from cc_analytics.frames.registry import get

    team = open_archives(args.archive)
    session_id = args.id
    if session_id is None:
        latest = (
            team.scan("sessions")
            .sort("last_time", "session_id", descending=True, nulls_last=True)
            .select("session_id")
            .head(1)
            .collect()
        )
        if not latest.height:
            return _fail(NO_SESSION, as_json=args.json)
        session_id = latest.item()
    holder = _holder(team, session_id)
    if holder is None:
        if len(team.archives) == 1:
            return _fail(NO_TRANSCRIPT.format(id=session_id), as_json=args.json)
        where = ", ".join(
            f"{machine} ({archive.root})" for machine, archive in zip(team.machines, team.archives, strict=True)
        )
        return _fail(NOT_ARCHIVED.format(id=session_id, count=len(team.archives), where=where), as_json=args.json)
    archive, machine = holder
    records = archive.session_files(session_id)
    report = None
    for format in dict.fromkeys(record.format for record in records):  # a session id of two agents: the first
        mine = [record for record in records if record.format == format]
        files, contents = archive.transcripts(mine)
        report = get(format).context_report(
            session_id, files, contents=contents, model=args.model or None, provider=args.provider or None
        )
        if report is not None:
            break
    if report is None:
        return _fail(NO_TRANSCRIPT.format(id=session_id), as_json=args.json)
    if args.id is not None:
        report["sessionId"] = args.id
    if len(team.archives) > 1:
        sys.stderr.write(f"note: session {session_id} read from the archive of {machine} ({archive.root})\n")
    if args.why:
        sys.stderr.write("note: --why reads transcripts, not an archive's tables: left out\n")
    return _emit(report, as_json=args.json)


def _holder(team: Archives, session_id: str) -> tuple[Archive, str] | None:
    """The archive (and its machine) to read ``session_id`` from: of those that hold it, one that
    keeps raw copies before a shared one, then the one the readers take it from (the most events,
    the first given of a tie); None when none holds it."""
    import polars as pl

    holding = [(index, archive) for index, archive in enumerate(team.archives) if archive.session_files(session_id)]
    if not holding:
        return None

    def events(archive: Archive) -> int:
        found = archive.scan("sessions").filter(pl.col("session_id") == session_id).select("events").collect()
        return int(found["events"].fill_null(0).max() or 0) if found.height else 0

    ranked = sorted(holding, key=lambda item: (item[1].manifest.shared, -events(item[1]), item[0]))
    index, archive = ranked[0]
    return archive, team.machines[index]


def _dest(name: str) -> str:
    return "store_" + name.replace("-", "_")


def _stores(args: argparse.Namespace, plugin: FormatPlugin) -> list[Path] | None:
    return getattr(args, _dest(plugin.name), None)


def _context_order(plugins: list[FormatPlugin]) -> list[FormatPlugin]:
    return sorted(plugins, key=lambda plugin: plugin.context_order)


def _groups(plugins: list[FormatPlugin]) -> list[list[FormatPlugin]]:
    """The formats by ``context_order``: the latest session of the first group that has one is shown."""
    groups: dict[int, list[FormatPlugin]] = {}
    for plugin in _context_order(plugins):
        groups.setdefault(plugin.context_order, []).append(plugin)
    return list(groups.values())


def _label_groups(plugins: list[FormatPlugin]) -> list[list[str]]:
    return [[plugin.label for plugin in group] for group in _groups(plugins)]


Why = tuple[list[dict], list[dict] | None]


def _why(args: argparse.Namespace, plugin: FormatPlugin, session_id: str, files: list) -> Why | None:
    """The composition rows of the session's last measured turn and the session's findings
    (``--why``; None for a format without findings), or None when not asked; an agent whose
    transcripts do not say gets a note and no rows."""
    if not args.why:
        return None
    if not plugin.has_composition:
        sys.stderr.write(f"note: {plugin.label} transcripts do not say what filled the window (--why)\n")
        return None
    import polars as pl

    mine = pl.col("session_id") == session_id
    findings = plugin.module().read_findings(files).filter(mine).to_dicts() if plugin.has_findings else None
    frame = plugin.module().read_composition(files).filter(mine)
    if not frame.height:
        return [], findings
    main = frame["source_file"][0]
    last = frame.filter(pl.col("source_file") == main)
    return last.filter(pl.col("turn_index") == last["turn_index"].max()).to_dicts(), findings


def _emit(report: dict[str, Any], *, as_json: bool, why: Why | None = None) -> int:
    if as_json:
        if why is not None:
            composition, findings = why
            report = {**report, "composition": [_json_row(row) for row in composition]}
            if findings is not None:
                report["findings"] = [_finding_row(row) for row in findings]
        sys.stdout.write(json.dumps(_js_numbers(report), indent=2, ensure_ascii=False) + "\n")
    else:
        colour = colour_enabled(sys.stdout)
        sys.stdout.write(context_gauge(report, colour=colour))
        if why is not None:
            composition, findings = why
            sys.stdout.write("\n" + composition_lines(composition, colour=colour))
            if findings is not None:
                sys.stdout.write("\n" + findings_lines(findings, colour=colour))
    return 0


def _finding_row(row: dict[str, Any]) -> dict[str, Any]:
    """A finding as the JSON report writes it: camelCase keys, its time in ISO 8601, and the file
    its line is in (``sourceFile``: what ``cc-analytics window`` opens)."""
    keys = (
        "kind",
        "rank",
        "source_file",
        "turn_index",
        "line",
        "uuid",
        "category",
        "item",
        "target",
        "tokens",
        "part_tokens",
    )
    out = {_camel(key): row[key] for key in keys}
    out.update(costUsd=row["cost_usd"], count=row["count"], seconds=row["seconds"], ratio=row["ratio"])
    out["time"] = None if row["time"] is None else row["time"].isoformat().replace("+00:00", "Z")
    return out


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    """A composition row as the JSON report writes it: camelCase keys, no file path."""
    keys = ("turn_index", "category", "item", "estimated_tokens", "entered_tokens", "dropped_tokens", "tokens")
    return {_camel(key): row[key] for key in keys}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def _fail(message: str, *, as_json: bool) -> int:
    if as_json:
        sys.stderr.write(json.dumps({"error": {"message": message}}, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        sys.stderr.write(error_line(message, colour=colour_enabled(sys.stderr)))
    return 1


def _js_numbers(value: Any) -> Any:
    """Integral floats print as integers in JavaScript (``0``, ``1``), not ``0.0``."""
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _tolerant_streams() -> None:
    # Ids come from argv, where undecodable bytes arrive as lone surrogates; write them back as bytes.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
