"""Golden-file helpers shared by the conformance tests (no pytest here, so scripts can use it)."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cc_analytics.core import Budget, EventRef, Session, capture_windows, hydrate_windows
from tests.paths import SHARED

REPO = Path(__file__).resolve().parents[2]
SHARED_CLAUDE = SHARED / "data" / "claude"
OWN_CLAUDE = REPO / "tests" / "golden" / "claude"
NOT_FOUND_PREFIX = "ValueError: anchor "


@dataclass(frozen=True)
class Golden:
    corpus: Path
    golden: str
    transcript: str

    @property
    def path(self) -> Path:
        return self.corpus / "expected" / self.golden

    @property
    def transcript_path(self) -> Path:
        return self.corpus / self.transcript

    def records(self) -> list[dict]:
        with open(self.path, "rb") as handle:
            return [json.loads(line) for line in handle if line.strip()]


def manifest(corpus: Path, name: str = "MANIFEST.tsv") -> list[Golden]:
    path = corpus / "expected" / name
    if not path.is_file():
        return []
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    return [Golden(corpus, *row.split("\t")[:2]) for row in rows if row.strip()]


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def default_session(raw: bytes, stem: str) -> str:
    """The file's most common string sessionId (first seen on a tie), else the file stem."""
    counts: Counter[str] = Counter()
    for line in raw.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
            counts[value["sessionId"]] += 1
    return counts.most_common(1)[0][0] if counts else stem


def layout_root(raw: bytes, stem: str) -> tempfile.TemporaryDirectory:
    """A projects root holding only this transcript, laid out as the oracle does."""
    tmp = tempfile.TemporaryDirectory(prefix="cc-hydrate-")
    session = default_session(raw, stem)
    project = Path(tmp.name) / "oracle-project"
    project.mkdir()
    if session and session not in (".", "..") and not any(c in session for c in "/\\\0"):
        (project / f"{session}.jsonl").write_bytes(raw)
    return tmp


@dataclass
class Mismatch:
    golden: str
    index: int
    field: str
    expected: object
    got: object

    def __str__(self) -> str:
        return f"{self.golden} #{self.index} {self.field}:\n  expected {self.expected!r:.600}\n  got      {self.got!r:.600}"


def check_golden(golden: Golden) -> tuple[int, list[Mismatch]]:
    """Compare every record of one golden; returns (records compared, mismatches)."""
    raw = golden.transcript_path.read_bytes()
    records = golden.records()
    mismatches: list[Mismatch] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lenient = Session(raw, source=golden.transcript)
    try:
        strict: Session | BaseException = Session(raw, strict=True)
    except (KeyError, ValueError, OverflowError) as exc:
        strict = exc
    windows = []
    for i, rec in enumerate(records):
        a = rec["anchor"]
        anchor = EventRef(a["session_id"], a["event_uuid"], a["tool_use_id"])
        p = rec["params"]
        args = (anchor, p["before"], p["after"], p["preview_chars"])
        expected_error = rec["error"]
        window = None
        if isinstance(strict, BaseException):
            got_error = describe(strict)
        else:
            try:
                window = strict.window(*args)
                got_error = None
            except (KeyError, ValueError, OverflowError) as exc:
                got_error = describe(exc)
        if expected_error and expected_error.startswith("PanicException: "):
            expected_error = "DigestError: " + expected_error.removeprefix("PanicException: ")
        if got_error != expected_error:
            mismatches.append(Mismatch(golden.golden, i, "error", expected_error, got_error))
        # the lenient capture never fails on malformed input; only unknown anchors raise
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lenient_window = lenient.window(*args)
        except ValueError as exc:
            lenient_window = None
            if not str(exc).startswith("anchor "):
                mismatches.append(Mismatch(golden.golden, i, "lenient", "a window", describe(exc)))
            elif expected_error is None:
                mismatches.append(Mismatch(golden.golden, i, "lenient", rec["window"], describe(exc)))
        if expected_error is None and lenient_window is not None and window is not None:
            if lenient_window.to_json() != rec["window"]:
                mismatches.append(Mismatch(golden.golden, i, "lenient window", rec["window"], lenient_window.to_json()))
        windows.append(window)
        if rec["window"] is None:
            continue
        got = None if window is None else window.to_json()
        if got != rec["window"]:
            mismatches.append(Mismatch(golden.golden, i, "window", rec["window"], got))
            continue
        preview = window.render_preview(budget=Budget())
        if preview != rec["preview"]:
            mismatches.append(Mismatch(golden.golden, i, "preview", rec["preview"], preview))
        parsed = type(window).from_json(rec["window"])
        if parsed != window:
            mismatches.append(Mismatch(golden.golden, i, "from_json ==", window, parsed))
        if parsed.to_json() != rec["window"]:
            mismatches.append(Mismatch(golden.golden, i, "to_json(from_json)", rec["window"], parsed.to_json()))
    if "hydrated_render" in (records[0] if records else {}):
        with layout_root(raw, golden.transcript_path.stem) as root:
            present = [(i, w) for i, w in enumerate(windows) if w is not None]
            hydrated = hydrate_windows([w for _, w in present], root=root)
        renders: list[str | None] = [None] * len(records)
        for (i, _), h in zip(present, hydrated, strict=True):
            renders[i] = None if h is None else h.render(budget=Budget())
        for i, rec in enumerate(records):
            if renders[i] != rec["hydrated_render"]:
                mismatches.append(Mismatch(golden.golden, i, "hydrated_render", rec["hydrated_render"], renders[i]))
    return len(records), mismatches


def check_batch_golden(golden: Golden) -> tuple[int, list[Mismatch]]:
    """Compare every capture_windows() record of one batch golden (strict parsing)."""
    raw = golden.transcript_path.read_bytes()
    mismatches = []
    records = golden.records()
    for i, rec in enumerate(records):
        anchors = [EventRef(a["session_id"], a["event_uuid"], a["tool_use_id"]) for a in rec["batch"]]
        try:
            got = [w.to_json() for w in capture_windows(raw, anchors, strict=True, **rec["params"])]
            error = None
        except (KeyError, ValueError, OverflowError) as exc:
            got, error = None, describe(exc)
        if error != rec["error"]:
            mismatches.append(Mismatch(golden.golden, i, "error", rec["error"], error))
        if got != rec["windows"]:
            mismatches.append(Mismatch(golden.golden, i, "windows", rec["windows"], got))
        # lenient: parse failures turn into warnings, never into exceptions
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                capture_windows(raw, anchors, **rec["params"])
            except ValueError as exc:
                if not str(exc).startswith("anchor "):
                    mismatches.append(Mismatch(golden.golden, i, "lenient", "windows", describe(exc)))
    return len(records), mismatches


def iter_all(corpus: Path) -> Iterator[tuple[str, Golden]]:
    for g in manifest(corpus):
        yield "window", g
    for g in manifest(corpus, "MANIFEST.batch.tsv"):
        yield "batch", g


if __name__ == "__main__":
    import sys

    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED_CLAUDE
    total = bad = 0
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    for kind, g in iter_all(corpus):
        if only not in g.golden:
            continue
        n, mm = (check_golden if kind == "window" else check_batch_golden)(g)
        total += n
        bad += len(mm)
        for m in mm[:3]:
            print(m)
        if mm:
            print(f"== {g.golden}: {len(mm)} mismatches")
    print(f"records {total}, mismatches {bad}")
    os._exit(0)
