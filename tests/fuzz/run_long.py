"""Long fuzz runs: ``python tests/fuzz/run_long.py TARGET... [--examples N] [--seed S] [--extension FILE] [--codex-extension FILE] [--copilot-extension FILE]``.

TARGET is a name from targets.py (``core.decode_line``, ``core.capture``, ``core.from_json``,
``frames.claude``, ``frames.claude.skim``, ``frames.claude.columns``, ``frames.codex.scan``, ``frames.chainless``,
``frames.discovery``), a group (``core``, ``frames``)
or ``all``. For each target it prints the
examples run, the wall and CPU time taken, examples per wall second and the number of
unexpected outcomes,
then one line per distinct finding (type and place) with its first input. Exit status 1
when anything unexpected happened.

Each target first runs its seed inputs (``Target.seeds``: the fuzz corpus), then generated
ones. ``--extension FILE`` loads the C skimmer from FILE (a build with sanitizers, see
``tests/fuzz/sanitize.sh``) in place of the installed one; ``--codex-extension FILE`` the Codex
scan's C loop likewise.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzz.extension import (  # noqa: E402
    CODEX_EXTENSION,
    COPILOT_EXTENSION,
    EXTENSION,
    load_codex_extension,
    load_copilot_extension,
    load_extension,
)
from tests.fuzz.targets import TARGETS, Finding, Target, check  # noqa: E402

PROGRESS_SECONDS = 30


def fuzz(target: Target, examples: int, random_seed: int) -> tuple[int, float, float, Counter, dict]:
    """Run ``target`` on its seeds, then on ``examples`` generated inputs; return count, wall and
    CPU seconds, findings, first inputs.

    A batch target gets its inputs ``target.batch`` at a time; a batch with a finding is run
    again input by input, so each finding is counted against the input that caused it.
    """
    count = 0
    findings: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], tuple[Finding, object]] = {}
    pending: list[object] = []
    start = last = time.perf_counter()
    cpu = time.process_time()

    def record(finding: Finding, value: object) -> None:
        findings[finding.signature] += 1
        first.setdefault(finding.signature, (finding, value))

    def flush() -> None:
        finding = check(target, pending)
        if finding is not None:
            alone = [(value, check(target, [value])) for value in pending]
            for value, single in alone:
                if single is not None:
                    record(single, value)
            if all(single is None for _, single in alone):
                record(finding, list(pending))  # only the batch as a whole: across files
        pending.clear()

    def take(value: object) -> None:
        nonlocal count, last
        count += 1
        if target.batch > 1:
            pending.append(value)
            if len(pending) >= target.batch:
                flush()
        else:
            finding = check(target, value)
            if finding is not None:
                record(finding, value)
        now = time.perf_counter()
        if now - last > PROGRESS_SECONDS:
            last = now
            print(f"  {target.name}: {count} examples, {len(findings)} distinct findings", file=sys.stderr, flush=True)

    for value in target.seeds():
        take(value)
    if pending:
        flush()

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(random_seed)
    @given(target.inputs)
    def run(value: object) -> None:
        take(value)

    if examples > 0:
        run()
    if pending:
        flush()
    return count, time.perf_counter() - start, time.process_time() - cpu, findings, first


def _selected(names: list[str]) -> list[Target]:
    chosen: dict[str, Target] = {}
    for name in names:
        if name == "all":
            chosen.update(TARGETS)
        elif name in TARGETS:
            chosen[name] = TARGETS[name]
        elif any(t.group == name for t in TARGETS.values()):
            chosen.update({n: t for n, t in TARGETS.items() if t.group == name})
        else:
            msg = f"unknown target {name!r}; known: {', '.join(sorted(TARGETS))}, core, frames, all"
            raise SystemExit(msg)
    return list(chosen.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", metavar="TARGET")
    parser.add_argument("--examples", type=int, default=100_000, help="examples per target (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--extension", type=Path, metavar="FILE", help=f"load {EXTENSION} from FILE")
    parser.add_argument("--codex-extension", type=Path, metavar="FILE", help=f"load {CODEX_EXTENSION} from FILE")
    parser.add_argument("--copilot-extension", type=Path, metavar="FILE", help=f"load {COPILOT_EXTENSION} from FILE")
    args = parser.parse_args(argv)
    if args.extension is not None:
        load_extension(args.extension)
    if args.codex_extension is not None:
        load_codex_extension(args.codex_extension)
    if args.copilot_extension is not None:
        load_copilot_extension(args.copilot_extension)
    unexpected = 0
    print(f"{'target':<22} {'examples':>9} {'wall s':>9} {'CPU s':>9} {'ex/s':>8} {'unexpected':>10}")
    for target in _selected(args.targets):
        count, seconds, cpu, findings, first = fuzz(target, args.examples, args.seed)
        total = sum(findings.values())
        unexpected += total
        print(
            f"{target.name:<22} {count:>9} {seconds:>9.1f} {cpu:>9.1f} {count / seconds:>8.1f} {total:>10}", flush=True
        )
        for signature, n in findings.most_common():
            finding, value = first[signature]
            print(f"    {n} x {finding.kind} at {finding.where}: {finding.summary}")
            print(f"      first input: {repr(value)[:300]}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
