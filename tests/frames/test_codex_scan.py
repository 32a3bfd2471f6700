"""The C loop of the Codex lean scan (``frames/codex/_scan.c``): with it, ``scan.scan`` gives what
it gives in pure Python, on every corpus we have and on generated and hostile rollouts; the
loop does take the clean lines (the equality would hold trivially if it declined them all);
the module holds the policy's numbers, keeps its state per module object, and loads in a
subinterpreter.
"""

from __future__ import annotations

import gc
import importlib.util
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from cc_analytics import jsonline
from cc_analytics.frames import extension
from cc_analytics.frames.codex import resolve
from cc_analytics.frames.codex import scan as lean_scan
from cc_analytics.frames.estimate import text_tokens
from tests.conftest import ROOT, shared_path
from tests.fixtures.codex import make_corpus
from tests.frames.test_codex_lean import rollouts
from tests.fuzz.mutations import codex_corpus

if extension.pure_python_asked() or lean_scan.SCAN_LINES is None:
    why = extension.missing(lean_scan.NATIVE) or f"{extension.PURE_PYTHON_ENV} is set"
    pytest.skip(f"the Codex scan's C loop is not in use: {why}", allow_module_level=True)

installed = extension.load(lean_scan.NATIVE)
assert installed is not None
HOME = ROOT / "tests" / "fixtures" / "codex" / "home"
HEADER = b'{"timestamp":"2025-11-03T09:00:00.000Z","type":"session_meta","payload":{"id":"a"}}'
PROMPT = b'{"timestamp":"2025-11-03T09:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}'


def both(data: bytes) -> Any:
    """The scan of ``data`` with the C loop, asserted equal to the pure Python scan (None: both gave up)."""
    found = []
    for native in (True, False):
        try:
            found.append(lean_scan.scan(data, native=native))
        except lean_scan.Unclean:
            found.append(None)
    assert found[0] == found[1]
    return found[0]


def new_state() -> list[Any]:
    return [0, 0, -1, -1, -1, -1, None, False]


def new_sink() -> tuple[Any, ...]:
    """What lean_scan.scan hands the loop: the packed usage rows, their stamps and models, settings,
    packed items, marks."""
    return (bytearray(), [], [], [], bytearray(), [])


def usage_lines(usage: bytearray) -> list[int]:
    """The line of every packed usage row (its first number)."""
    return [row[0] for row in lean_scan.USAGE_ROW.iter_unpack(usage)]


def test_the_policy_numbers() -> None:
    assert installed.MAX_DEPTH == jsonline.MAX_DEPTH
    assert installed.DUPLICATE_KEYS == jsonline.DUPLICATE_KEYS


def test_the_fixture_home_and_the_samples() -> None:
    for file in [*resolve(HOME), *resolve(ROOT / "data-samples" / "codex")]:
        both(file.path.read_bytes())


def test_the_shared_examples() -> None:
    for file in resolve(shared_path("data", "agents", "codex")):
        both(file.path.read_bytes())


def test_a_generated_corpus(tmp_path: Path) -> None:
    make_corpus.generate(tmp_path / "home", 3, seed=7)
    for file in resolve(tmp_path / "home"):
        both(file.path.read_bytes())


def test_the_fuzz_corpus() -> None:  # deep lines at a file's head and after its header
    for data in codex_corpus():
        both(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rollouts())
def test_generated_rollouts(found: list[tuple[str, str]]) -> None:
    for _, text in found:
        both(text.encode())


def test_scans_in_threads_side_by_side_are_the_scans_one_by_one(tmp_path: Path) -> None:
    # The loop runs without the GIL: what one thread's call keeps is its own.
    make_corpus.generate(tmp_path / "home", 3, seed=11)
    contents = [file.path.read_bytes() for file in resolve(tmp_path / "home")] * 3
    alone = [lean_scan.scan(data) for data in contents]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lean_scan.scan, contents)) == alone


