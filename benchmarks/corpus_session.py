"""One Claude Code session for ``corpus.py``: its main transcript, subagent files and facts.

Imports: the standard library, orjson when installed, ``corpus_text`` and ``corpus_tools``.
"""

from __future__ import annotations

import base64
import json
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from corpus_text import (
    ADJECTIVES,
    CAVEAT,
    CJK_PROMPTS,
    COMMANDS,
    ID_SAFE,
    NOUNS,
    PROMPTS,
    SLUG_WORDS,
    SUMMARY_OPENING,
    VERBS,
    Pools,
    tokens_of,
)
from corpus_tools import tool_call

EPOCH = datetime(2026, 2, 1)
CACHE_TTL_MS = 300_000
SYSTEM_PREFIX = 11_800  # system prompt + tool schemas: cached across sessions
AUTOCOMPACT = {200_000: 167_000, 1_000_000: 967_000}

# (model, weight, subagent model); 1M-window models per the spec's windows section.
MODELS = (
    ("claude-opus-4-5-20251101", 5, "claude-haiku-4-5-20251001"),
    ("claude-sonnet-4-6", 4, "claude-sonnet-4-6"),
    ("claude-sonnet-4-5-20250929", 2, "claude-haiku-4-5-20251001"),
    ("claude-opus-4-6", 2, "claude-opus-4-6"),
    ("claude-haiku-4-5-20251001", 1, "claude-haiku-4-5-20251001"),
)
MILLION = ("claude-sonnet-4-6", "claude-opus-4-6")
TOOLS = (
    ("Read", 30),
    ("Bash", 26),
    ("Edit", 14),
    ("Grep", 8),
    ("Glob", 4),
    ("Write", 4),
    ("TodoWrite", 4),
    ("WebFetch", 2),
    ("WebSearch", 1),
    ("mcp__github__get_issue", 2),
    ("Task", 3),
)
TOOL_NAMES = tuple(name for name, _ in TOOLS)
TOOL_WEIGHTS = tuple(weight for _, weight in TOOLS)


def json_dumps(obj: object) -> bytes:
    """One line as Claude Code writes it: compact JSON, UTF-8, non-ASCII unescaped."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


try:  # the same bytes as json_dumps (a test holds them to it), several times faster
    from orjson import dumps
except ImportError:
    dumps = json_dumps


def project_dir_name(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def output_tokens(blocks: list[dict]) -> int:
    chars = 0
    for block in blocks:
        if block["type"] == "tool_use":
            chars += 60 + sum(len(v) for v in block["input"].values() if isinstance(v, str))
        else:
            chars += len(block.get("text") or block.get("thinking") or "")
    return chars // 4


@dataclass
class SessionFacts:
    """What one session's files hold, as a loader should count it."""

    session_id: str
    project: str
    project_dir: str
    lines: int = 0
    bytes: int = 0
    subagent_files: int = 0
    compactions: int = 0
    requests: int = 0
    input_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    peak_occupancy: int = 0
    last_occupancy: int = 0
    malformed_lines: int = 0


@dataclass
class Plan:
    index: int
    session_id: str
    cwd: str
    start_ms: int
    budget: int
    files: list[tuple[str, int]]  # project files: (path, size in characters)


@dataclass
class Transcript:
    """The lines of one file (main session or subagent) and its own context tracking."""

    agent_id: str | None
    model: str
    lines: list[bytes] = field(default_factory=list)
    size: int = 0
    parent: str | None = None
    context: int = 0
    cached: int = 0
    last_request_ms: int = -(10**12)


