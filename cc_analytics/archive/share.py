"""What a shared archive (``archive --share``) holds: the tables without text, paths as pseudonyms.

Imports: polars and the standard library. A shared archive is meant for a team's bucket: its
tables keep tokens, times, models, tool names, sizes, costs and the problems' kinds, and drop
what people wrote or tools printed (the turns' ``prompt``; a problem's quoted text); project
paths, project folders and source files become stable pseudonyms (the same path gives the
same pseudonym on every run and every machine) unless ``keep_paths``. It keeps no raw copy,
and its manifest names each file by the pseudonym of its path, so nothing in the archive spells
a path. A pseudonym is a digest, not a cipher: it hides a path from whoever cannot guess it
(someone who can may check a guess).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

PROJECT_COLUMNS = ("project", "project_dir")
FILE_COLUMNS = ("source_file",)
TEXT_COLUMNS = ("prompt",)  # what someone wrote, as the turns keep it
REASON = "reason"


def pseudonym(kind: str, text: str) -> str:
    """A stable pseudonym of a path: ``kind`` and 12 hex digits of its SHA-256.

    Examples:
        >>> pseudonym("project", "/home/anna/webshop")
        'project-bd4059418dfc'
        >>> pseudonym("project", "/home/anna/webshop") == pseudonym("project", "/home/anna/webshop")
        True
    """
    return f"{kind}-{hashlib.sha256(text.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def file_key(source: str) -> str:
    """The name a shared archive's manifest (and ``source_file`` columns) give a source file.

    Examples:
        >>> file_key("/home/anna/.claude/projects/-home-anna-webshop/s.jsonl")
        'file-a5146a4ed9cb.jsonl'
    """
    return pseudonym("file", source) + ".jsonl"


def redact(frame: pl.DataFrame, *, keep_paths: bool) -> pl.DataFrame:
    """A table as a shared archive keeps it: no text, and (unless ``keep_paths``) pseudonyms for paths.

    Examples:
        >>> import polars as pl
        >>> turns = pl.DataFrame({"source_file": ["/h/a/s.jsonl"], "prompt": ["my secret plan"], "input_tokens": [5]})
        >>> redact(turns, keep_paths=False).row(0)
        ('file-c13e49bf15fd.jsonl', None, 5)
        >>> problems = pl.DataFrame({"reason": ["invalid JSON: unexpected 'my text' at 4"]})
        >>> redact(problems, keep_paths=True).item()
        'invalid JSON'
    """
    import polars as pl

    changes = [pl.lit(None, frame.schema[name]).alias(name) for name in TEXT_COLUMNS if name in frame.columns]
    if REASON in frame.columns:  # the kind of problem, not the text it quotes
        changes.append(pl.col(REASON).str.split(":").list.first().str.replace_all(r"'[^']*'|\"[^\"]*\"", "…"))
    if not keep_paths:
        for name in PROJECT_COLUMNS:
            if name in frame.columns:
                changes.append(_mapped(frame, name, lambda value: pseudonym("project", value)))
        for name in FILE_COLUMNS:
            if name in frame.columns:
                changes.append(_mapped(frame, name, file_key))
    return frame.with_columns(changes) if changes else frame


def _mapped(frame: pl.DataFrame, name: str, how: object) -> pl.Expr:
    """``name`` with each distinct value replaced (a few distinct paths per batch: a mapping, not a row loop)."""
    import polars as pl

    values = frame[name].drop_nulls().unique().to_list()
    mapping = {value: how(value) for value in values}  # type: ignore[operator]
    return pl.col(name).replace_strict(mapping, default=None, return_dtype=pl.String)
