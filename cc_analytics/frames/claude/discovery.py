"""Where Claude Code transcripts are: config roots, explicit sources, subagent layouts.

Imports: the standard library and ``frames.sources`` (which expands sources). Nothing here writes anywhere;
the only reads are directory listings and, for files whose name does not say which session
they belong to, the first few lines.

Layouts recognised (spec ``claude-code-jsonl.md``):

* ``<project>/<session-id>.jsonl``: a main session;
* ``<project>/<session-id>/subagents/agent-<agent-id>.jsonl``: a subagent (Claude Code ≥ 2.1.2);
* ``<project>/agent-<agent-id>.jsonl``: a subagent of an earlier version, beside its session;
* sidechain lines inside a main file (older still) are found by the line decoder.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from cc_analytics.frames.sources import (
    SUFFIX,
    RealPaths,
    Source,
    TranscriptFile,
    expand,
    file_size,
    read_transcript,
    shown,
    walk,
)

CONFIG_ENV = "CLAUDE_CONFIG_DIR"
DEFAULT_CONFIG = Path("~/.claude")
PROJECTS = "projects"
PEEK_BYTES = 1 << 16
PEEK_LINES = 16

UUID_STEM = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
AGENT_STEM = re.compile(r"^agent-(.+)$")
SESSION_ID_FIELD = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')


def default_roots() -> list[Path]:
    """The projects folders to scan: ``$CLAUDE_CONFIG_DIR`` (comma-separated) or ``~/.claude``.

    Examples:
        >>> import os
        >>> os.environ["CLAUDE_CONFIG_DIR"] = "/a,/b/"
        >>> [str(p) for p in default_roots()]
        ['/a/projects', '/b/projects']
        >>> del os.environ["CLAUDE_CONFIG_DIR"]
    """
    configured = os.environ.get(CONFIG_ENV, "")
    dirs = [part.strip() for part in configured.split(",") if part.strip()]
    if not dirs:
        return [DEFAULT_CONFIG.expanduser() / PROJECTS]
    return [Path(d).expanduser() / PROJECTS for d in dirs]


def discover(sources: Sequence[str | os.PathLike[str]] | None = None) -> list[TranscriptFile]:
    """Every transcript under ``sources`` (files, folders, globs); default roots when None.

    Folders are searched recursively for ``*.jsonl`` files (a directory named ``x.jsonl`` is
    not a transcript; a broken link, a link loop or a FIFO named so is kept, and reported by
    the loader as a file it cannot read). A source that does not exist raises
    :class:`~cc_analytics.errors.InputError`, except default roots that are simply absent. The result is sorted
    by session, main file first, then path.
    """
    if sources is None:
        paths = walk(root for root in default_roots() if root.is_dir())
    else:
        paths = []
        for source in sources:
            paths.extend(expand(source))
    seen: set[str] = set()
    real = RealPaths()
    unique: list[Path] = []
    for path in paths:
        key = real(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return classified(unique)


def classified(paths: Iterable[Path]) -> list[TranscriptFile]:
    """The transcripts at ``paths`` (each a different file), in :func:`discover`'s order."""
    files = [classify(path) for path in paths]
    files.sort(key=lambda f: (f.session_id, f.is_subagent, str(f.path)))
    return files


def classify(path: Path, *, size: int | None = None, head: bytes | None = None) -> TranscriptFile:
    """Session id, agent id and layout of one transcript path (peeking at its lines if needed).

    ``size`` and ``head`` (the file's first bytes), when the caller has them (object storage,
    an archive), stand for a stat and a peek at the file.
    """
    stem = shown(path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem)
    parent = path.parent
    size = file_size(path) if size is None else size

    def peek() -> str | None:
        return peek_session_id(path) if head is None else session_id_in(head)

    agent = AGENT_STEM.match(stem)
    if agent and parent.name == "subagents" and parent.parent.name:
        session_dir = parent.parent
        project = shown(session_dir.parent.name)
        return TranscriptFile(path, shown(session_dir.name), agent.group(1), "subagents-dir", project, size)
    if agent:
        session = peek() or stem
        return TranscriptFile(path, session, agent.group(1), "agent-file", shown(parent.name), size)
    if UUID_STEM.match(stem):
        return TranscriptFile(path, stem, None, "main", shown(parent.name), size)
    return TranscriptFile(path, peek() or stem, None, "main", shown(parent.name), size)


