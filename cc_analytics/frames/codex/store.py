"""Where Codex writes its rollouts, and which session each rollout belongs to.

Imports: the standard library, ``errors`` and ``frames.sources`` (no Polars: the plugin uses
this module to sniff and plan files). Rules:

* the stores are ``$CODEX_HOME/sessions`` (rollouts in ``YYYY/MM/DD`` folders) and
  ``$CODEX_HOME/archived_sessions``; ``CODEX_HOME`` defaults to ``~/.codex``;
* a rollout's own id is its first ``session_meta``'s ``payload.id``, else the uuid that ends
  its file name (``rollout-<time>-<uuid>.jsonl``), else the file stem;
* a subagent's rollout (its ``session_meta`` names the thread that spawned it:
  ``source.subagent.thread_spawn.parent_thread_id`` or ``payload.parent_thread_id``) belongs
  to the spawning thread's session, as an agent file whose ``agent_id`` is its own id, like
  a Claude Code subagent transcript; every other rollout is the main file of its own session
  (a fork, ``forked_from_id``, is a session of its own);
* ``project_dir`` is the rollout's folder below its store (``2025/12/18``), or
  ``archived_sessions``, else the folder's name.

Only the head of a file is read to tell this (its first line, up to 64 KiB): the keys needed
come before ``base_instructions`` in what Codex writes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from cc_analytics.frames.sources import (
    SNIFF_BYTES,
    Source,
    TranscriptFile,
    expand,
    open_transcript,
    shown,
    source_list,
    walk,
)
from cc_analytics.jsonline import may_be_object

HOME_ENV = "CODEX_HOME"
SESSIONS = "sessions"
ARCHIVED = "archived_sessions"
SUFFIX = ".jsonl"
MAIN = "main"
AGENT_FILE = "agent-file"
FIRST_READ = 8 * 1024
_UUID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")
_DATED = re.compile(r"^[0-9]{4}$")
# Keys of the first line, read from its bytes when the line is longer than the head.
_KEY_TEXT = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*"((?:[^"\\]|\\.){1,200})"')
    for key in ("id", "forked_from_id", "parent_thread_id", "cwd", "model_provider")
}
# Keys that follow ``source`` in a session_meta: once one is in the head, the head is enough.
_PAST_SOURCE = (b'"model_provider"', b'"base_instructions"', b'"thread_source"', b'"git"')


class Header(NamedTuple):
    """What a rollout's first ``session_meta`` says about where it belongs (None: not said)."""

    thread_id: str | None
    forked_from_id: str | None
    parent_thread_id: str | None
    cwd: str | None
    provider: str | None


NO_HEADER = Header(None, None, None, None, None)


def codex_home() -> Path:
    """``$CODEX_HOME`` when set and not blank, else ``~/.codex``."""
    home = os.environ.get(HOME_ENV, "").strip()
    if home:
        return Path(home).expanduser()
    return Path(os.environ.get("HOME") or Path.home()) / ".codex"


def default_stores() -> list[Path]:
    """The two folders Codex writes rollouts to, existing or not.

    Examples:
        >>> import os
        >>> os.environ["CODEX_HOME"] = "/tmp/codex-home"
        >>> [str(p) for p in default_stores()]
        ['/tmp/codex-home/sessions', '/tmp/codex-home/archived_sessions']
        >>> del os.environ["CODEX_HOME"]
    """
    home = codex_home()
    return [home / SESSIONS, home / ARCHIVED]


def header_of(head: bytes) -> Header:
    """The :class:`Header` of a rollout's first bytes (its first line, whole or cut).

    Examples:
        >>> header_of(b'{"timestamp":"t","type":"session_meta","payload":{"id":"a","forked_from_id":"p"}}\\n')
        Header(thread_id='a', forked_from_id='p', parent_thread_id=None, cwd=None, provider=None)
        >>> header_of(b'{"timestamp":"t","type":"session_meta","payload":{"id":"c","source":'
        ...           b'{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":1}}},"base_instr').parent_thread_id
        'p'
    """
    end = head.find(b"\n")
    first = head if end < 0 else head[:end]
    value = None
    if may_be_object(first):
        try:
            value = json.loads(first)
        except ValueError:
            value = None
    if isinstance(value, dict):
        return _header_of_value(value)
    return _header_of_bytes(first)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _header_of_value(value: dict[str, Any]) -> Header:
    payload = value.get("payload")
    if value.get("type") != "session_meta" or not isinstance(payload, dict):
        if "type" not in value and isinstance(value.get("id"), str):  # before the envelope (mid 2025)
            return Header(_text(value.get("id")), None, None, None, None)
        return NO_HEADER
    return Header(
        _text(payload.get("id")),
        _text(payload.get("forked_from_id")),
        spawning_thread(payload),
        _text(payload.get("cwd")),
        _text(payload.get("model_provider")),
    )


