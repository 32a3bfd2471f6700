"""The fuzz targets: what to call, on which inputs, and which outcomes are documented.

A :class:`Target` pairs a hypothesis strategy with a function that pushes one input
through the code under test and checks the invariants that must hold when it returns.
Raising one of the target's ``documented`` exceptions (with a message of the documented
form) is fine, and so is a warning of the documented form; anything else is a finding.
:func:`check` classifies one run; ``test_fuzz_core.py`` runs every target a little and
``run_long.py`` runs one a lot. Register a new target with :func:`register`.
"""

from __future__ import annotations

import json
import re
import tempfile
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from cc_analytics.core import (
    Budget,
    ContextWindow,
    SchemaError,
    TranscriptWarning,
    canonical_json,
    capture_window,
    capture_windows,
    compact_json,
)
from cc_analytics.core.jsontext import MISSING, TOO_DEEP, _decode, _decode_any_depth, decode_line
from tests.fuzz import mutations

SOURCE = "fuzz.jsonl"
NOT_FOUND = re.compile(r"anchor .* not found in session .*", re.DOTALL)
WINDOW_MESSAGE = re.compile(
    r"(expected schema 'cc-transcript\.context/2', got: |expected preview schema 'cc-transcript\.preview/1', got: "
    r"|unknown preview kind: |window[.\[:])",
    re.DOTALL,
)
LINE_WARNING = re.compile(rf"{re.escape(SOURCE)}:[1-9][0-9]*: ", re.DOTALL)


@dataclass(frozen=True)
class Target:
    """One fuzz target.

    ``run`` raises only the ``documented`` exceptions (type, message pattern matched at the
    start) and emits only warnings of ``warning_category`` whose message matches
    ``warning``; an AssertionError from ``run`` is a broken invariant.
    """

    name: str
    inputs: st.SearchStrategy
    run: Callable[[Any], None]
    documented: tuple[tuple[type[BaseException], re.Pattern], ...] = ()
    warning_category: type[Warning] | None = None
    warning: re.Pattern | None = None
    group: str = "core"
    notes: str = field(default="", compare=False)


TARGETS: dict[str, Target] = {}


def register(target: Target) -> Target:
    TARGETS[target.name] = target
    return target


@dataclass(frozen=True)
class Finding:
    """An undocumented outcome: its kind, a one-line summary and where it was raised."""

    kind: str
    summary: str
    where: str

    @property
    def signature(self) -> tuple[str, str]:
        return (self.summary.split(":", 1)[0], self.where)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "cc_analytics" in f.filename] or frames
    last = ours[-1] if ours else None
    return f"{Path(last.filename).name}:{last.lineno} in {last.name}" if last else "?"


def check(target: Target, value: Any) -> Finding | None:
    """Run ``target`` on one input; None when everything that happened is documented."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            target.run(value)
        # The harness must classify every exception the code under test lets out, whatever its type.
        except Exception as exc:
            for kind, pattern in target.documented:
                if isinstance(exc, kind) and pattern.match(str(exc)):
                    break
            else:
                return Finding("exception", f"{type(exc).__name__}: {str(exc)[:200]}", _where(exc))
    for item in caught:
        category_ok = target.warning_category is not None and issubclass(item.category, target.warning_category)
        if not (category_ok and target.warning is not None and target.warning.match(str(item.message))):
            where = f"{Path(item.filename).name}:{item.lineno}"
            return Finding("warning", f"{item.category.__name__}: {str(item.message)[:200]}", where)
    return None


# -- core: the line decoder ---------------------------------------------------------------


def run_decode_line(line: bytes) -> None:
    value = decode_line(line)
    if value is MISSING or value is TOO_DEEP:
        return
    compact_json(value)
    canonical_json(value, lenient=True)
    try:  # where the C decoder manages, the any-depth decoder must build the very same value
        fast = _decode(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return
    slow = _decode_any_depth(line.decode("utf-8"))
    # compared as text: ``==`` recurses, and the C decoder may just have fit under the limit
    assert compact_json(fast) == compact_json(slow), "decoders disagree"


register(
    Target(
        "core.decode_line",
        mutations.lines(),
        run_decode_line,
        notes="cc_analytics.core.jsontext.decode_line, then compact and canonical JSON of what it read",
    )
)


# -- core: capture ------------------------------------------------------------------------


def _window_round_trip(window: ContextWindow) -> None:
    text = window.to_json()
    back = ContextWindow.from_json(text)
    assert back == window and back.to_json() == text, "from_json(to_json(w)) != w"
    window.render_preview(budget=Budget())


def run_capture(case: tuple[bytes, list, dict]) -> None:
    raw, anchors, options = case
    windows = capture_windows(raw, anchors, source=SOURCE, **options)
    assert len(windows) == len(anchors)
    for window in windows:
        _window_round_trip(window)
    _window_round_trip(capture_window(raw, anchors[0], source=SOURCE, **options))


register(
    Target(
        "core.capture",
        mutations.transcripts(),
        run_capture,
        documented=((ValueError, NOT_FOUND),),
        warning_category=TranscriptWarning,
        warning=LINE_WARNING,
        notes="capture_windows and capture_window on mutated transcripts; every window round-trips and renders",
    )
)


# -- core: the wire format ----------------------------------------------------------------


def run_from_json(doc: str | bytes) -> None:
    window = ContextWindow.from_json(doc)
    _window_round_trip(window)
    window.render_preview(budget=Budget(turn_chars=-1))
    window.render_preview(budget=Budget(turn_chars=0))


register(
    Target(
        "core.from_json",
        mutations.window_documents(),
        run_from_json,
        documented=((json.JSONDecodeError, re.compile("")), (SchemaError, WINDOW_MESSAGE)),
        notes="ContextWindow.from_json -> to_json -> from_json -> render_preview on mutated golden windows",
    )
)


# -- frames: the Claude Code loaders, through their public names only ---------------------


def run_frames(case: tuple[bytes, list, dict]) -> None:
    import cc_analytics.frames as frames

    raw = case[0]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "0b7e5c1a-7d2e-4c1b-9a55-2f0e8d3c4a10.jsonl"
        path.write_bytes(raw)
        frames.read_events(path)
        frames.read_turns(path)
        frames.problems(path)


register(
    Target(
        "frames.claude",
        mutations.transcripts(),
        run_frames,
        group="frames",
        notes="cc_analytics.frames.read_events, read_turns and problems on a mutated transcript file",
    )
)
