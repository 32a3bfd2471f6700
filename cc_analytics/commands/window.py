"""``cc-analytics window TRANSCRIPT --uuid U``: capture one context window as wire JSON.

Imports: argparse and the standard library; ``cc_analytics.core`` inside ``run``, and
``cc_analytics.archive`` for ``--archive``.
"""

from __future__ import annotations

import argparse
import sys
import warnings

PROG = "cc-analytics"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "window",
        help="capture the context window around one transcript event",
        description=(
            "Capture the turns around the event with uuid U in a Claude Code transcript and "
            "print them as cc-transcript.context/2 JSON (or, with --render, as text). "
            "Malformed lines are skipped with a warning on stderr."
        ),
    )
    parser.add_argument("transcript", metavar="TRANSCRIPT", help="a Claude Code .jsonl transcript")
    parser.add_argument("--uuid", required=True, metavar="U", help="uuid of the anchor event")
    parser.add_argument("--tool-use-id", metavar="T", default=None, help="tool call id echoed in the anchor")
    parser.add_argument(
        "--session-id", metavar="S", default=None, help="session id echoed in the anchor (default: the event's own)"
    )
    parser.add_argument("--before", type=int, default=6, metavar="N", help="turns before the anchor's turn (default 6)")
    parser.add_argument("--after", type=int, default=2, metavar="N", help="turns after it (default 2)")
    parser.add_argument(
        "--preview-chars", type=int, default=200, metavar="N", help="clip width of turn previews (default 200)"
    )
    parser.add_argument("--render", action="store_true", help="print the rendered previews instead of JSON")
    parser.add_argument(
        "--archive",
        metavar="DIR",
        action="append",
        default=None,
        help=(
            "read TRANSCRIPT's copy from this archive (TRANSCRIPT as its turns' source_file, or the copy's path); "
            "repeat it, or give the folder or URL prefix that holds a team's archives, to find it in whichever holds it"
        ),
    )
    parser.set_defaults(run=run)


def _error(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(f"{PROG}: warning: {message}\n")


def run(args: argparse.Namespace) -> int:
    from cc_analytics.core import EventRef, Session
    from cc_analytics.frames.lines import decode_line

    path = args.transcript
    for name in ("before", "after"):
        if getattr(args, name) < 0:
            return _error(f"--{name} must be 0 or more, got {getattr(args, name)}")
    if not -(2**63) <= args.preview_chars < 2**63:
        return _error(f"--preview-chars is out of range: {args.preview_chars}")
    if args.archive is not None:
        path, raw = _archived(args.archive, path)
    else:
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            return _error(f"cannot read {path}: {exc.strerror or exc}")
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        warnings.simplefilter("always")
        session = Session(raw, source=path, decode=decode_line)
        session_id = args.session_id
        if session_id is None:
            session_id = _event_session(session, args.uuid) or _stem(path)
        anchor = EventRef(session_id, args.uuid, args.tool_use_id)
        try:
            window = session.window(anchor, args.before, args.after, args.preview_chars)
        except ValueError as exc:
            return _error(f"{path}: {exc}")
        text = window.render_preview() if args.render else window.to_json()
    sys.stdout.write(text + "\n")
    return 0


def _archived(locations: list[str], source: str) -> tuple[str, bytes]:
    """The path and bytes of ``source``'s copy in the archives at ``locations`` (or under them):
    from the first that holds it, one that keeps raw copies before a shared one."""
    from cc_analytics.archive.read import open_archives
    from cc_analytics.errors import InputError

    team = open_archives(locations)
    holding = []
    for archive in team.archives:
        try:
            holding.append((archive.manifest.shared, len(holding), archive, archive.record(source)))
        except InputError:
            if len(team.archives) == 1:
                raise
    if not holding:
        where = ", ".join(f"{machine} ({a.root})" for machine, a in zip(team.machines, team.archives, strict=True))
        msg = (
            f"{source!r} is in none of the {len(team.archives)} archives of {where}\n"
            "Hint: give a source_file value of its turns, or the path of its copy in one of them."
        )
        raise InputError(msg)
    _shared, _index, archive, record = min(holding, key=lambda item: item[:2])
    return record.source, archive.raw_bytes(record.source)


def _event_session(session, uuid: str) -> str | None:
    index = session.first_turn.get(uuid)
    if index is None:
        return None
    for event in session.turns[index].events:
        if event.uuid == uuid:
            return event.session_id
    return None


def _stem(path: str) -> str:
    from pathlib import Path

    return Path(path).stem
