"""The ChainlessChain session store: where transcripts live, which ids are safe, which are live.

Imports: orjson, the standard library, ``errors`` and ``frames.sources``. Rules follow
``cc-context.md`` §2: one ``<id>.jsonl`` per session in ``$CHAINLESSCHAIN_HOME/sessions``
(else ``~/.chainlesschain/sessions``); a transcript is deleted when a ``<id>.tombstone`` sits
beside it or its ``<id>.meta.json`` says ``"deleted": true``; an id with ``/``, ``\\`` or
``..`` is never looked up. Nothing here writes to the store.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from cc_analytics.errors import InputError
from cc_analytics.frames.sources import Source, TranscriptFile, read_transcript, shown

TRANSCRIPT_SUFFIX = ".jsonl"
MAIN = "main"


def default_sessions_dir() -> Path:
    """``$CHAINLESSCHAIN_HOME/sessions`` when set, else ``~/.chainlesschain/sessions``."""
    home = os.environ.get("CHAINLESSCHAIN_HOME")
    if home:
        return Path(home) / "sessions"
    return Path(os.environ.get("HOME") or Path.home()) / ".chainlesschain" / "sessions"


def is_safe_id(session_id: str) -> bool:
    """Whether an id may be used as a file stem: non-empty, no ``/``, ``\\`` or ``..``.

    Examples:
        >>> is_safe_id("notes..v2"), is_safe_id("a/b"), is_safe_id("typical-ollama-qwen")
        (False, False, True)
    """
    return bool(session_id) and "/" not in session_id and "\\" not in session_id and ".." not in session_id


def is_deleted(transcript: Path) -> bool:
    """A transcript is deleted when a ``.tombstone`` sits beside it or its ``.meta.json`` says so."""
    stem = transcript.name[: -len(TRANSCRIPT_SUFFIX)]
    if transcript.with_name(stem + ".tombstone").exists():
        return True
    meta = transcript.with_name(stem + ".meta.json")
    try:
        document = orjson.loads(read_transcript(meta))
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(document, dict) and document.get("deleted") is True


def session_path(session_id: str, sessions_dir: Path | None = None) -> Path | None:
    """The live transcript of ``session_id`` in the store, or None (unsafe id, missing, deleted)."""
    if not is_safe_id(session_id):
        return None
    path = (sessions_dir or default_sessions_dir()) / (session_id + TRANSCRIPT_SUFFIX)
    if not path.is_file() or is_deleted(path):
        return None
    return path


def live_transcripts(sessions_dir: Path | None = None) -> list[Path]:
    """Every live ``<id>.jsonl`` in the store, sorted by id; an absent store has none.

    A store that exists but cannot be listed raises :class:`InputError`.
    """
    folder = sessions_dir or default_sessions_dir()
    try:
        entries = sorted(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        msg = f"cannot list the sessions folder {str(folder)!r}: {exc.strerror or exc}"
        raise InputError(msg) from None
    return [p for p in entries if p.name.endswith(TRANSCRIPT_SUFFIX) and p.is_file() and not is_deleted(p)]


def session_id_of(path: Path) -> str:
    """The session id of a transcript: its file name without ``.jsonl``.

    Examples:
        >>> session_id_of(Path("sessions/a.b.jsonl"))
        'a.b'
    """
    name = path.name
    return name[: -len(TRANSCRIPT_SUFFIX)] if name.endswith(TRANSCRIPT_SUFFIX) else path.stem


def transcript_file(path: Path, *, size: int | None = None) -> TranscriptFile:
    """A transcript as the loaders see it; its project folder is the store folder's name.

    A file that cannot be stat'ed weighs 0 bytes: reading it later reports the problem.
    ``size``, when the caller knows it (object storage, an archive), stands for the stat.
    """
    if size is None:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
    return TranscriptFile(path, shown(session_id_of(path)), None, MAIN, shown(path.parent.name), size)


def resolve(source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
    """Live transcripts of a file, a folder (its ``*.jsonl``), a glob, TranscriptFiles, or a list.

    ``None`` means the default store. A deleted transcript (tombstone or ``.meta.json``) is
    no session however it is named; a path that does not exist raises InputError.
    ``planned``: ``source`` is a list of transcript paths already expanded and told apart.

    Examples:
        >>> resolve([])
        []
    """
    if planned:  # transcript paths already expanded and told apart (frames.sources.split_by_format)
        return [transcript_file(p) for p in source if not is_deleted(p)]  # type: ignore[arg-type, union-attr]
    if source is None:
        return [transcript_file(p) for p in live_transcripts()]
    items = [source] if isinstance(source, str | os.PathLike | TranscriptFile) else list(source)
    files: list[TranscriptFile] = []
    for item in items:
        if isinstance(item, TranscriptFile):
            files.append(item)
            continue
        files.extend(transcript_file(p) for p in _paths(item) if not is_deleted(p))
    return files


def _paths(item: str | os.PathLike[str]) -> list[Path]:
    path = Path(item)
    text = str(item)
    # What exists is taken as named: "[x].jsonl" is a transcript, not a pattern matching "x.jsonl".
    if path.is_dir():
        return live_transcripts(path)
    if path.is_file():
        return [path]
    if any(ch in text for ch in "*?["):
        anchor = Path(path.anchor or ".")
        pattern = str(path.relative_to(anchor)) if path.is_absolute() else text
        return sorted(p for p in anchor.glob(pattern) if p.name.endswith(TRANSCRIPT_SUFFIX) and p.is_file())
    msg = f"no such transcript or folder: {text!r}\nHint: pass a <id>.jsonl file or a sessions folder."
    raise InputError(msg)