def test_a_rollout_longer_than_a_flush_of_records() -> None:
    # Thousands of clean lines in one call: the rows are made every FLUSH_AT records, in order.
    count = (
        b'{"timestamp":"2025-11-03T09:00:02.000Z","type":"event_msg","payload":{"type":"token_count",'
        b'"info":{"total_token_usage":{"input_tokens":%d,"output_tokens":1,"total_tokens":%d},'
        b'"last_token_usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}},"rate_limits":null}}'
    )
    lines = [HEADER]
    for index in range(3000):
        lines += [PROMPT, count % (index, index + 1), count % (index, index + 1)]  # a repeat
    found = both(b"\n".join(lines) + b"\n")
    assert found.lines == 9001
    assert usage_lines(found.usage) == list(range(3, 9001, 3))  # the line column: one row a count, not a repeat


def test_a_big_mapped_rollout_hands_back_its_pages_and_reads_the_same(tmp_path: Path) -> None:
    # Over 64 MiB: the C loop hands back what it read every 32 MiB, and so does the Python loop
    # between its calls (a compaction every 500 items is Python's); a page read again (the
    # earliest timestamp, the last count) maps again from the page cache.
    output = b'{"timestamp":"2025-11-03T09:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"%s"}}'
    count = (
        b'{"timestamp":"2025-11-03T09:00:04.000Z","type":"event_msg","payload":{"type":"token_count",'
        b'"info":{"total_token_usage":{"input_tokens":%d,"output_tokens":1,"total_tokens":%d},'
        b'"last_token_usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}},"rate_limits":null}}'
    )
    compacted = b'{"timestamp":"2025-11-03T09:00:05.000Z","type":"compacted","payload":{"message":"so far"}}'
    lines = [HEADER]
    for index in range(18_000):
        lines += [PROMPT, output % (b"x" * (3_000 + index % 997)), count % (index, index + 1)]
        if index % 500 == 499:
            lines.append(compacted)
    path = tmp_path / "rollout-big.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert path.stat().st_size > 64 * 2**20
    mapped = lean_scan.scan_file(resolve(path)[0])  # mapped, with release
    assert mapped == lean_scan.scan(path.read_bytes())
    assert mapped.lines == len(lines) and len(usage_lines(mapped.usage)) == 18_000


def test_the_loop_takes_the_clean_lines_and_hands_back_the_others() -> None:
    data = (
        HOME / "sessions/2025/11/03/rollout-2025-11-03T09-00-00-0199a000-0000-7000-8000-000000000001.jsonl"
    ).read_bytes()
    lines = data.split(b"\n")[:-1]
    sink = new_sink()
    state = new_state()
    # The header is Python's: handed back at once, as line 1.
    assert installed.scan_lines(data, 0, 0, sink, state) == (0, len(lines[0]), 1)
    taken = installed.scan_lines(data, len(lines[0]) + 1, 1, sink, state)
    assert taken is None or taken[2] > 2
    assert state[0] >= 2 and state[1] >= 3  # lines taken, the last one with a head
    usage, stamps, models, settings, items, marks = sink
    assert usage and settings and items and marks
    lines = usage_lines(usage)
    assert len(usage) % lean_scan.USAGE_ROW.size == 0 and len(lines) == len(stamps) == len(models)  # whole rows
    assert all(line > 1 for line in lines) and all(row[0] > 1 for rows in (settings, marks) for row in rows)
    assert all(stamp.encode().translate(lean_scan.DIGITS_TO_ZERO) == lean_scan.STAMP_SHAPE for stamp in stamps)


def test_a_clean_rollout_is_taken_whole_after_its_header() -> None:
    data = HEADER + b"\n" + PROMPT + b"\n\n" + PROMPT + b"\n"
    sink = new_sink()
    state = new_state()
    assert installed.scan_lines(data, len(HEADER) + 1, 1, sink, state) is None
    assert sink[5] == [(2, lean_scan.PROMPT), (4, lean_scan.PROMPT)]
    assert state[:4] == [2, 4, len(HEADER) + 15, len(HEADER) + 15]


