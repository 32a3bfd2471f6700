"""``cc-analytics context [ID]``: the per-session context gauge, byte-compatible with ``cc context``.

Imports: argparse, json, ``format``; the frames layer is imported inside ``run``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cc_analytics.errors import InputError
from cc_analytics.format import colour_enabled, context_gauge, error_line

NO_SESSION = "No session found. Run a headless agent with `--session <id>` first, or pass a session id."
NO_TRANSCRIPT = 'No headless transcript for session "{id}" (headless sessions are JSONL-only).'
NOTHING_FOUND = (
    "No session found: no Claude Code transcripts under ~/.claude/projects (or CLAUDE_CONFIG_DIR) "
    "and no ChainlessChain store at {store}. Pass a session id, or --claude-root / --sessions-dir."
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "context",
        help="how full a session's context window is (ChainlessChain or Claude Code)",
        description=(
            "Estimate how much of the model's context window a session fills. ID is a "
            "ChainlessChain session id or a Claude Code session uuid found under ~/.claude/projects. "
            "Without ID: the most recently active ChainlessChain session, or, when that store is "
            "absent or empty, the most recently active Claude Code session."
        ),
    )
    parser.add_argument("id", nargs="?", help="session id (default: the latest session)")
    parser.add_argument("--model", default=None, help="size against this model's window")
    parser.add_argument("--provider", default=None, help="replace the recorded provider")
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    parser.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        help="ChainlessChain session store (default: $CHAINLESSCHAIN_HOME/sessions or ~/.chainlesschain/sessions)",
    )
    parser.add_argument(
        "--claude-root",
        type=Path,
        action="append",
        default=None,
        help="Claude Code projects folder to search (repeatable; default: ~/.claude/projects and CLAUDE_CONFIG_DIR)",
    )
    parser.add_argument(
        "--archive",
        metavar="DIR",
        default=None,
        help="read the session from an archive (`cc-analytics archive`) instead of the stores",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import polars as pl

    from cc_analytics.frames.chainless.sessions import iter_context, report_dict
    from cc_analytics.frames.chainless.store import default_sessions_dir, is_safe_id, live_transcripts, session_path

    _tolerant_streams()
    if args.archive is not None:
        return _archived(args)
    store = args.sessions_dir or default_sessions_dir()
    if args.id is None:
        paths = live_transcripts(store)
        if not paths:
            # No ChainlessChain session: most people have Claude Code's transcripts instead.
            latest = _latest_claude_session(args.claude_root)
            if latest is not None:
                report = _claude_report(args, latest)
                if report is not None:
                    sys.stderr.write(f"note: showing the most recently active Claude Code session, {latest}\n")
                    return _emit(report, as_json=args.json)
            if not store.is_dir():
                return _fail(NOTHING_FOUND.format(store=store), as_json=args.json)
            return _fail(NO_SESSION, as_json=args.json)
    else:
        path = session_path(args.id, store)
        if path is None:
            report = _claude_report(args, args.id) if is_safe_id(args.id) else None
            if report is None:
                return _fail(NO_TRANSCRIPT.format(id=args.id), as_json=args.json)
            return _emit(report, as_json=args.json)
        paths = [path]
    batches = list(iter_context(paths, model=args.model, provider=args.provider, workers=None))
    frame = pl.concat([rows for rows, _ in batches])
    problems = pl.concat([found for _, found in batches])
    unreadable = problems.filter(pl.col("line").is_null())
    if args.id is not None and unreadable.height:
        file, reason = unreadable.row(0)[0], unreadable.row(0)[2]
        msg = f"cannot read {file}: {reason}"
        raise InputError(msg)
    if args.id is None:
        frame = frame.sort(["last_activity", "session_id"], descending=True).head(1)
    report = report_dict(frame.row(0, named=True))
    if args.id is not None:
        report["sessionId"] = args.id
    return _emit(report, as_json=args.json)


def _archived(args: argparse.Namespace) -> int:
    """The report of a session from an archive's raw copies (the latest session without an ID)."""
    from cc_analytics.archive.read import open_archive
    from cc_analytics.frames.chainless.sessions import context_batch, report_dict
    from cc_analytics.frames.claude import claude_context

    archive = open_archive(args.archive)
    session_id = args.id
    if session_id is None:
        latest = (
            archive.scan("sessions")
            .sort("last_time", "session_id", descending=True, nulls_last=True)
            .select("session_id")
            .head(1)
            .collect()
        )
        if not latest.height:
            return _fail(NO_SESSION, as_json=args.json)
        session_id = latest.item()
    records = archive.session_files(session_id)
    if not records:
        return _fail(NO_TRANSCRIPT.format(id=session_id), as_json=args.json)
    chainless = [r for r in records if r.format == "chainlesschain"]
    if chainless:
        files, contents = archive.transcripts(chainless[:1])
        rows, _problems = context_batch(
            files, model=args.model or None, provider=args.provider or None, contents=contents
        )
        report = report_dict(rows.row(0, named=True))
    else:
        files, contents = archive.transcripts(records)
        found = claude_context(session_id, model=args.model or None, files=files, contents=contents)
        if found is None:
            return _fail(NO_TRANSCRIPT.format(id=session_id), as_json=args.json)
        report = found
    if args.id is not None:
        report["sessionId"] = args.id
    return _emit(report, as_json=args.json)


def _emit(report: dict[str, Any], *, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps(_js_numbers(report), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(context_gauge(report, colour=colour_enabled(sys.stdout)))
    return 0


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


def _claude_report(args: argparse.Namespace, session_id: str) -> dict[str, Any] | None:
    from cc_analytics.frames.claude import claude_context

    return claude_context(session_id, roots=args.claude_root, model=args.model or None)


def _latest_claude_session(roots: list[Path] | None) -> str | None:
    """The id of the Claude Code session whose main transcript was written last, if any."""
    from cc_analytics.frames.claude.discovery import default_roots, discover

    existing = [root for root in (roots or default_roots()) if root.is_dir()]
    if not existing:
        return None
    newest: tuple[float, str] | None = None
    for transcript in discover(existing):
        if transcript.is_subagent:
            continue
        try:
            stamp = (transcript.path.stat().st_mtime, transcript.session_id)
        except OSError:
            continue
        newest = stamp if newest is None or stamp > newest else newest
    return None if newest is None else newest[1]


def _tolerant_streams() -> None:
    # Ids come from argv, where undecodable bytes arrive as lone surrogates; write them back as bytes.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
