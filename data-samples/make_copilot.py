"""Write the GitHub Copilot CLI samples under ``data-samples/copilot`` (a ``~/.copilot`` layout).

Run: ``python data-samples/make_copilot.py`` (``make samples`` runs it). Three hand-made
sessions of March 2026, each ``session-state/<id>/events.jsonl``:

* ``3f1c…``: a session with two prompts, tool calls (one failed), a model change from
  ``gpt-5-mini`` to ``claude-sonnet-4.5`` and a clean exit: its ``session.shutdown`` records
  both models' totals (cache reads and writes included);
* ``7a20…``: a session shut down, resumed the next day and shut down again: the second
  shutdown repeats the first's totals grown by the resumed run's, and a truncation records
  the window;
* ``c94e…``: a session still running (no shutdown yet): only its answers' output is recorded.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "copilot"
VERSION = "1.0.40"


class Log:
    """One session's events, each linked to the one before it."""

    def __init__(self, session: str, cwd: str) -> None:
        self.session = session
        self.cwd = cwd
        self.events: list[dict[str, Any]] = []

    def add(self, kind: str, time: str, **data: Any) -> dict[str, Any]:
        parent = self.events[-1]["id"] if self.events else None
        event = {
            "type": kind,
            "data": data,
            "id": f"{self.session[:8]}-{len(self.events) + 1:03d}",
            "timestamp": time,
            "parentId": parent,
        }
        self.events.append(event)
        return event

    def start(self, time: str, model: str) -> None:
        context = {"cwd": self.cwd, "gitRoot": self.cwd, "branch": "main", "hostType": "cli"}
        self.add(
            "session.start",
            time,
            sessionId=self.session,
            version=1,
            producer="copilot-agent",
            copilotVersion=VERSION,
            startTime=time,
            selectedModel=model,
            context=context,
        )

    def prompt(self, time: str, text: str) -> None:
        self.add("user.message", time, content=text, transformedContent=text, attachments=[])

    def answer(self, time: str, text: str, output: int, *, model: str, calls: list[tuple[str, dict]] = ()) -> None:
        requests = [
            {"toolCallId": f"call-{self.session[:4]}-{len(self.events)}-{n}", "name": name, "arguments": args}
            for n, (name, args) in enumerate(calls)
        ]
        self.add(
            "assistant.message",
            time,
            messageId=f"m-{len(self.events)}",
            content=text,
            toolRequests=requests,
            model=model,
            outputTokens=output,
            requestId=f"r-{self.session[:4]}-{len(self.events)}",
        )

    def tool(self, time: str, name: str, result: str, *, success: bool = True) -> None:
        call = f"call-{self.session[:4]}-{len(self.events)}"
        self.add("tool.execution_start", time, toolCallId=call, toolName=name, arguments={})
        self.add("tool.execution_complete", time, toolCallId=call, success=success, result={"content": result})

    def shutdown(self, time: str, metrics: dict[str, tuple[int, int, int, int, int]], current: int) -> None:
        model_metrics = {
            model: {
                "requests": {"count": count, "cost": 1},
                "usage": {
                    "inputTokens": entered,
                    "outputTokens": output,
                    "cacheReadTokens": read,
                    "cacheWriteTokens": written,
                },
            }
            for model, (count, entered, output, read, written) in metrics.items()
        }
        self.add(
            "session.shutdown",
            time,
            shutdownType="routine",
            totalPremiumRequests=sum(count for count, *_ in metrics.values()),
            modelMetrics=model_metrics,
            currentModel=list(metrics)[-1],
            currentTokens=current,
        )

    def write(self, root: Path) -> None:
        folder = root / "session-state" / self.session
        folder.mkdir(parents=True)
        lines = (json.dumps(event, separators=(",", ":")) for event in self.events)
        (folder / "events.jsonl").write_text("\n".join(lines) + "\n")