class SessionWriter:
    def __init__(self, plan: Plan, pools: Pools, seed: int, *, malformed: bool) -> None:
        self.plan, self.pools = plan, pools
        self.rng = rng = random.Random(f"{seed}:session:{plan.index}")
        self.malformed = malformed
        model, _, sub_model = rng.choices(MODELS, weights=[w for _, w, _ in MODELS])[0]
        self.minor = rng.randint(3, 120)
        self.version = f"2.1.{self.minor}"
        self.window = self.window_of(model)
        self.sub_model = sub_model
        self.cjk = rng.random() < 0.08
        self.branch = rng.choice(("main", "main", "dev", f"fix/{rng.choice(NOUNS)}-{rng.choice(VERBS)}"))
        self.slug = "-".join(rng.choice(SLUG_WORDS) for _ in range(3))
        self.ms = plan.start_ms
        self.overhead = rng.randint(14_000, 24_000)
        self.facts = SessionFacts(plan.session_id, plan.cwd, project_dir_name(plan.cwd))
        self.main = Transcript(None, model, context=self.overhead)
        self.agents: list[Transcript] = []

    def window_of(self, model: str) -> int:
        million = model.startswith(MILLION[0]) or (model.startswith(MILLION[1]) and self.minor >= 75)
        return 1_000_000 if million else 200_000

    # -- ids, time, bytes
    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:]}"

    def short_id(self, prefix: str) -> str:
        return prefix + base64.b64encode(self.rng.randbytes(18)).decode().translate(ID_SAFE)

    def tick(self, low_ms: int, high_ms: int) -> str:
        self.ms += self.rng.randint(low_ms, high_ms)
        return (EPOCH + timedelta(milliseconds=self.ms)).isoformat(timespec="milliseconds") + "Z"

    def total_size(self) -> int:
        return self.main.size + sum(a.size for a in self.agents)

    def emit(self, t: Transcript, obj: dict) -> None:
        data = dumps(obj)
        t.lines.append(data)
        t.size += len(data) + 1

    def envelope(self, t: Transcript, kind: str, fields: dict, *, chain: bool = True) -> dict:
        obj: dict = {
            "parentUuid": t.parent if chain else None,
            "isSidechain": t.agent_id is not None,
            "userType": "external",
            "cwd": self.plan.cwd,
            "sessionId": self.plan.session_id,
            "version": self.version,
            "gitBranch": self.branch,
        }
        if t.agent_id is not None:
            obj["agentId"] = t.agent_id
        obj["slug"] = self.slug
        obj["type"] = kind
        obj.update(fields)
        obj["uuid"] = self.uuid()
        obj["timestamp"] = self.tick(30, 900)
        self.emit(t, obj)
        t.parent = obj["uuid"]
        return obj

    # -- user side
    def prompt(self, t: Transcript, text: str) -> None:
        self.tick(5_000, 240_000 if self.rng.random() < 0.9 else 1_800_000)
        if t.agent_id is None:
            self.emit(
                t,
                {
                    "type": "file-history-snapshot",
                    "messageId": self.uuid(),
                    "snapshot": {"messageId": t.parent, "trackedFileBackups": {}, "timestamp": self.tick(0, 5)},
                    "isSnapshotUpdate": False,
                },
            )
        t.context += tokens_of(text, cjk=self.cjk)
        fields: dict = {"message": {"role": "user", "content": text}}
        if t.agent_id is None:
            fields["promptId"] = self.uuid()
        self.envelope(t, "user", fields)

    def prompt_text(self) -> str:
        rng = self.rng
        path = rng.choice(self.plan.files)[0]
        words = {"path": path, "noun": rng.choice(NOUNS), "noun2": rng.choice(NOUNS), "verb": rng.choice(VERBS)}
        words["adj"] = rng.choice(ADJECTIVES)
        text = rng.choice(CJK_PROMPTS if self.cjk else PROMPTS).format(**words)
        roll = rng.random()
        if roll < 0.06:  # a pasted log or stack trace
            text += "\n\n```\n" + self.pools.chunk(self.pools.log, rng, int(rng.lognormvariate(7.5, 1.0))) + "\n```"
        elif roll < 0.12:
            text += " " + self.pools.prose_text(rng, rng.randint(200, 1500), cjk=self.cjk)
        return text

    def command(self, t: Transcript, name: str, stdout: str) -> None:
        self.envelope(t, "user", {"message": {"role": "user", "content": CAVEAT}, "isMeta": True})
        markup = f"<command-name>{name}</command-name>\n            <command-message>{name[1:]}</command-message>\n            <command-args></command-args>"
        self.envelope(t, "user", {"message": {"role": "user", "content": markup}})
        if stdout:
            content = f"<local-command-stdout>{stdout}</local-command-stdout>"
            self.envelope(t, "user", {"message": {"role": "user", "content": content}})

    # -- assistant side
    def respond(self, t: Transcript, blocks: list[dict], stop: str, out_tokens: int) -> None:
        rng = self.rng
        self.tick(1_500, 20_000)
        prompt_size = t.context
        fresh = rng.randint(1, 12)
        if t.cached == 0 or self.ms - t.last_request_ms > CACHE_TTL_MS:
            read = min(SYSTEM_PREFIX, prompt_size - fresh)
        else:
            read = min(t.cached, prompt_size - fresh)
        creation = prompt_size - fresh - read
        output = out_tokens + rng.randint(8, 90)
        usage: dict = {
            "input_tokens": fresh,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": creation, "ephemeral_1h_input_tokens": 0},
            "output_tokens": output,
            "service_tier": "standard",
        }
        if any(b.get("name") == "WebSearch" for b in blocks):
            usage["server_tool_use"] = {"web_search_requests": 1, "web_fetch_requests": 0}
        message_id, request_id = self.short_id("msg_01"), self.short_id("req_011C")
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            message = {
                "model": t.model,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if last else None,
                "stop_sequence": None,
                "usage": usage,
            }
            self.envelope(t, "assistant", {"message": message, "requestId": request_id})
        t.last_request_ms = self.ms
        t.cached = prompt_size
        t.context = prompt_size + output
        f = self.facts
        f.requests += 1
        f.input_tokens += fresh
        f.cache_creation_tokens += creation
        f.cache_read_tokens += read
        f.output_tokens += output
        if t.agent_id is None:
            f.peak_occupancy = max(f.peak_occupancy, prompt_size)
            f.last_occupancy = prompt_size

    def thinking(self) -> dict:
        rng = self.rng
        text = self.pools.prose_text(rng, int(rng.lognormvariate(6.3, 0.9)))
        return {
            "type": "thinking",
            "thinking": text,
            "signature": self.pools.slice(self.pools.b64, rng, rng.randint(300, 2400)),
        }

    def text_block(self, size: int) -> dict:
        rng = self.rng
        text = self.pools.prose_text(rng, size, cjk=self.cjk and rng.random() < 0.8)
        if rng.random() < 0.2:
            text += "\n\n```python\n" + self.pools.chunk(self.pools.code, rng, rng.randint(200, 2500)) + "\n```"
        return {"type": "text", "text": text}

    def answer(self, t: Transcript) -> None:
        rng = self.rng
        blocks = [self.thinking()] if rng.random() < 0.5 else []
        blocks.append(self.text_block(int(rng.lognormvariate(6.0, 0.9))))
        self.respond(t, blocks, "end_turn", output_tokens(blocks))

    def api_error(self, t: Transcript) -> None:
        text = 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
        zero = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {
            "id": self.uuid(),
            "model": "<synthetic>",
            "role": "assistant",
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": zero,
            "content": [{"type": "text", "text": text}],
        }
        self.envelope(t, "assistant", {"message": message, "isApiErrorMessage": True})

    def step(self, t: Transcript) -> None:
        """One tool-calling response and its results (a subagent for Task)."""
        rng = self.rng
        blocks: list[dict] = []
        if rng.random() < 0.3:
            blocks.append(self.thinking())
        if rng.random() < 0.45:
            blocks.append(self.text_block(int(rng.lognormvariate(5.0, 0.8))))
        parallel = 1 if rng.random() < 0.8 else rng.randint(2, 3)
        names = rng.choices(TOOL_NAMES, weights=TOOL_WEIGHTS, k=parallel)
        if t.agent_id is not None:
            names = ["Read" if n == "Task" else n for n in names]
        calls = []
        for name in names:
            tool_id = self.short_id("toolu_01")
            if name == "Task":
                tool_input: dict = {
                    "description": f"{rng.choice(VERBS).title()} {rng.choice(NOUNS)}s",
                    "prompt": self.pools.prose_text(rng, rng.randint(200, 1200)),
                    "subagent_type": rng.choice(("Explore", "general-purpose")),
                }
                calls.append((tool_id, name, None))
            else:
                room = self.window - 12_000 - t.context
                tool_input, content, payload, error = tool_call(
                    name, rng=rng, pools=self.pools, files=self.plan.files, cwd=self.plan.cwd, room=room
                )
                calls.append((tool_id, name, (content, payload, error)))
            blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.respond(t, blocks, "tool_use", output_tokens(blocks))
        for (tool_id, name, outcome), block in zip(calls, blocks[-len(calls) :], strict=True):
            if outcome is None:
                outcome = self.subagent(block["input"])
            content, payload, error = outcome
            result: dict = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
            if error:
                result["is_error"] = True
            if isinstance(content, str):
                t.context += tokens_of(content, cjk=self.cjk)
            else:
                t.context += sum(
                    tokens_of(c.get("text") or c.get("source", {}).get("data", "")[:6000]) for c in content
                )
            self.tick(200, 30_000 if name == "Bash" else 3_000)
            fields = {"message": {"role": "user", "content": [result]}, "toolUseResult": payload}
            if self.malformed and t.agent_id is None and self.rng.random() < 0.0015:
                self.garble(t, fields)
            else:
                self.envelope(t, "user", fields)

    def garble(self, t: Transcript, fields: dict) -> None:
        """A tool result line cut short mid-file (a crash while writing): one malformed line."""
        self.envelope(t, "user", fields)
        line = t.lines.pop()
        cut = line[: self.rng.randint(20, len(line) - 2)]
        t.lines.append(cut)
        t.size += len(cut) - len(line)
        self.facts.malformed_lines += 1

    def subagent(self, task: dict) -> tuple[list[dict], dict, bool]:
        agent = Transcript(f"a{self.rng.getrandbits(64):016x}", self.sub_model, context=self.rng.randint(9_000, 16_000))
        self.agents.append(agent)
        self.facts.subagent_files += 1
        saved_ms = self.ms
        self.prompt(agent, task["prompt"])
        for _ in range(self.rng.randint(1, 8)):
            self.step(agent)
            if self.total_size() >= self.plan.budget:
                break
        self.answer(agent)
        final = json.loads(agent.lines[-1])["message"]["content"][0]["text"]
        content = [{"type": "text", "text": final}]
        payload = {"status": "completed", "prompt": task["prompt"], "agentId": agent.agent_id, "content": content,
                   "totalDurationMs": self.ms - saved_ms, "totalTokens": agent.context, "totalToolUseCount": len(agent.lines) // 3}  # fmt: skip
        return content, payload, False

    # -- compaction
    def compact(self, trigger: str) -> None:
        t, rng = self.main, self.rng
        boundary = {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "level": "info",
            "compactMetadata": {"trigger": trigger, "preTokens": t.context},
        }
        logical = t.parent
        self.envelope(t, "system", {**boundary, "logicalParentUuid": logical}, chain=False)
        summary = SUMMARY_OPENING + self.pools.prose_text(rng, rng.randint(2_000, 9_000), cjk=self.cjk)
        fields = {
            "message": {"role": "user", "content": summary},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
        }
        self.envelope(t, "user", fields)
        t.context = self.overhead + tokens_of(summary, cjk=self.cjk)
        t.cached = 0
        self.facts.compactions += 1

    # -- the session
    def turn(self) -> None:
        t, rng = self.main, self.rng
        roll = rng.random()
        if roll < 0.03:
            self.command(t, "/compact", "Compacted (ctrl+o to see full summary)")
            self.compact("manual")
        elif roll < 0.07:
            name = rng.choice(COMMANDS)
            if name == "/model":  # a switch within the same window size
                same = [m for m, _, _ in MODELS if self.window_of(m) == self.window]
                t.model = rng.choice(same)
            self.command(t, name, f"Set model to {t.model}" if name == "/model" else "")
        self.prompt(t, self.prompt_text())
        if rng.random() < 0.015:
            self.api_error(t)
        steps = min(40, int(rng.lognormvariate(1.3, 0.9)))
        for _ in range(steps):
            if t.context >= AUTOCOMPACT[self.window]:
                self.compact("auto")
            self.step(t)
            if self.total_size() >= self.plan.budget:
                break
        if t.context >= AUTOCOMPACT[self.window]:
            self.compact("auto")
        if rng.random() < 0.03:
            text = "[Request interrupted by user]"
            self.envelope(t, "user", {"message": {"role": "user", "content": [{"type": "text", "text": text}]}})
            return
        self.answer(t)
        self.envelope(
            t, "system", {"subtype": "turn_duration", "durationMs": rng.randint(3_000, 400_000), "isMeta": False}
        )

    def write(self, projects: Path) -> SessionFacts:
        rng = self.rng
        if rng.random() < 0.12:  # a resumed session: titles of earlier conversations first
            for _ in range(rng.randint(1, 3)):
                self.emit(
                    self.main,
                    {"type": "summary", "summary": self.pools.prose_text(rng, 50)[:80], "leafUuid": self.uuid()},
                )
        while True:
            self.turn()
            if self.total_size() >= self.plan.budget:
                break
        torn = self.malformed and rng.random() < 0.03
        if torn:  # the copy caught the last line half-written
            self.prompt(self.main, self.prompt_text())
            line = self.main.lines.pop()
            self.main.lines.append(line[: rng.randint(10, len(line) - 2)])
            self.facts.malformed_lines += 1
        folder = projects / self.facts.project_dir
        folder.mkdir(parents=True, exist_ok=True)
        data = b"\n".join(self.main.lines) + (b"" if torn else b"\n")
        (folder / f"{self.plan.session_id}.jsonl").write_bytes(data)
        self.facts.lines = len(self.main.lines)
        self.facts.bytes = len(data)
        if self.agents:
            sub = folder / self.plan.session_id / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            for agent in self.agents:
                agent_data = b"\n".join(agent.lines) + b"\n"
                (sub / f"agent-{agent.agent_id}.jsonl").write_bytes(agent_data)
                self.facts.lines += len(agent.lines)
                self.facts.bytes += len(agent_data)
        return self.facts