@pytest.mark.parametrize(
    "line",
    [
        PROMPT.replace(b'"hi"}}', b'"hi",}}'),  # not JSON
        PROMPT.replace(b"09:00:01.000Z", b"09:00:01Z"),  # not Codex's timestamp shape
        PROMPT.replace(b'"timestamp":"2025', b'"timestamp":"2025', 1).replace(
            b',"type":"event_msg"', b',"ordinal":1,"type":"event_msg"'
        ),
        PROMPT.replace(b'"message":"hi"', b'"message":"hi","\\u0061":1'),  # an escaped key
        PROMPT + b" ",  # not ending with a brace
        PROMPT.replace(b'"hi"', b"1" * 30),  # an integer beyond 64 bits
        PROMPT.replace(b'"hi"', b"[" * 25_000 + b"]" * 25_000),  # 25,002 levels in all
        PROMPT.replace(b'"hi"', b'"\\ud800"'),  # a lone surrogate
        PROMPT.replace(b'"hi"', b'"\xff"'),  # not UTF-8
    ],
)
def test_the_loop_declines_what_python_must_read(line: bytes) -> None:
    data = HEADER + b"\n" + line + b"\n"
    start = len(HEADER) + 1
    assert installed.scan_lines(data, start, 1, new_sink(), new_state()) == (start, start + len(line), 2)
    both(data)


def test_a_forks_burst_leaves_token_counts_to_python() -> None:
    count = b'{"timestamp":"2025-11-03T09:00:02.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":null}}'
    data = HEADER + b"\n" + PROMPT + b"\n" + count + b"\n"
    start = len(HEADER) + 1
    state = new_state()
    state[7] = True
    assert installed.scan_lines(data, start, 1, new_sink(), state) == (start + len(PROMPT) + 1, len(data) - 1, 3)
    assert state[:2] == [1, 2]


def test_bad_arguments_are_errors() -> None:
    with pytest.raises(TypeError):
        installed.scan_lines(b"", 0, 0, ([], []), new_state())
    with pytest.raises(TypeError):
        installed.scan_lines(b"", 0, 0, ([], [], [], [], [], []), new_state())  # not packed usage, items
    with pytest.raises(TypeError):
        installed.scan_lines(b"", 0, 0, (*new_sink()[:5], ()), new_state())
    with pytest.raises(TypeError, match="16-tuple"):
        installed.scan_lines(b"", 0, 0, new_sink(), [0, 0, -1, -1, -1, -1, (1, 2), False])
    with pytest.raises(ValueError, match="null mark"):
        installed.scan_lines(b"", 0, 0, new_sink(), [0, 0, -1, -1, -1, -1, (lean_scan.NULL_COUNT,) * 16, False])
    with pytest.raises(ValueError, match="bad offsets"):
        installed.scan_lines(PROMPT, 0, 0, new_sink(), [0, 0, 10**6, 10**6, -1, -1, None, False])
    with pytest.raises(ValueError, match="bad offsets"):
        installed.scan_lines(PROMPT, -1, 0, new_sink(), new_state())
    with pytest.raises(ValueError, match="whole"):
        installed.item_sums(b"\0" * 23, 0, 0, 0)
    with pytest.raises(ValueError, match="bucket"):
        installed.item_sums((1).to_bytes(8, sys.byteorder) + (5).to_bytes(8, sys.byteorder) + bytes(8), 0, 0, 0)