def spawning_thread(payload: dict[str, Any]) -> str | None:
    """The thread that spawned a subagent, from a ``session_meta`` payload (None: not a subagent).

    Examples:
        >>> spawning_thread({"source": {"subagent": {"thread_spawn": {"parent_thread_id": "p"}}}})
        'p'
        >>> spawning_thread({"source": "cli"}) is None
        True
    """
    source = payload.get("source")
    if isinstance(source, dict):
        subagent = source.get("subagent")
        if isinstance(subagent, dict):
            spawn = subagent.get("thread_spawn")
            if isinstance(spawn, dict) and _text(spawn.get("parent_thread_id")):
                return str(spawn["parent_thread_id"])
    return _text(payload.get("parent_thread_id"))


def _header_of_bytes(first: bytes) -> Header:
    # A first line longer than the head: its keys as text, only if it is a session_meta.
    top = first[: first.find(b"{", 1)] if first.find(b"{", 1) > 0 else first[:512]
    if re.search(rb'"type"\s*:\s*"session_meta"', top) is None:
        return NO_HEADER
    found: dict[str, str | None] = {}
    for key, pattern in _KEY_TEXT.items():
        match = pattern.search(first)
        text = None
        if match is not None:
            try:
                text = json.loads(b'"' + match.group(1) + b'"')
            except ValueError:
                text = None
        found[key] = _text(text)
    return Header(
        found["id"], found["forked_from_id"], found["parent_thread_id"], found["cwd"], found["model_provider"]
    )


def read_head(path: Path) -> bytes:
    """The first line of a file, or as much of it as ``SNIFF_BYTES`` holds (b"" when unreadable).

    The first ``FIRST_READ`` bytes are enough unless the line goes on and the keys that
    follow ``source`` are not in them yet (an old ``instructions`` text can come first).
    """
    try:
        with open_transcript(path) as handle:
            head = handle.read(FIRST_READ)
            if b"\n" not in head and not any(key in head for key in _PAST_SOURCE):
                head += handle.read(SNIFF_BYTES - len(head))
    except OSError:
        return b""
    return head


def thread_id_of(path: Path) -> str:
    """The id a rollout's file name gives: the uuid its name ends with, else its stem.

    Examples:
        >>> thread_id_of(Path("rollout-2025-12-18T10-00-00-019b2ea4-aaaa-bbbb-cccc-58208e1f0000.jsonl"))
        '019b2ea4-aaaa-bbbb-cccc-58208e1f0000'
        >>> thread_id_of(Path("notes.jsonl"))
        'notes'
    """
    name = path.name
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else path.stem
    match = _UUID.search(stem)
    return match.group(1) if match else stem


def project_dir_of(path: Path) -> str:
    """The folder of a rollout below its store: ``YYYY/MM/DD``, ``archived_sessions``, else the folder's name.

    Examples:
        >>> project_dir_of(Path("/h/.codex/sessions/2025/12/18/rollout-x.jsonl"))
        '2025/12/18'
        >>> project_dir_of(Path("/h/.codex/archived_sessions/rollout-x.jsonl")), project_dir_of(Path("a/b.jsonl"))
        ('archived_sessions', 'a')
    """
    parts = path.parent.parts
    if len(parts) >= 4 and parts[-4] == SESSIONS and _DATED.match(parts[-3]):
        return "/".join(parts[-3:])
    return path.parent.name


