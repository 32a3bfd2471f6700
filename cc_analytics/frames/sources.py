"""Transcript files as every loader sees them, whatever their format, and telling formats apart.

Imports: the standard library and ``cc_analytics.errors`` only. A source is a file, a folder
(searched recursively for ``*.jsonl``), a glob, or a list of these; which format a file holds
is read from its first lines, never from where it lies.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from cc_analytics.errors import InputError

SUFFIX = ".jsonl"
GLOB_CHARS = frozenset("*?[")
SNIFF_LINES = 8
SNIFF_BYTES = 1 << 16
SNIFF_FIRST_READ = 1 << 12
CLAUDE = "claude-code"
CHAINLESS = "chainlesschain"


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One transcript file and the session it belongs to.

    ``session_id`` is the main session the file counts towards (the parent's id for a
    Claude Code subagent file; the file stem of a ChainlessChain transcript); ``agent_id``
    is set for subagent files; ``layout`` is ``"main"``, ``"subagents-dir"`` or
    ``"agent-file"``; ``size`` is in bytes, as the batch engine weighs files.
    """

    path: Path
    session_id: str
    agent_id: str | None
    layout: str
    project_dir: str
    size: int

    @property
    def is_subagent(self) -> bool:
        return self.layout != "main"


Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[TranscriptFile] | None


def sniff_format(path: Path) -> str:
    """``"chainlesschain"`` when the first JSON object line has a numeric ``timestamp`` and a
    ``data`` key (ChainlessChain's event envelope), else ``"claude-code"``, whose loader
    reports whatever it cannot read.

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        >>> _ = path.write_text('{"type":"session_start","timestamp":1,"data":{}}\\n')
        >>> sniff_format(path)
        'chainlesschain'
        >>> _ = path.write_text('{"type":"summary","summary":"t","leafUuid":"u"}\\n')
        >>> sniff_format(path)
        'claude-code'
    """
    try:
        with path.open("rb") as handle:
            value = _first_object(handle)
    except OSError:
        return CLAUDE
    if isinstance(value, dict):
        stamp = value.get("timestamp")
        numeric = isinstance(stamp, int | float) and not isinstance(stamp, bool)
        return CHAINLESS if numeric and "data" in value else CLAUDE
    return CLAUDE


def _first_object(handle: BinaryIO) -> dict[str, object] | None:
    """The first JSON object among the first ``SNIFF_LINES`` lines of the first ``SNIFF_BYTES``
    (the last of them possibly cut there), reading no further than the lines looked at."""
    head = b""
    start = 0
    for _ in range(SNIFF_LINES):
        end = head.find(b"\n", start)
        while end < 0 and len(head) < SNIFF_BYTES:
            more = handle.read(min(max(len(head), SNIFF_FIRST_READ), SNIFF_BYTES - len(head)))
            if not more:
                break
            head += more
            end = head.find(b"\n", start)
        last = end < 0
        line = head[start:] if last else head[start:end]
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        if last:
            return None
        start = end + 1
    return None


def expand(source: str | os.PathLike[str]) -> list[Path]:
    """The ``*.jsonl`` regular files of one source (file, folder searched recursively, or glob).

    A source that matches nothing raises :class:`InputError`.
    """
    text = os.fspath(source)
    path = Path(text).expanduser()
    if path.is_dir():
        return walk([path])
    if path.is_file():
        return [path]
    if GLOB_CHARS.intersection(text):
        out: list[Path] = []
        for match in sorted(Path(p) for p in glob.glob(os.path.expanduser(text), recursive=True)):
            out.extend(walk([match]) if match.is_dir() else [match] if match.is_file() else [])
        return out
    msg = f"no such file or folder: {text!r}\nHint: pass transcript files, folders or globs."
    raise InputError(msg)


def walk(roots: Iterable[Path]) -> list[Path]:
    """Every ``*.jsonl`` regular file under ``roots`` (symlinked folders are not followed), sorted."""
    out: list[Path] = []
    for root in roots:
        if not root.is_dir():
            continue
        folders = [os.fspath(root)]
        while folders:
            try:
                entries = list(os.scandir(folders.pop()))
            except OSError:
                continue
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if not entry.is_symlink():
                        folders.append(entry.path)
                elif entry.name.endswith(SUFFIX) and entry.is_file():
                    out.append(Path(entry.path))
    out.sort()
    return out


class RealPaths:
    """``path.resolve()`` of many files, resolving each folder once (a file that is not a
    symlink resolves to its resolved folder joined with its name)."""

    def __init__(self) -> None:
        self._folders: dict[Path, Path] = {}

    def __call__(self, path: Path) -> Path:
        if path.is_symlink():
            return path.resolve()
        folder = self._folders.get(path.parent)
        if folder is None:
            folder = self._folders[path.parent] = path.parent.resolve()
        return folder / path.name


def split_by_format(source: Source) -> dict[str, list[Path]]:
    """The files of ``source`` grouped by the format their content shows (see :func:`sniff_format`)."""
    items: Sequence[object] = [source] if isinstance(source, str | os.PathLike) else list(source or [])
    out: dict[str, list[Path]] = {CLAUDE: [], CHAINLESS: []}
    seen: set[Path] = set()
    real = RealPaths()
    for item in items:
        paths = [item.path] if isinstance(item, TranscriptFile) else expand(item)  # type: ignore[arg-type]
        for path in paths:
            key = real(path)
            if key not in seen:
                seen.add(key)
                out[sniff_format(path)].append(path)
    return out