def another_module() -> ModuleType:
    """A new module object from the extension's file (not the one in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(lean_scan.NATIVE, installed.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_module_objects_are_independent() -> None:
    other = another_module()
    assert other is not installed
    data = HEADER + b"\n" + PROMPT + b"\n"
    for module in (other, installed):
        sink = new_sink()
        assert module.scan_lines(data, len(HEADER) + 1, 1, sink, new_state()) is None
        assert sink[5] == [(2, lean_scan.PROMPT)]
    del other
    gc.collect()
    assert installed.scan_lines(data, len(HEADER) + 1, 1, new_sink(), new_state()) is None


def test_the_extension_loads_in_a_subinterpreter() -> None:
    probe = (
        "import importlib.util, sys\n"
        "try:\n    import _interpreters as interpreters\n"
        "except ImportError:\n    import _xxsubinterpreters as interpreters\n"
        "interp = interpreters.create()\n"
        "code = '''import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location({lean_scan.NATIVE!r}, {installed.__file__!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "sink = (bytearray(), [], [], [], bytearray(), [])\n"
        f"assert module.scan_lines({PROMPT!r}, 0, 0, sink, [0, 0, -1, -1, -1, -1, None, False]) is None\n"
        "'''\n"
        "print(interpreters.run_string(interp, code))\n"
        "interpreters.destroy(interp)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    if "No module named '_xxsubinterpreters'" in done.stderr:
        pytest.skip("this Python has no subinterpreter module")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None", done.stdout


def compacted(payload: bytes) -> bytes:
    return b'{"timestamp":"2025-11-03T09:00:02.000Z","type":"compacted","payload":' + payload + b"}"


HISTORY = (
    b'{"replacement_history":['
    b'{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the tests"},{"text":"\\u00e9t\\u00e9"}]},'
    b'{"type":"message","role":"developer","content":"be brief"},{"type":"message","content":7},'
    b'{"type":"agent_message","content":"done"},{"type":"function_call","name":"shell","arguments":"{\\"cmd\\":\\"ls\\"}"},'
    b'{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin"},'
    b'{"type":"function_call_output","output":"a\\nb"},{"type":"reasoning","summary":[]},3,"text",null,'
    b'{"type":"compaction_summary","text":"x"}'
    b'],"message":"ignored beside a history"}'
)


@pytest.mark.parametrize(
    ("payload", "taken"),
    [
        (HISTORY, True),
        (b'{"message":"what happened so far"}', True),  # before replacement histories
        (b'{"message":"","replacement_history":null}', True),  # nothing measured, still a compaction
        (b'{"replacement_history":[{"type":"local_shell_call","action":{"command":["ls"]}}]}', False),
        (b'{"replacement_history":[{"type":"mess\\u0061ge","content":"x"}]}', False),  # an escaped type
        (b'{"replacement_history":[{"type":"message","role":"us\\u0065r","content":"x"}]}', False),
        (b'{"replacement_history":[{"type":"function_call","name":"shell","arguments":{"cmd":"ls"}}]}', False),
        (b'{"replacement_history":[{"type":"message","content":{"text":"x"}}]}', False),
        (b'{"replacement_history":[{"type":"function_call_output","output":[{"text":"x"}]}]}', False),
    ],
)
def test_compacted_lines_are_the_loops_unless_an_entry_is_not(payload: bytes, taken: bool) -> None:
    line = compacted(payload)
    data = HEADER + b"\n" + line + b"\n"
    start = len(HEADER) + 1
    sink = new_sink()
    found = installed.scan_lines(data, start, 1, sink, new_state())
    assert (found is None) == taken
    if taken:
        assert sink[5] == [(2, lean_scan.COMPACTED)]
    else:
        assert found == (start, start + len(line), 2) and sink[4] == bytearray() and sink[5] == []
    scanned = both(data)
    assert scanned is not None and scanned.compactions == [2]


def test_a_compacted_history_measures_each_entry_as_python_does() -> None:
    data = HEADER + b"\n" + compacted(HISTORY) + b"\n"
    sink = new_sink()
    assert installed.scan_lines(data, len(HEADER) + 1, 1, sink, new_state()) is None
    items = [struct.unpack("=3q", sink[4][at : at + 24]) for at in range(0, len(sink[4]), 24)]
    buckets = [lean_scan.PACKED_BUCKETS[bucket] for _, bucket, _ in items]
    # The user message, the developer one, a message without text, the agent's, the two calls, the output.
    assert buckets == ["user", "system", "assistant", "user", "tool_calls", "tool_calls", "tool"]
    assert items[0][2] == text_tokens("fix the tests\nété") and items[2][2] == 0