def peek_session_id(path: Path) -> str | None:
    """The first ``sessionId`` written in the first lines of ``path``, if any."""
    try:
        head = read_transcript(path, PEEK_BYTES)
    except OSError:
        return None
    return session_id_in(head)


def session_id_in(head: bytes) -> str | None:
    """The first ``sessionId`` written in the first lines of a file's first bytes, if any."""
    for line in head[:PEEK_BYTES].split(b"\n")[:PEEK_LINES]:
        found = SESSION_ID_FIELD.search(line)
        if found:
            try:
                return found.group(1).decode("utf-8")
            except UnicodeDecodeError:
                continue
    return None


def find_session(session_id: str, roots: Iterable[Path] | None = None) -> list[TranscriptFile]:
    """The files of one session (main and subagents) under ``roots`` (default roots if None)."""
    if not session_id or "/" in session_id or "\\" in session_id or ".." in session_id:
        return []
    roots = list(roots) if roots is not None else default_roots()
    found: list[TranscriptFile] = []
    for root in roots:
        if not root.is_dir():
            continue
        for main in root.glob(f"*/{glob.escape(session_id)}{SUFFIX}"):
            if main.is_file():
                found.append(classify(main))
                found.extend(classify(p) for p in walk([main.with_suffix("")]))
        for old_agent in root.glob(f"*/agent-*{SUFFIX}"):
            if old_agent.is_file() and peek_session_id(old_agent) == session_id:
                found.append(classify(old_agent))
    unique = {f.path.resolve(): f for f in found if f.session_id == session_id}
    return sorted(unique.values(), key=lambda f: (f.is_subagent, str(f.path)))


def session_files(main: Path, *, peeked: dict[str, str | None] | None = None) -> list[TranscriptFile]:
    """The files of the session whose main transcript is ``main``: itself, its
    ``<session>/subagents/`` files and the older ``agent-*.jsonl`` files beside it that name
    its session, in :func:`discover`'s order (what loading its folder gives for this session).

    ``peeked`` maps an older agent file's path to the session id found in its first lines; it
    is read and filled, so that a caller who keeps it peeks at each such file once.

    Examples:
        >>> import tempfile, pathlib
        >>> project = pathlib.Path(tempfile.mkdtemp())
        >>> main = project / "3f2a9c1e-0b7d-4c4e-9a51-1d2e3f4a5b6c.jsonl"
        >>> _ = main.write_text("")
        >>> (project / main.stem / "subagents").mkdir(parents=True)
        >>> _ = (project / main.stem / "subagents" / "agent-a1.jsonl").write_text("")
        >>> _ = (project / "agent-b2.jsonl").write_text('{"sessionId":"someone-else"}\\n')
        >>> [(f.layout, f.agent_id) for f in session_files(main)]
        [('main', None), ('subagents-dir', 'a1')]
    """
    own = classify(main)
    found = [own, *(classify(path) for path in walk([main.with_suffix("")]))]
    for path in sorted(main.parent.glob(f"agent-*{SUFFIX}")):
        known = peeked.get(str(path)) if peeked is not None else None
        session = known or peek_session_id(path)
        if peeked is not None and session is not None:
            peeked[str(path)] = session  # the first lines of a transcript never change
        if (session or path.name[: -len(SUFFIX)]) == own.session_id:
            found.append(classify(path, head=f'"sessionId":"{session}"'.encode() if session else b""))
    mine = [f for f in found if f.session_id == own.session_id]
    return sorted(mine, key=lambda f: (f.is_subagent, str(f.path)))


def resolve(source: Source, *, planned: bool = False) -> list[TranscriptFile]:
    """Transcript files of ``source``: None (default roots), a path, glob, or a list of them.

    A list of ``TranscriptFile`` is taken as it is. ``planned``: ``source`` is a list of
    transcript paths already expanded and told apart (what ``frames.sources.split_by_format``
    gives), taken without looking for them again.
    """
    if planned:
        return classified(source)  # type: ignore[arg-type]
    if source is None:
        return discover(None)
    if isinstance(source, str | os.PathLike):
        return discover([source])
    items = list(source)
    if items and all(isinstance(item, TranscriptFile) for item in items):
        return items  # type: ignore[return-value]
    return discover(items)  # type: ignore[arg-type]