def refactor() -> Log:
    log = Log("3f1c9a2e-5b7d-4e10-8c3a-1d2e4f6a8b01", "/home/dev/shop")
    log.start("2026-03-05T09:00:00.000Z", "gpt-5-mini")
    log.add("system.message", "2026-03-05T09:00:01.000Z", content="You are GitHub Copilot CLI. " * 40, role="system")
    log.prompt("2026-03-05T09:00:05.000Z", "Find where the cart total is computed and add a test for discounts.")
    log.add("assistant.turn_start", "2026-03-05T09:00:06.000Z", turnId="0", model="gpt-5-mini")
    log.answer(
        "2026-03-05T09:00:09.000Z",
        "Searching the code.",
        42,
        model="gpt-5-mini",
        calls=[("grep", {"pattern": "total", "path": "src"})],
    )
    log.tool("2026-03-05T09:00:10.000Z", "grep", "src/cart.py:12: def total(items):\n" * 3)
    log.answer(
        "2026-03-05T09:00:14.000Z",
        "Running the tests.",
        31,
        model="gpt-5-mini",
        calls=[("bash", {"command": "pytest -q tests/test_cart.py"})],
    )
    log.tool("2026-03-05T09:00:20.000Z", "bash", "1 failed: test_discount\n", success=False)
    log.answer("2026-03-05T09:00:25.000Z", "The discount is applied twice; the test shows it.", 118, model="gpt-5-mini")
    log.add("assistant.turn_end", "2026-03-05T09:00:26.000Z", turnId="0")
    log.add(
        "session.model_change",
        "2026-03-05T09:02:00.000Z",
        previousModel="gpt-5-mini",
        newModel="claude-sonnet-4.5",
    )
    log.prompt("2026-03-05T09:02:10.000Z", "Fix it and make the test pass.")
    log.answer(
        "2026-03-05T09:02:30.000Z",
        "Editing cart.py.",
        260,
        model="claude-sonnet-4.5",
        calls=[("edit", {"path": "src/cart.py", "old": "total * d * d", "new": "total * d"})],
    )
    log.tool("2026-03-05T09:02:31.000Z", "edit", "File src/cart.py updated.")
    log.answer("2026-03-05T09:02:50.000Z", "Fixed: the discount is applied once.", 95, model="claude-sonnet-4.5")
    log.shutdown(
        "2026-03-05T09:05:00.000Z",
        {"gpt-5-mini": (3, 24_310, 191, 16_384, 0), "claude-sonnet-4.5": (2, 31_200, 355, 18_900, 6_100)},
        current=16_940,
    )
    return log


def resumed() -> Log:
    log = Log("7a20d4b8-91c3-4f2e-a6d5-3b8c0e1f2a47", "/home/dev/blog")
    log.start("2026-03-12T20:00:00.000Z", "gpt-4.1")
    log.prompt("2026-03-12T20:00:04.000Z", "Draft a changelog entry for 2.3.")
    log.answer(
        "2026-03-12T20:00:10.000Z",
        "Reading the commits.",
        25,
        model="gpt-4.1",
        calls=[("bash", {"command": "git log --oneline v2.2..HEAD"})],
    )
    log.tool("2026-03-12T20:00:11.000Z", "bash", "a1b2c3 Faster search\nd4e5f6 Dark mode\n")
    log.answer("2026-03-12T20:00:18.000Z", "## 2.3\n- Faster search\n- Dark mode", 140, model="gpt-4.1")
    log.shutdown("2026-03-12T20:10:00.000Z", {"gpt-4.1": (2, 9_800, 165, 4_096, 0)}, current=5_230)
    log.add(
        "session.resume",
        "2026-03-13T08:30:00.000Z",
        resumeTime="2026-03-13T08:30:00.000Z",
        eventCount=7,
        context={"cwd": "/home/dev/blog"},
    )
    log.prompt("2026-03-13T08:30:05.000Z", "Add the migration notes too.")
    log.add(
        "session.truncation",
        "2026-03-13T08:30:06.000Z",
        tokenLimit=128_000,
        preTruncationTokensInMessages=5_900,
        postTruncationTokensInMessages=5_900,
        tokensRemovedDuringTruncation=0,
        messagesRemovedDuringTruncation=0,
    )
    log.answer("2026-03-13T08:30:20.000Z", "Added a Migration section.", 210, model="gpt-4.1")
    log.shutdown("2026-03-13T08:40:00.000Z", {"gpt-4.1": (3, 16_450, 375, 8_192, 0)}, current=6_410)
    return log


def running() -> Log:
    log = Log("c94e2b71-0d5a-4c8f-b3e6-7f9a1c2d3e58", "/home/dev/shop")
    log.start("2026-03-20T15:00:00.000Z", "claude-haiku-4.5")
    log.prompt("2026-03-20T15:00:03.000Z", "What does the checkout handler return on a timeout?")
    log.answer(
        "2026-03-20T15:00:08.000Z",
        "Looking.",
        18,
        model="claude-haiku-4.5",
        calls=[("view", {"path": "src/checkout.py"})],
    )
    log.tool("2026-03-20T15:00:09.000Z", "view", "def checkout(req):\n    ...\n    return Response(504)\n")
    log.answer("2026-03-20T15:00:15.000Z", "It returns a 504 response.", 37, model="claude-haiku-4.5")
    return log


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    for log in (refactor(), resumed(), running()):
        log.write(OUT)
    print(f"wrote 3 GitHub Copilot CLI sessions under {OUT.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
