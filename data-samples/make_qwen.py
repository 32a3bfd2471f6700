"""Write the Qwen Code samples under ``data-samples/qwen`` (a ``~/.qwen/projects`` layout).

Run: ``python data-samples/make_qwen.py`` (``make samples`` runs it). Three hand-made chats of
March 2026, one ``.jsonl`` each:

* ``…01.jsonl``: Qwen3-Coder-Plus (a model genai-prices does not price: its requests are
  counted as unpriced, never as free) with tool calls, a failed tool, thoughts, cached input,
  the window recorded (``contextWindowSize``), a chat compression, and telemetry records;
* ``…02.jsonl``: Gemini 2.5 Flash through Qwen Code (priced), a rewind that leaves a branch
  behind, and an answer written twice under its uuid (the last write wins);
* ``…03.jsonl``: a short session in another project, with a model named without a window.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "qwen"
VERSION = "0.21.13"


class Chat:
    """Records of one session, each linked to the one before it unless told otherwise."""

    def __init__(self, session: str, cwd: str) -> None:
        self.session, self.cwd = session, cwd
        self.records: list[dict[str, Any]] = []
        self.count = 0

    def add(self, kind: str, time: str, *, parent: str | None | bool = True, **fields: Any) -> str:
        self.count += 1
        uuid = fields.pop("uuid", None) or f"{self.session[:8]}-{self.count:04d}-7000-8000-000000000000"
        if parent is True:
            parent = self.records[-1]["uuid"] if self.records else None
        record = {
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": self.session,
            "timestamp": time,
            "type": kind,
            "cwd": self.cwd,
            "version": VERSION,
            **fields,
        }
        self.records.append(record)
        return uuid

    def user(self, time: str, text: str, **fields: Any) -> str:
        return self.add(
            "user",
            time,
            systemPayload={"displayText": text},
            message={"role": "user", "parts": [{"text": text}]},
            **fields,
        )

    def answer(
        self,
        time: str,
        parts: list[dict[str, Any]],
        usage: tuple[int, int, int, int],
        *,
        model: str,
        window: int = 0,
        **fields: Any,
    ) -> str:
        prompt, cached, output, thoughts = usage
        metadata = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "cachedContentTokenCount": cached,
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + output + thoughts,
        }
        return self.add(
            "assistant",
            time,
            model=model,
            message={"role": "model", "parts": parts},
            usageMetadata=metadata,
            contextWindowSize=window,
            **fields,
        )

    def tool(self, time: str, call: str, name: str, output: str, *, status: str = "success") -> str:
        response = {"output": output} if status == "success" else {"error": output}
        return self.add(
            "tool_result",
            time,
            message={"role": "user", "parts": [{"functionResponse": {"id": call, "name": name, "response": response}}]},
            toolCallResult={"callId": call, "status": status, "resultDisplay": output},
        )

    def system(self, time: str, subtype: str, payload: dict[str, Any]) -> str:
        return self.add("system", time, subtype=subtype, systemPayload=payload)

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        lines = (json.dumps(record, separators=(",", ":")) for record in self.records)
        (folder / f"{self.session}.jsonl").write_text("\n".join(lines) + "\n")


def call(identifier: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"functionCall": {"id": identifier, "name": name, "args": args}}


def coder() -> Chat:
    chat = Chat("3f9a0c21-5e7b-4d18-a2c6-0b8e4f1d7a01", "/home/dev/ledger")
    plus, window = "qwen3-coder-plus", 1_000_000
    chat.user("2026-03-06T10:00:00.000Z", "Why does the monthly total drift by a cent?")
    chat.answer(
        "2026-03-06T10:00:06.000Z",
        [
            {"text": "Totals may be summed as floats.", "thought": True},
            call("q1", "read_file", {"path": "ledger/sum.py"}),
        ],
        (14_210, 0, 180, 220),
        model=plus,
        window=window,
    )
    chat.tool("2026-03-06T10:00:07.000Z", "q1", "read_file", "total = sum(float(x) for x in rows)")
    chat.answer(
        "2026-03-06T10:00:15.000Z",
        [call("q2", "read_file", {"path": "ledger/missing.py"})],
        (15_033, 12_800, 64, 0),
        model=plus,
        window=window,
    )
    chat.tool("2026-03-06T10:00:16.000Z", "q2", "read_file", "File not found", status="error")
    chat.answer(
        "2026-03-06T10:00:30.000Z",
        [{"text": "The sum uses floats; switching to Decimal fixes the drift."}],
        (15_380, 14_848, 240, 96),
        model=plus,
        window=window,
    )
    chat.system(
        "2026-03-06T10:00:31.000Z",
        "ui_telemetry",
        {"uiEvent": {"event.name": "qwen-code.api_response", "model": plus, "input_token_count": 15_380}},
    )
    chat.system("2026-03-06T10:20:00.000Z", "chat_compression", {"originalTokenCount": 15_700, "newTokenCount": 2_100})
    chat.user("2026-03-06T10:21:00.000Z", "Now add a regression test.")
    chat.answer(
        "2026-03-06T10:21:20.000Z",
        [call("q3", "write_file", {"path": "tests/test_sum.py", "content": "def test_cent(): ..."})],
        (2_950, 0, 410, 0),
        model=plus,
        window=window,
    )
    chat.tool("2026-03-06T10:21:21.000Z", "q3", "write_file", "Wrote tests/test_sum.py")
    chat.answer(
        "2026-03-06T10:21:30.000Z",
        [{"text": "Added tests/test_sum.py."}],
        (3_480, 2_816, 22, 0),
        model=plus,
        window=window,
    )
    return chat


def rewound() -> Chat:
    chat = Chat("8c14e7b3-2a95-4f60-9d3e-6f0a2b7c9e02", "/home/dev/ledger")
    flash, window = "gemini-2.5-flash", 1_048_576
    first = chat.user("2026-03-13T16:40:00.000Z", "Summarise CHANGELOG.md in three bullets.")
    chat.answer("2026-03-13T16:40:05.000Z", [{"text": "- a\n- b\n- c"}], (6_120, 0, 58, 0), model=flash, window=window)
    chat.system("2026-03-13T16:41:00.000Z", "rewind", {"targetUuid": first})
    retry = chat.user("2026-03-13T16:41:05.000Z", "Summarise CHANGELOG.md in one sentence.", parent=first)
    uuid = chat.answer(
        "2026-03-13T16:41:09.000Z", [{"text": "Draft."}], (6_160, 4_096, 12, 0), model=flash, window=window
    )
    chat.records.pop()  # the same answer, written again when it completed: the last write wins
    chat.count -= 1
    chat.answer(
        "2026-03-13T16:41:09.000Z",
        [{"text": "Version 2.3 moves totals to Decimal and adds CSV export."}],
        (6_160, 4_096, 31, 0),
        model=flash,
        window=window,
        uuid=uuid,
        parent=retry,
    )
    chat.records.insert(-1, {**chat.records[-1], "message": {"role": "model", "parts": [{"text": "Draft."}]}})
    chat.records[-2]["usageMetadata"] = {**chat.records[-2]["usageMetadata"], "candidatesTokenCount": 12}
    return chat


def short() -> Chat:
    chat = Chat("c02d5b8e-91f3-4a7c-8e24-3d6b1a9f0c03", "/home/dev/site")
    chat.user("2026-03-20T08:05:00.000Z", "What does the build script do?")
    chat.answer(
        "2026-03-20T08:05:04.000Z", [{"text": "It renders Markdown to HTML."}], (4_020, 0, 35, 0), model="coder-model"
    )
    return chat


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    projects = OUT / "projects"
    coder().write(projects / "-home-dev-ledger" / "chats")
    rewound().write(projects / "-home-dev-ledger" / "chats")
    short().write(projects / "-home-dev-site" / "chats")
    print(f"wrote 3 Qwen Code chats under {OUT.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
