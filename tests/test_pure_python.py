"""Without the C extension: asked for (``CC_ANALYTICS_PURE_PYTHON``) or not built (no C compiler
at install). No process of a run (the command, its worker processes) imports it when pure Python
is asked for, the command line says once that it runs without it when it is missing, and the
output is the same either way.

The console script's processes start with a ``sitecustomize`` that records them, and records or
refuses each import of the extension.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cc_analytics.frames import extension
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.discovery import TranscriptFile
from tests.conftest import ROOT, run_cli
from tests.frames.claude_builders import assistant, text, user, write

SAMPLES = str(ROOT / "data-samples")
NOTE = b"note: reading transcripts without the C extension"
SITECUSTOMIZE = f"""
import os, sys

def _record(kind):
    with open(os.path.join(os.environ["CC_TEST_RECORDS"], kind), "a") as f:
        f.write(f"{{os.getpid()}}\\n")

class _Extension:
    def find_spec(self, name, path=None, target=None):
        if name == {extension.MODULE!r}:
            _record("imports")
            if os.environ.get("CC_TEST_BUILT") == "0":
                raise ImportError("(test) built without a C compiler")
        return None

_record("processes")
sys.meta_path.insert(0, _Extension())
"""


def records(tmp_path: Path, kind: str) -> set[str]:
    path = tmp_path / "records" / kind
    return set(path.read_text().split()) if path.exists() else set()


def run(tmp_path: Path, args: list[str], *, pure: str = "", built: bool = True, stdin: bytes | None = None):
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (tmp_path / "records").mkdir(exist_ok=True)
    for old in (tmp_path / "records").iterdir():
        old.unlink()
    env = {
        "PYTHONPATH": str(tmp_path / "site"),
        "CC_TEST_RECORDS": str(tmp_path / "records"),
        "CC_TEST_BUILT": "1" if built else "0",
        "HOME": str(tmp_path),
        extension.PURE_PYTHON_ENV: pure,
    }
    return run_cli(args, env=env, stdin=stdin)


# Claude Code transcripts only: the worker then imports the walker as it starts (and so tries the extension).
SESSIONS = ["sessions", f"{SAMPLES}/claude/projects", "--json", "--workers", "2"]


def test_pure_python_keeps_the_extension_out_of_the_command(tmp_path: Path) -> None:
    done = run(tmp_path, SESSIONS, pure="1")
    assert done.returncode == 0, done.stderr
    assert records(tmp_path, "processes") and records(tmp_path, "imports") == set()
    assert NOTE not in done.stderr  # asked for: nothing to say
    assert len(json.loads(done.stdout)) > 5


def test_with_the_extension_the_command_reads_with_it_and_the_same(tmp_path: Path) -> None:
    if importlib.util.find_spec(extension.MODULE) is None:
        pytest.skip(f"the C extension is not built ({extension.MODULE}): nothing to compare")
    fast = run(tmp_path, SESSIONS, pure="0")  # "0" is not asked for
    assert fast.returncode == 0, fast.stderr
    assert records(tmp_path, "imports")
    assert NOTE not in fast.stderr
    pure = run(tmp_path, SESSIONS, pure="1")
    assert json.loads(pure.stdout) == json.loads(fast.stdout)


def walked_by(batch: list[TranscriptFile]) -> tuple[int, str, bool]:
    """Who walked ``batch``: its process, the kind of columns it kept, whether it had the extension."""
    from cc_analytics.frames.claude import decode

    walked = decode.walk_files(batch, decode.SESSIONS)
    return os.getpid(), type(walked.columns[S.LINE]).__name__, extension.MODULE in sys.modules


ENGINE_PROBE = f"""
import json, sys
from cc_analytics.frames.claude.discovery import discover
from cc_analytics.frames.engine import run_batches
from tests.test_pure_python import walked_by

if __name__ == "__main__":
    files = discover([{SAMPLES + "/claude/projects"!r}])
    print(json.dumps(list(run_batches(walked_by, files, workers=2, batch_bytes=1))))  # a batch per session
"""


@pytest.mark.parametrize("pure", ["1", "0"])
def test_the_choice_reaches_the_worker_processes(pure: str) -> None:
    if pure == "0" and importlib.util.find_spec(extension.MODULE) is None:
        pytest.skip(f"the C extension is not built ({extension.MODULE})")
    env = {**os.environ, extension.PURE_PYTHON_ENV: pure}
    done = subprocess.run([sys.executable, "-c", ENGINE_PROBE], env=env, cwd=ROOT, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    walks = json.loads(done.stdout)
    assert len({pid for pid, _, _ in walks}) == 2  # this process and the worker
    assert {(kind, loaded) for _, kind, loaded in walks} == ({("list", False)} if pure == "1" else {("Column", True)})


def test_a_run_without_the_extension_says_so_once(tmp_path: Path) -> None:
    missing = run(tmp_path, SESSIONS, built=False)
    assert missing.returncode == 0, missing.stderr
    assert len(records(tmp_path, "processes")) >= 2
    assert missing.stderr.count(NOTE) == 1, missing.stderr  # not again in the worker
    assert b"(test) built without a C compiler" in missing.stderr and b"\nHint: " in missing.stderr
    assert json.loads(missing.stdout) == json.loads(run(tmp_path, SESSIONS, pure="1").stdout)


@pytest.mark.parametrize(
    ("args", "noted"),
    [
        (["usage", SAMPLES, "--json"], True),
        (["context", "--json", "--claude-root", f"{SAMPLES}/claude/projects"], True),
        (["usage", SAMPLES, "--json", "--quiet"], False),  # --quiet: no notes
        (["window", "/nowhere.jsonl", "--uuid", "u"], False),  # the core library has no C path
    ],
)
def test_which_commands_say_it(tmp_path: Path, args: list[str], noted: bool) -> None:
    done = run(tmp_path, args, built=False)
    assert done.stderr.count(NOTE) == (1 if noted else 0), done.stderr
    assert done.returncode == (1 if args[0] == "window" else 0), done.stderr


def test_the_status_line_stays_quiet_without_the_extension(tmp_path: Path) -> None:
    transcript = write(tmp_path / "p" / "s.jsonl", user("hi"), assistant([text("hello")]))
    stdin = json.dumps({"model": {"display_name": "Opus"}, "transcript_path": str(transcript)}).encode()
    done = run(tmp_path, ["statusline"], built=False, stdin=stdin)
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.count(b"\n") == 1 and done.stdout.startswith(b"Opus \xc2\xb7 1.1k/200.0k 1%")
    assert done.stdout.rstrip().endswith(b"$0.01")  # the cost: the walker read the session
    assert records(tmp_path, "imports")  # and tried to import the extension
