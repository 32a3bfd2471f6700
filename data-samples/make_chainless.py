"""Write the ChainlessChain sample sessions in data-samples/chainless/ (deterministic; our own text).

Run: python data-samples/make_chainless.py   (or `make samples`)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "chainless"
T0 = 1_780_000_000_000  # 2026-05-28T20:26:40Z


def canonical(kind: str, ts: int, data: object) -> str:
    return json.dumps({"type": kind, "timestamp": ts, "data": data}, ensure_ascii=False, separators=(",", ":"))


class Session:
    def __init__(self, sid: str, start: int, *, chained: bool = True) -> None:
        self.sid, self.ts, self.chained = sid, start, chained
        self.lines: list[str] = []
        self.prev: str | None = None

    def add(self, kind: str, data: object, step: int = 1500) -> Session:
        self.ts += step
        body = canonical(kind, self.ts, data)
        if not self.chained:
            self.lines.append(body)
            return self
        digest = hashlib.sha256(f"{self.prev or 'genesis'}\n{body}".encode()).hexdigest()
        record = {"type": kind, "timestamp": self.ts, "data": data, "prevHash": self.prev, "hash": digest}
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        self.prev = digest
        return self

    def start(self, title: str, provider: str, model: str) -> Session:
        return self.add("session_start", {"title": title, "provider": provider, "model": model})

    def say(self, role: str, content: object, **extra: object) -> Session:
        kind = {"user": "user_message", "system": "system"}.get(role, "assistant_message")
        return self.add(kind, {"role": role, "content": content, **extra})

    def usage(
        self, provider: str, model: str, tokens: tuple[int, int], window: int | None = None, **extra: object
    ) -> Session:
        data: dict[str, object] = {
            "provider": provider,
            "model": model,
            "usage": {
                "input_tokens": tokens[0],
                "output_tokens": tokens[1],
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
            "source": "model",
        }
        if window is not None:
            data["contextWindow"] = window
        data.update(extra)
        return self.add("token_usage", data)

    def write(self) -> None:
        (OUT / f"{self.sid}.jsonl").write_text("\n".join(self.lines) + "\n", encoding="utf-8")


SYSTEM = "You are a careful coding assistant working in a Python repository. Prefer small, reviewable changes."
FILE_BODY = "\n".join(f"def step_{i}(rows):\n    return [r for r in rows if r.get('id') != {i}]\n" for i in range(40))


def typical() -> Session:
    s = Session("sample-ollama-refactor", T0).start("Refactor CSV reader", "ollama", "qwen2.5-coder:14b")
    s.say("system", SYSTEM)
    for i in range(6):
        s.say(
            "user",
            f"Step {i + 1}: split the CSV reader so that header parsing and row parsing are separate functions, then add a test for empty header cells.",
        )
        s.add("tool_call", {"tool": "read_file", "args": {"path": f"src/reader_{i}.py"}})
        s.add("tool_result", {"tool": "read_file", "result": FILE_BODY[: 400 + 100 * i]})
        s.say(
            "assistant",
            f"Done with step {i + 1}. I moved the header logic into `parse_header()` and kept the row loop unchanged; the new test covers an empty first cell.\n"
            * 2,
        )
        s.usage("ollama", "qwen2.5-coder:14b", (900 + 400 * i, 120))
    return s


def compacted() -> Session:
    s = Session("sample-anthropic-compaction", T0 + 3_600_000).start(
        "Migrate settings module", "anthropic", "claude-sonnet-4-6"
    )
    s.say("system", SYSTEM)
    for i in range(8):
        s.say(
            "user",
            f"Continue the settings migration, part {i + 1}. Keep backwards compatibility for the old keys."
            + " Context." * 40,
        )
        s.say("assistant", "Migrated another group of keys and added deprecation warnings. " * 30)
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"settings/part_{i}.py"})},
        }
        for i in range(3)
    ]
    snapshot = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "system",
            "content": "Summary: settings keys migrated in 8 parts; deprecation warnings added; tests green.",
            "_cc_replay": {"schema": "chainlesschain.session-message-provenance/v1", "kind": "compact-summary"},
        },
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "content": "settings/part_0.py: 120 lines, 14 keys", "tool_call_id": "call_0"},
    ]
    s.add(
        "compact",
        {
            "strategy": "summarize",
            "originalTokens": 9800,
            "compressedTokens": 140,
            "saved": 9660,
            "ratio": 0.014,
            "trigger": "auto",
            "messages": snapshot,
        },
    )
    s.say("user", "Now write the release note for the migration.")
    s.say(
        "assistant",
        "Release note: the settings module now reads both old and new keys; old keys warn once per process.",
    )
    return s


def cjk() -> Session:
    s = Session("sample-dashscope-cjk", T0 + 7_200_000).start("中文文档整理", "dashscope", "qwen-plus")
    s.say("system", "你是一个代码助手。回答要简洁。")
    for i in range(5):
        s.say("user", f"请把第{i + 1}章的说明翻译成英文，并保留代码块。文档里有一些术语：上下文窗口、压缩、令牌。")
        s.say(
            "assistant",
            "好的。Chapter translated; terms: context window (上下文窗口), compaction (压缩), token (令牌). 👍 " * 6,
        )
    return s


def tool_heavy() -> Session:
    s = Session("sample-openai-recorded-window", T0 + 86_400_000).start("Fix flaky test", "openai", "gpt-4o")
    s.say("system", SYSTEM)
    for i in range(4):
        calls = [
            {
                "id": f"call_{i}_{j}",
                "type": "function",
                "function": {
                    "name": "run_tests",
                    "arguments": json.dumps({"pattern": f"tests/test_io_{j}.py", "verbose": True}),
                },
            }
            for j in range(3)
        ]
        s.say("user", f"The IO test is flaky again (attempt {i + 1}). Run the suite and tell me which test fails.")
        s.say("assistant", f"Running the IO tests, round {i + 1}.", tool_calls=calls)
        s.say(
            "tool",
            "FAILED tests/test_io_1.py::test_timeout - TimeoutError after 2.0s\n" * 8,
            tool_call_id=f"call_{i}_1",
        )
        s.usage("openai", "gpt-4o", (3000 + 1500 * i, 300), window=100000)
    s.usage(
        "openai",
        "gpt-4o-mini",
        (400, 50),
        window=128000,
        source="subagent",
        attribution={"origin": "subagent", "subagentId": "sa-1"},
    )
    return s


def yellow() -> Session:
    s = Session("sample-deepseek-yellow", T0 + 2 * 86_400_000, chained=False).start(
        "Large review", "deepseek", "deepseek-chat"
    )
    s.say("system", SYSTEM)
    for i in range(48):
        s.say("user", f"Review module {i}:\n" + FILE_BODY[:4000])
        s.say("assistant", "Findings: the filter is O(n) per call; consider a set of excluded ids. " * 20)
    return s


def overflow() -> Session:
    s = Session("sample-llama3-overflow", T0 + 3 * 86_400_000, chained=False).start(
        "Paste a log", "ollama", "llama3:8b"
    )
    s.say("user", "Why does this build fail?\n" + "ERROR linker: undefined reference to `frobnicate'\n" * 700)
    s.say("assistant", "The object file that defines `frobnicate` is not on the link line.")
    return s


def ws_and_content() -> Session:
    s = Session("sample-gemini-ws-turns", T0 + 4 * 86_400_000).start("Notes", "gemini", "gemini-2.0-flash")
    s.add(
        "ws_turn",
        {
            "schemaVersion": 1,
            "requestId": "req-01",
            "outcome": "completed",
            "user": {"role": "user", "content": "Summarise the design doc."},
            "assistant": {"role": "assistant", "content": "It proposes a lazy loader and a per-session summary."},
        },
    )
    s.add(
        "ws_turn",
        {
            "schemaVersion": 1,
            "requestId": "req-02",
            "outcome": "failed",
            "user": {"role": "user", "content": "ignored"},
            "assistant": {"role": "assistant", "content": "ignored"},
        },
    )
    s.say("user", {"kind": "note", "text": "日本語テキスト and 中文 inside an object", "weight": 1.0})
    s.say("assistant", None)
    return s


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for build in (typical, compacted, cjk, tool_heavy, yellow, overflow, ws_and_content):
        build().write()
    print(f"wrote {len(list(OUT.glob('*.jsonl')))} sessions to {OUT}")


if __name__ == "__main__":
    main()
