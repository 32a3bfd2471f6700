"""Layer fences at run time: what importing or running a part loads (core no Polars, the CLI's
help no view libraries, the line walker worker processes run no Polars, the explorer and the
report no Altair).
Which module may import which is stated once, as import contracts: tests/contracts/test_layers.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import extension_unavailable

PACKAGE = Path(__file__).resolve().parents[1] / "cc_analytics"


def loaded_modules(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    import json

    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_core_imports_no_polars() -> None:
    modules = loaded_modules("import cc_analytics.core")
    assert not {m for m in modules if m.split(".")[0] in {"polars", "pyarrow", "altair", "ipywidgets", "orjson"}}


def test_cli_help_loads_no_views() -> None:
    modules = loaded_modules(
        "import contextlib, io\nfrom cc_analytics.cli import build_parser\nbuild_parser().format_help()"
    )
    assert not {m for m in modules if m.split(".")[0] in {"altair", "ipywidgets", "vl_convert", "polars"}}


def test_line_walker_imports_no_polars() -> None:
    # Worker processes only walk lines (frames.claude.decode.walk_files): without Polars each
    # starts faster and keeps about 60 MB less resident memory.
    modules = loaded_modules(
        "from cc_analytics.frames.claude.decode import SESSIONS, walk_files\n"
        "from cc_analytics.frames.claude.discovery import discover\n"
        f"walk_files(discover([{str(PACKAGE.parent / 'data-samples' / 'claude' / 'projects')!r}]), SESSIONS)"
    )
    assert not {m for m in modules if m.split(".")[0] in {"polars", "pyarrow"}}


def test_walking_clean_lines_with_the_skimmer_imports_no_orjson() -> None:
    # orjson takes about 14 ms to import (dataclasses, inspect, uuid); the walker imports it
    # at the first line the C skimmer leaves to Python, and the samples are all clean lines.
    samples = str(PACKAGE.parent / "data-samples" / "claude" / "projects")
    modules = loaded_modules(
        "from cc_analytics.frames.claude import decode\n"
        "from cc_analytics.frames.claude.discovery import discover\n"
        "if decode.SKIM_LINES is not None:\n"
        f"    walked = decode.walk_files(discover([{samples!r}]), decode.REQUESTS)\n"
        "    assert walked.columns['line'] and not walked.problems"
    )
    if (reason := extension_unavailable()) is not None:
        pytest.skip(reason)
    assert "cc_analytics.frames.claude._skim" in modules
    assert "cc_analytics.frames.claude.decode" in modules
    assert "orjson" not in modules


def test_the_explorer_and_the_gauge_import_no_altair() -> None:
    # They draw without Vega; in a Jupyter environment ``import altair`` alone took 1.7 s
    # (jsonschema builds the grammars of its format checkers as it is imported).
    samples = str(PACKAGE.parent / "data-samples")
    modules = loaded_modules(
        "from cc_analytics.report import load\n"
        "from cc_analytics.views import ContextGauge, SessionExplorer\n"
        f"data = load([{samples!r}])\n"
        "explorer = SessionExplorer(data.sessions, data.turns)\n"
        "explorer.widget\n"
        "explorer._repr_mimebundle_()\n"
        "ContextGauge.from_frame(data.sessions, explorer.session_id).widget()"
    )
    assert "ipywidgets" in modules
    assert not {m for m in modules if m.split(".")[0] in {"altair", "vl_convert", "jsonschema"}}


def test_the_report_imports_no_altair(tmp_path: Path) -> None:
    # Its charts are Vega-Lite specs built as plain dicts (views.specs): importing Altair, and
    # building and serializing its objects, took 1.4 CPU seconds of a warm report on 1 GB.
    modules = loaded_modules(
        "from cc_analytics.report import load, write_report\n"
        f"page = write_report(load(samples=True), {str(tmp_path / 'report')!r})['report.html']\n"
        "assert page.read_text(encoding='utf-8').count('class=chart') >= 10"
    )
    assert "cc_analytics.views.specs" in modules
    assert not {m for m in modules if m.split(".")[0] in {"altair", "jsonschema", "ipywidgets", "anywidget"}}
