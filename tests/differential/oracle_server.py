"""Long-lived oracle: runs the reference library (a black box) on requests read from stdin.

Run with the oracle venv's python. HOME is pointed at a private folder before the library
is imported (it reads HOME once); each request lays its transcript out as
``$HOME/.claude/projects/p/<hydrate_session>.jsonl`` and removes it afterwards, so the
session ids of requests must be unique for the library's lookup memo.

Request (one JSON line): {"raw": base64, "anchors": [[sid, uuid, tool_use_id], ...],
"before": n, "after": n, "preview_chars": n, "hydrate_session": sid or null}.
Response (one JSON line, ASCII): {"captures": [{"window", "preview", "hydrated", "error"}...],
"batch": {"windows": [...] or null, "error": ...}}.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile

HOME = tempfile.mkdtemp(prefix="cc-oracle-home-")
os.environ["HOME"] = HOME
PROJECT = os.path.join(HOME, ".claude", "projects", "p")
os.makedirs(PROJECT)

from cc_transcript.context import capture_window, capture_windows, hydrate_windows  # noqa: E402
from cc_transcript.ids import EventRef  # noqa: E402
from cc_transcript.render import Budget  # noqa: E402


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def handle(req: dict) -> dict:
    raw = base64.b64decode(req["raw"])
    params = {"before": req["before"], "after": req["after"], "preview_chars": req["preview_chars"]}
    anchors = [EventRef(*a) for a in req["anchors"]]
    path = None
    if req.get("hydrate_session"):
        path = os.path.join(PROJECT, req["hydrate_session"] + ".jsonl")
        with open(path, "wb") as handle:
            handle.write(raw)
    try:
        captures = []
        windows = []
        for anchor in anchors:
            try:
                window = capture_window(raw, anchor, **params)
                captures.append(
                    {"window": window.to_json(), "preview": window.render_preview(budget=Budget()), "error": None}
                )
                windows.append(window)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # the native core panics with a BaseException
                captures.append({"window": None, "preview": None, "error": describe(exc)})
        if path is not None:
            present = [w for w in windows]
            hydrated = hydrate_windows(present) if present else []
            it = iter(hydrated)
            for cap in captures:
                if cap["window"] is not None:
                    h = next(it)
                    cap["hydrated"] = None if h is None else h.render(budget=Budget())
        try:
            batch = {"windows": [w.to_json() for w in capture_windows(raw, anchors, **params)], "error": None}
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            batch = {"windows": None, "error": describe(exc)}
        return {"captures": captures, "batch": batch}
    finally:
        if path is not None:
            os.remove(path)


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            response = handle(json.loads(line))
        except Exception as exc:  # report harness failures to the test instead of dying
            response = {"harness_error": describe(exc)}
        out.write(json.dumps(response, ensure_ascii=True) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