def classify(path: Path, *, size: int, head: bytes) -> TranscriptFile:
    """A rollout as the loaders see it, from its path, size and first bytes.

    Examples:
        >>> head = (b'{"timestamp":"t","type":"session_meta","payload":{"id":"c",'
        ...         b'"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}}}\\n')
        >>> file = classify(Path("rollout-x.jsonl"), size=10, head=head)
        >>> file.session_id, file.agent_id, file.layout
        ('p', 'c', 'agent-file')
    """
    header = header_of(head)
    own = header.thread_id if header.thread_id and _safe(header.thread_id) else thread_id_of(path)
    parent = header.parent_thread_id
    project_dir = shown(project_dir_of(path))
    if parent and _safe(parent) and parent != own:
        return TranscriptFile(path, shown(parent), shown(own), AGENT_FILE, project_dir, size)
    return TranscriptFile(path, shown(own), None, MAIN, project_dir, size)


def transcript_file(path: Path, *, size: int | None = None) -> TranscriptFile:
    """:func:`classify` of a file on disk (a file that cannot be read weighs 0 bytes: the read
    that follows reports it), of its first line as the plan read it when it did."""
    from cc_analytics.frames.sources import first_line_read

    if size is None:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
    head = first_line_read(path)
    return classify(path, size=size, head=read_head(path) if head is None else head)


def _safe(identifier: str) -> bool:
    from cc_analytics.frames.plugin import is_safe_id

    return is_safe_id(identifier)


def ordered(files: Iterable[TranscriptFile]) -> list[TranscriptFile]:
    """Files grouped by session (the batch engine never splits a run of one session), the main
    file first, then by path."""
    return sorted(files, key=lambda f: (f.session_id, f.is_subagent, str(f.path)))


def store_paths(stores: Sequence[Path]) -> list[Path]:
    """The ``*.jsonl`` files under existing stores, sorted; a Codex home given as a store
    stands for its two stores (it also holds ``history.jsonl``, which is no rollout)."""
    roots: list[Path] = []
    for store in stores:
        inner = [root for root in (store / SESSIONS, store / ARCHIVED) if root.is_dir()]
        roots.extend(inner or [store])
    return walk([root for root in roots if root.is_dir()])


def _source_paths(item: str | os.PathLike[str]) -> list[Path]:
    text = os.path.expanduser(os.fspath(item))
    if os.path.isdir(text) and any((Path(text) / name).is_dir() for name in (SESSIONS, ARCHIVED)):
        return store_paths([Path(text)])
    return expand(item)


def resolve(source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
    """The rollouts of a file, a folder (searched recursively; a Codex home: its two stores),
    a glob, TranscriptFiles, or a list of these, grouped by session; None: the default stores.

    ``planned``: ``source`` is a list of rollout paths already expanded and told apart.

    Examples:
        >>> resolve([])
        []
    """
    if source is None:
        paths = store_paths(default_stores())
    elif planned:  # told apart by their real paths already (frames.sources.split_by_format)
        return ordered(transcript_file(Path(p)) for p in source)  # type: ignore[arg-type, union-attr]
    else:
        files: list[TranscriptFile] = []
        paths = []
        for item in source_list(source):
            if isinstance(item, TranscriptFile):
                files.append(item)
            else:
                paths.extend(_source_paths(item))
        seen = {str(f.path) for f in files}
        files.extend(transcript_file(p) for p in _unique(paths) if str(p) not in seen)
        return ordered(files)
    return ordered(transcript_file(p) for p in _unique(paths))


def _unique(paths: Iterable[Path]) -> list[Path]:
    from cc_analytics.frames.sources import RealPaths

    real = RealPaths()
    seen: set[str] = set()
    out = []
    for path in paths:
        key = real(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def find_session(session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
    """The rollouts of session ``session_id`` in ``stores`` (None: the default stores): its
    main rollout and the rollouts of the subagents it spawned."""
    return [
        f for f in resolve(_unique(store_paths(stores or default_stores())), planned=True) if f.session_id == session_id
    ]


def latest_session(stores: Sequence[Path] | None = None) -> tuple[float, str] | None:
    """(modification time, id) of the session whose main rollout was written last, if any.

    Files are taken newest first and only their heads are read, until a main rollout is found.
    """
    stamped: list[tuple[float, str]] = []
    for text in map(str, store_paths(stores or default_stores())):
        try:
            stamped.append((os.stat(text).st_mtime, text))
        except OSError:
            continue
    for mtime, text in sorted(stamped, reverse=True):
        file = transcript_file(Path(text))
        if not file.is_subagent:
            return mtime, file.session_id
    return None
