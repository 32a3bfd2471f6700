# ruff: noqa: E501 -- long literal transcript texts read better unwrapped
"""Write a small, deterministic set of Claude Code sessions under ``data-samples/claude/``.

Run: ``python data-samples/make_claude.py [OUT_DIR]`` (default: ``claude/`` next to this file).
Standard library only; the same output bytes on every run and every machine.

What is in it (made up by us, shaped like ``spec/claude-code-jsonl.md``):

* 4 projects, 13 sessions over two weeks of March 2026, Claude Code 1.0.24 to 2.1.120;
* models Opus 4.6/4.7, Sonnet 4/4.5/4.6 (1M context, occupancy past 200k), Haiku 4.5;
* split assistant rows sharing ``message.id``/``requestId``, each repeating the usage;
  cache reads and writes that follow the 5-minute prompt cache;
* auto and manual compactions (``compact_boundary`` + ``isCompactSummary`` summary);
* subagents in all three layouts: ``<session>/subagents/agent-<id>.jsonl`` (+ ``.meta.json``),
  ``agent-<id>.jsonl`` beside the session, and sidechain lines inline in the main file;
* tool errors, a rejected tool call, an interrupt, an API error, queued prompts,
  AskUserQuestion, MCP and web tools, CJK prompts and file contents;
* oversized tool outputs that Claude Code keeps in ``<session>/tool-results/`` (so the
  recorded occupancy exceeds what the transcript's text alone would explain).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "claude"
SEED = 20260301
CACHE_TTL_SECONDS = 300
GLOBAL_CACHED_PREFIX = 9_800  # the system prompt + tool schemas shared by every session

CJK = re.compile("[\u4e00-\u9fa5]")

REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
INTERRUPTED_FOR_TOOL = "[Request interrupted by user for tool use]"
SUMMARY_OPENING = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
)


def estimate(text: str) -> int:
    """Our rough token count of a text (CJK characters are denser)."""
    cjk = len(CJK.findall(text))
    return int((cjk / 1.5) + (len(text) - cjk) / 4) + 1


def project_dir_name(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


# ---------------------------------------------------------------- text material


PY_NOUNS = ["cart", "order", "discount", "price", "invoice", "customer", "coupon", "stock", "tax"]
PY_VERBS = ["apply", "compute", "validate", "load", "render", "merge", "refresh", "split", "total"]


def python_file(rng: random.Random, module: str, functions: int) -> str:
    lines = [
        f'"""{module}: {rng.choice(PY_NOUNS)} helpers."""',
        "",
        "from decimal import Decimal",
        "",
    ]
    for _ in range(functions):
        name = f"{rng.choice(PY_VERBS)}_{rng.choice(PY_NOUNS)}"
        arg = rng.choice(PY_NOUNS)
        lines += [
            "",
            f"def {name}({arg}, *, rate: Decimal = Decimal('0.{rng.randint(5, 25):02d}')):",
            f'    """{name.replace("_", " ").capitalize()} for one {arg}."""',
            f"    if {arg} is None:",
            f"        raise ValueError('missing {arg}')",
            f"    subtotal = sum(item.price * item.quantity for item in {arg}.items)",
            "    return (subtotal * (1 - rate)).quantize(Decimal('0.01'))",
        ]
    return "\n".join(lines) + "\n"


def template(rng: random.Random, name: str, rows: int) -> str:
    """A Django template of ``rows`` table rows, some with a hard-coded currency symbol."""
    out = ["{% extends 'base.html' %}", f"{{% block content %}}<h1>{name.replace('_', ' ').title()}</h1>", "<table>"]
    for j in range(rows):
        field = rng.choice(PY_NOUNS)
        price = "€{{ item.price }}" if rng.random() < 0.2 else "{{ item.price|format_price:currency }}"
        out.append(
            f"  <tr class='{field}-row'><td>{{{{ item.{field}_{j}.name }}}}</td><td>{price}</td><td>{{{{ item.quantity }}}}</td></tr>"
        )
    return "\n".join([*out, "</table>", "{% endblock %}"])


def numbered(text: str, start: int = 1) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), start))


def pytest_output(rng: random.Random, *, failed: int, passed: int) -> str:
    dots = "".join(rng.choice("....F") if failed else "." for _ in range(passed + failed))
    head = (
        f"============================= test session starts ==============================\n"
        f"collected {passed + failed} items\n\ntests/test_cart.py {dots}\n"
    )
    if not failed:
        return (
            head
            + f"\n============================== {passed} passed in {rng.uniform(0.4, 3):.2f}s ==============================="
        )
    body = (
        "\n=================================== FAILURES ===================================\n"
        "____________________________ test_discount_stacking ____________________________\n"
        "    def test_discount_stacking():\n"
        ">       assert apply_discount(cart, codes=['SPRING', 'VIP']).total == Decimal('72.00')\n"
        "E       AssertionError: assert Decimal('64.80') == Decimal('72.00')\n"
    )
    return (
        head + body + f"\n========================= {failed} failed, {passed} passed in 1.87s ========================="
    )


def csv_preview(rng: random.Random, rows: int) -> str:
    out = ["event_id,ts,user_id,amount,currency,country"]
    for i in range(rows):
        out.append(
            f"{100000 + i},2026-03-0{rng.randint(1, 9)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z,"
            f"u{rng.randint(1000, 9999)},{rng.uniform(1, 400):.2f},{rng.choice(['EUR', 'USD', 'JPY'])},"
            f"{rng.choice(['DE', 'FR', 'US', 'JP', 'CN'])}"
        )
    return "\n".join(out)


CJK_LINES = [
    "欢迎使用翻译工具，请选择源语言和目标语言。",
    "文件已保存到输出目录。",
    "无法读取文件：编码格式不正确。",
    "请检查网络连接后重试。",
    "翻译完成，共处理了一百二十条句子。",
    "术语表已更新，新增十五个条目。",
    "用户界面文本需要保持简洁明了。",
]


def cjk_json(rng: random.Random, entries: int) -> str:
    pairs = {f"msg.{i:03d}": rng.choice(CJK_LINES) for i in range(entries)}
    return json.dumps(pairs, ensure_ascii=False, indent=2)


# ---------------------------------------------------------------- the writer


@dataclass
class Writer:
    """Appends Claude Code lines for one session (or one subagent) and tracks its usage."""

    rng: random.Random
    session_id: str
    cwd: str
    version: str
    model: str
    clock: datetime
    branch: str = "main"
    overhead: int = 15_000  # system prompt, tools, CLAUDE.md: in the request, never in the file
    agent_id: str | None = None
    inline_sidechain: bool = False
    lines: list[dict] = field(default_factory=list)
    parent: str | None = None
    context: int = 0
    cached: int = 0
    last_request: datetime | None = None
    window_threshold: int = 167_000
    modern: bool = True

    def __post_init__(self) -> None:
        self.context = self.overhead

    # -- ids and time
    def new_uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hex_id(self, prefix: str, n: int = 24) -> str:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
        return prefix + "".join(self.rng.choice(alphabet) for _ in range(n))

    def tick(self, low: float = 1.0, high: float = 6.0) -> str:
        self.clock += timedelta(milliseconds=int(self.rng.uniform(low, high) * 1000))
        return self.stamp()

    def stamp(self) -> str:
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock.microsecond // 1000:03d}Z"

    # -- lines
    def envelope(self, kind: str, *, parent: str | None | bool = True, **fields) -> dict:
        line: dict = {
            "parentUuid": self.parent if parent is True else (parent or None),
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.branch,
        }
        if self.agent_id is not None:
            line["agentId"] = self.agent_id
        if self.modern and self.agent_id is None:
            line["entrypoint"] = "cli"
        line["type"] = kind
        line.update(fields)
        line["uuid"] = self.new_uuid()
        line["timestamp"] = self.tick()
        self.lines.append(line)
        self.parent = line["uuid"]
        return line

    def raw(self, line: dict) -> None:
        self.lines.append(line)

    def prompt(self, text: str, *, hidden: int = 0) -> dict:
        self.tick(8, 90)
        if self.modern and self.agent_id is None:
            self.raw(
                {
                    "type": "file-history-snapshot",
                    "messageId": self.new_uuid(),
                    "snapshot": {
                        "messageId": self.parent,
                        "trackedFileBackups": {},
                        "timestamp": self.stamp(),
                    },
                    "isSnapshotUpdate": False,
                }
            )
        self.context += estimate(text) + hidden
        return self.envelope("user", message={"role": "user", "content": text})

    def meta(self, text: str) -> dict:
        return self.envelope("user", message={"role": "user", "content": text}, isMeta=True)

    def respond(self, blocks: list[dict], *, stop: str = "tool_use", think: str | None = None) -> list[dict]:
        """One API response: a split row per content block, sharing message id and request id."""
        gap = (self.clock - self.last_request).total_seconds() if self.last_request else 10_000
        prompt_size = self.context
        if gap > CACHE_TTL_SECONDS or self.cached == 0:
            cache_read = min(GLOBAL_CACHED_PREFIX, prompt_size - 4)
        else:
            cache_read = min(self.cached, prompt_size - 4)
        fresh = self.rng.randint(3, 9)
        creation = max(prompt_size - cache_read - fresh, 0)
        if think:
            blocks = [
                {"type": "thinking", "thinking": think, "signature": self.hex_id("Eu", 64)},
                *blocks,
            ]
        output = sum(estimate(json.dumps(b, ensure_ascii=False)) for b in blocks) + self.rng.randint(5, 40)
        usage = {
            "input_tokens": fresh,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": cache_read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": creation,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": output,
            "service_tier": "standard",
        }
        if not self.modern:
            usage.pop("cache_creation")
        message_id = self.hex_id("msg_01")
        request_id = self.hex_id("req_011C")
        rows = []
        self.tick(2, 25)
        for block in blocks:
            rows.append(
                self.envelope(
                    "assistant",
                    message={
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": self.model,
                        "content": [block],
                        "stop_reason": stop if block is blocks[-1] else None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                    requestId=request_id,
                )
            )
            self.clock += timedelta(milliseconds=self.rng.randint(40, 900))
        self.last_request = self.clock
        self.cached = prompt_size
        self.context = prompt_size + output
        return rows

    def say(self, text: str, *, think: str | None = None) -> None:
        self.respond([{"type": "text", "text": text}], stop="end_turn", think=think)
        if self.modern and self.agent_id is None:
            self.envelope(
                "system",
                subtype="turn_duration",
                durationMs=self.rng.randint(4_000, 180_000),
                isMeta=False,
            )

    def call(self, name: str, tool_input: dict, *, say: str | None = None, think: str | None = None) -> str:
        tool_id = self.hex_id("toolu_01")
        blocks = [{"type": "text", "text": say}] if say else []
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.respond(blocks, think=think)
        return tool_id

    def result(
        self,
        tool_id: str,
        content: str | list,
        *,
        error: bool = False,
        payload: object = None,
        hidden: int = 0,
    ) -> dict:
        """A tool_result line; ``hidden`` tokens reach the model without being in this file."""
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        self.context += estimate(text) + hidden
        block: dict = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if error:
            block["is_error"] = True
        fields: dict = {"message": {"role": "user", "content": [block]}}
        if payload is not None:
            fields["toolUseResult"] = payload
        self.tick(0.2, 4)
        return self.envelope("user", **fields)

    def tool(self, name: str, tool_input: dict, content, *, say=None, think=None, **kw) -> str:
        tool_id = self.call(name, tool_input, say=say, think=think)
        self.result(tool_id, content, **kw)
        return tool_id

    def read(self, path: str, text: str, *, hidden: int = 0, say: str | None = None) -> None:
        body = numbered(text)
        payload = {
            "type": "text",
            "file": {
                "filePath": path,
                "content": text,
                "numLines": text.count("\n") + 1,
                "startLine": 1,
                "totalLines": text.count("\n") + 1,
            },
        }
        self.tool("Read", {"file_path": path}, body, payload=payload, hidden=hidden, say=say)

    def bash(self, command: str, output: str, *, description: str, error: bool = False, hidden: int = 0) -> None:
        content = f"Exit code 1\n{output}" if error else output
        payload = (
            f"Error: {output}" if error else {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        )
        self.tool(
            "Bash",
            {"command": command, "description": description},
            content,
            error=error,
            payload=payload,
            hidden=hidden,
        )

    def edit(self, path: str, old: str, new: str, *, say: str | None = None) -> None:
        payload = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "replaceAll": False,
            "userModified": False,
        }
        content = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{numbered(new, 40)}"
        self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new},
            content,
            payload=payload,
            say=say,
        )

    def todo(self, items: list[tuple[str, str]]) -> None:
        todos = [{"content": c, "status": s, "activeForm": c[0].upper() + c[1:] + "…"} for c, s in items]
        self.tool(
            "TodoWrite",
            {"todos": todos},
            "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.",
            payload={"oldTodos": [], "newTodos": todos},
        )

    def ask(self, question: str, header: str, options: list[tuple[str, str]], answer: str) -> None:
        questions = [
            {
                "question": question,
                "header": header,
                "options": [{"label": label, "description": d} for label, d in options],
                "multiSelect": False,
            }
        ]
        tool_id = self.call("AskUserQuestion", {"questions": questions})
        self.tick(20, 120)
        self.result(
            tool_id,
            f'User has answered your questions: "{question}"="{answer}". You can now continue with the user\'s answers in mind.',
            payload={"questions": questions, "answers": {question: answer}},
        )

    def queue(self, text: str) -> None:
        """A prompt typed while the agent works: queue audit lines, then the attachment."""
        self.raw(
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": self.tick(),
                "sessionId": self.session_id,
                "content": text,
            }
        )
        self.raw(
            {
                "type": "queue-operation",
                "operation": "dequeue",
                "timestamp": self.tick(),
                "sessionId": self.session_id,
            }
        )
        self.context += estimate(text)
        self.envelope(
            "attachment",
            attachment={
                "type": "queued_command",
                "prompt": text,
                "commandMode": "prompt",
                "origin": {"kind": "human"},
            },
        )

    def interrupt(self, tool_id: str) -> None:
        self.result(tool_id, INTERRUPTED_FOR_TOOL, error=True, payload="Error: " + INTERRUPTED_FOR_TOOL)
        self.envelope(
            "user",
            message={"role": "user", "content": [{"type": "text", "text": INTERRUPTED_FOR_TOOL}]},
        )

    def api_error(self) -> None:
        self.tick(30, 60)
        self.envelope(
            "assistant",
            message={
                "id": self.new_uuid(),
                "model": "<synthetic>",
                "role": "assistant",
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "type": "message",
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
                "content": [
                    {
                        "type": "text",
                        "text": 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                    }
                ],
            },
            isApiErrorMessage=True,
        )

    def compact(self, *, trigger: str, summary: str) -> None:
        """``/compact`` or auto-compaction: the boundary, then the summary the chain continues from."""
        pre = self.context
        last = self.parent
        self.tick(20, 70)
        self.envelope(
            "system",
            parent=False,
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            logicalParentUuid=last,
            compactMetadata={"trigger": trigger, "preTokens": pre},
        )
        text = SUMMARY_OPENING + summary
        self.envelope(
            "user",
            message={"role": "user", "content": text},
            isVisibleInTranscriptOnly=True,
            isCompactSummary=True,
        )
        self.context = self.overhead + estimate(text)
        self.cached = 0

    def maybe_autocompact(self, summary: str) -> bool:
        if self.context >= self.window_threshold:
            self.compact(trigger="auto", summary=summary)
            return True
        return False

    def subagent(self, agent_type: str, description: str, prompt: str, *, model: str, say: str) -> Writer:
        """Call the Task tool and return the subagent's writer (its lines go where the layout says)."""
        tool_id = self.call(
            "Task",
            {"description": description, "prompt": prompt, "subagent_type": agent_type},
            say=say,
        )
        agent = Writer(
            rng=self.rng,
            session_id=self.session_id,
            cwd=self.cwd,
            version=self.version,
            model=model,
            clock=self.clock,
            branch=self.branch,
            overhead=9_000,
            agent_id=self.rng.getrandbits(32).to_bytes(4, "big").hex()[:7],
            modern=self.modern,
        )
        agent.task = (tool_id, agent_type, description, self.clock)  # type: ignore[attr-defined]
        agent.envelope("user", parent=False, message={"role": "user", "content": prompt})
        agent.context += estimate(prompt)
        return agent

    def finish(self, agent: Writer, final: str) -> None:
        """The subagent's last answer, then the Task result in this chain."""
        tool_id, agent_type, _, started = agent.task  # type: ignore[attr-defined]
        agent.respond([{"type": "text", "text": final}], stop="end_turn")
        self.clock = max(self.clock, agent.clock)
        content = [{"type": "text", "text": final}]
        self.result(
            tool_id,
            content,
            payload={
                "status": "completed",
                "agentId": agent.agent_id,
                "agentType": agent_type,
                "content": content,
                "totalDurationMs": int((agent.clock - started).total_seconds() * 1000),
                "totalTokens": agent.context,
                "totalToolUseCount": sum(1 for line in agent.lines if line.get("type") == "user") - 1,
            },
        )

    def dump(self) -> bytes:
        return b"".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for line in self.lines
        )


# ---------------------------------------------------------------- sessions


def t(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, 7, 123_000, tzinfo=UTC)


class Corpus:
    """Collects files to write: main sessions, subagent files, their meta and tool-results."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.files: dict[str, bytes] = {}

    def session(self, cwd: str, **kw) -> Writer:
        sid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        w = Writer(rng=self.rng, session_id=sid, cwd=cwd, **kw)
        if w.modern:
            w.raw({"type": "permission-mode", "permissionMode": "default", "sessionId": sid})
        return w

    def save(self, w: Writer, *, agents: list[tuple[Writer, str]] = (), summary: str | None = None) -> None:
        folder = f"projects/{project_dir_name(w.cwd)}"
        lines = list(w.lines)
        if summary:
            lines.insert(0, {"type": "summary", "summary": summary, "leafUuid": w.parent})
        for agent, layout in agents:
            if layout == "subagents-dir":
                base = f"{folder}/{w.session_id}/subagents/agent-{agent.agent_id}"
                self.files[base + ".jsonl"] = agent.dump()
                meta = {"agentType": agent.task[1], "description": agent.task[2]}  # type: ignore[attr-defined]
                self.files[base + ".meta.json"] = json.dumps(meta, ensure_ascii=False).encode() + b"\n"
            elif layout == "agent-file":
                self.files[f"{folder}/agent-{agent.agent_id}.jsonl"] = agent.dump()
            else:  # inline: the sidechain lines sit in the main file, before the Task result
                lines.extend(agent.lines)
        if any(layout == "inline" for _, layout in agents):
            lines.sort(key=lambda line: line.get("timestamp", ""))
        w.lines = lines
        self.files[f"{folder}/{w.session_id}.jsonl"] = w.dump()

    def tool_result_file(self, w: Writer, name: str, text: str) -> None:
        self.files[f"projects/{project_dir_name(w.cwd)}/{w.session_id}/tool-results/{name}"] = text.encode()


WEBSHOP = "/home/dev/webshop"
PIPELINE = "/home/dev/data-pipeline"
TRANSLATE = "/home/dev/翻译工具"
INFRA = "/home/dev/infra-scripts"


def webshop_discounts(c: Corpus) -> None:
    """Opus 4.6, long: reads big files and logs, auto-compacts twice, an Explore subagent."""
    rng = c.rng
    w = c.session(
        WEBSHOP,
        version="2.1.34",
        model="claude-opus-4-6",
        clock=t(2, 9, 12),
        branch="feature/cart-discounts",
        overhead=18_400,
    )
    w.prompt(
        "Add stackable discount codes to the cart. Codes in SPRING/VIP combine multiplicatively; cap the total discount at 40%."
    )
    w.todo(
        [
            ("read the cart and pricing modules", "in_progress"),
            ("design stacking rules", "pending"),
            ("write tests", "pending"),
        ]
    )
    agent = w.subagent(
        "Explore",
        "Find discount code paths",
        "Find every place where discount codes are parsed, validated or applied in this repo. Report file paths and function names.",
        model="claude-haiku-4-5-20251001",
        say="I'll explore the codebase first.",
    )
    agent.tool(
        "Grep",
        {"pattern": "discount", "output_mode": "files_with_matches"},
        "Found 6 files\n/home/dev/webshop/shop/cart.py\n/home/dev/webshop/shop/pricing.py\n/home/dev/webshop/shop/coupons.py\n/home/dev/webshop/tests/test_cart.py\n/home/dev/webshop/shop/admin.py\n/home/dev/webshop/shop/api/views.py",
        payload={"mode": "files_with_matches", "numFiles": 6},
    )
    agent.read("/home/dev/webshop/shop/coupons.py", python_file(rng, "coupons", 5))
    agent.read("/home/dev/webshop/shop/pricing.py", python_file(rng, "pricing", 6))
    w.finish(
        agent,
        "Discount codes are parsed in shop/coupons.py (parse_code, validate_code), applied in shop/pricing.py (apply_discount) and exposed by shop/api/views.py (CartView.post). Tests live in tests/test_cart.py.",
    )
    w.read("/home/dev/webshop/shop/cart.py", python_file(rng, "cart", 9), hidden=21_000)
    w.read("/home/dev/webshop/shop/pricing.py", python_file(rng, "pricing", 6), hidden=14_000)
    w.say(
        "The cart applies one code at a time in `apply_discount`. I'll add a `combine_codes` step that multiplies the remaining fractions and caps the result at 40%.",
        think="Multiplicative stacking: total = 1 - prod(1 - r_i); cap at 0.4.",
    )
    for round_ in range(1, 13):
        w.prompt(
            rng.choice(
                [
                    "Go ahead.",
                    "Looks right, continue with the API layer.",
                    "Also keep the admin report in sync.",
                    "Run the full test suite now.",
                    "What about currency rounding?",
                ]
            )
        )
        w.edit(
            "/home/dev/webshop/shop/pricing.py",
            "    return apply_discount(cart, code)",
            f"    rates = [rate_of(c) for c in codes]\n    combined = 1 - prod(1 - r for r in rates)\n    return apply_rate(cart, min(combined, MAX_STACKED_{round_}))",
        )
        failed = 1 if round_ in (2, 5) else 0
        w.bash(
            "python -m pytest tests/ -q",
            pytest_output(rng, failed=failed, passed=40 + round_),
            description="Run the test suite",
            error=bool(failed),
            hidden=9_000 + rng.randint(0, 6_000),
        )
        if round_ == 3:
            w.bash(
                "python -m pytest tests/ -q -p no:cacheprovider --log-level=DEBUG",
                "(output of 3,412 lines saved to tool-results/toolu_debug.txt)",
                description="Re-run tests with debug logging",
                hidden=38_000,
            )
            c.tool_result_file(w, "toolu_debug.txt", "DEBUG shop.pricing: combine_codes rates=[0.1, 0.2]\n" * 20)
        w.read(
            f"/home/dev/webshop/shop/module_{round_}.py",
            python_file(rng, f"module_{round_}", 6),
            hidden=7_000,
        )
        w.say(
            f"Step {round_} done: {'one test still fails on stacking order, fixing next' if failed else 'all tests pass'}."
        )
        w.maybe_autocompact(
            "1. Primary request: stackable discount codes, multiplicative, capped at 40%.\n"
            "2. Files: shop/pricing.py (combine_codes), shop/cart.py, shop/api/views.py.\n"
            "3. Tests: tests/test_cart.py; stacking order bug fixed.\n4. Next: admin report."
        )
    w.prompt("Open a PR with a short description.")
    tool_id = w.call(
        "Bash",
        {"command": "git push -u origin feature/cart-discounts", "description": "Push the branch"},
    )
    w.result(tool_id, REJECTED, error=True, payload="Error: " + REJECTED)
    w.prompt("Don't push yet, I'll review locally first. Just write the PR text.")
    w.say(
        "## Stackable discount codes\n\n- `combine_codes` multiplies remaining fractions\n- total discount capped at 40%\n- tests for stacking order and rounding"
    )
    c.save(w, agents=[(agent, "subagents-dir")])


def webshop_small(c: Corpus) -> None:
    rng = c.rng
    # Sonnet 4.5: a bug fix with a queued prompt and an interrupt.
    w = c.session(
        WEBSHOP,
        version="2.1.12",
        model="claude-sonnet-4-5-20250929",
        clock=t(4, 14, 3),
        overhead=16_200,
    )
    w.prompt("The checkout page shows prices with three decimals for JPY. Fix it.")
    w.tool(
        "Grep",
        {"pattern": "format_price", "path": "shop"},
        "shop/templatetags/money.py:12:def format_price(value, currency):\nshop/templates/checkout.html:44:{{ total|format_price:currency }}",
        payload={"mode": "content", "numLines": 2},
    )
    w.read("/home/dev/webshop/shop/templatetags/money.py", python_file(rng, "money", 3))
    w.queue("also check the order confirmation email template")
    w.edit(
        "/home/dev/webshop/shop/templatetags/money.py",
        "    return f'{value:.3f}'",
        "    digits = ZERO_DECIMAL.get(currency, 2)\n    return f'{value:.{digits}f}'",
    )
    tool_id = w.call("Bash", {"command": "python manage.py runserver", "description": "Start the dev server"})
    w.interrupt(tool_id)
    w.prompt("no need to run the server, just run the money tests")
    w.bash(
        "python -m pytest tests/test_money.py -q",
        pytest_output(rng, failed=0, passed=12),
        description="Run money tests",
    )
    w.read(
        "/home/dev/webshop/shop/templates/emails/order_confirmation.txt",
        "Order {{ order.number }}\nTotal: {{ order.total|format_price:order.currency }}\n",
    )
    w.say(
        "JPY now renders with zero decimals, and the confirmation email already uses `format_price`, so it is fixed too."
    )
    c.save(w)
    # Haiku: a quick question.
    w = c.session(
        WEBSHOP,
        version="2.1.12",
        model="claude-haiku-4-5-20251001",
        clock=t(9, 17, 40),
        overhead=14_100,
    )
    w.prompt("what does MAX_STACKED do again?")
    w.tool(
        "Grep",
        {"pattern": "MAX_STACKED", "output_mode": "content"},
        "shop/pricing.py:8:MAX_STACKED = Decimal('0.40')",
        payload={"mode": "content", "numLines": 1},
    )
    w.say("`MAX_STACKED` (shop/pricing.py:8) caps the combined discount of stacked codes at 40%.")
    w.prompt("/clear")
    c.save(w)
    # Haiku with auto-compaction turned off: it ends above 90% of its 200k window.
    w = c.session(WEBSHOP, version="2.1.34", model="claude-haiku-4-5-20251001", clock=t(10, 13, 10), overhead=14_600)
    w.window_threshold = 10**9
    w.prompt("Audit every template under shop/templates for hard-coded currency symbols and list them.")
    for i, name in enumerate(("base", "cart", "checkout", "product", "order_detail", "invoice", "account")):
        w.read(
            f"/home/dev/webshop/shop/templates/{name}.html",
            template(rng, name, 220),
            hidden=15_500 + 500 * i,
        )
        if i == 3:
            w.say("Four templates so far use a literal `€`; continuing with the rest.")
            w.prompt("keep going, include the emails too")
    w.say("Seven templates hard-code `€` (84 places); all should use `format_price`. I did not change anything yet.")
    c.save(w)


def pipeline_sessions(c: Corpus) -> None:
    rng = c.rng
    # Sonnet 4.6 with the 1M window: huge log and data reads take it past 200k.
    w = c.session(
        PIPELINE,
        version="2.1.90",
        model="claude-sonnet-4-6",
        clock=t(5, 10, 0),
        overhead=19_800,
        branch="etl-refactor",
    )
    w.window_threshold = 967_000
    w.prompt("The nightly ETL job got 4x slower since Tuesday. Find out why; logs are in logs/nightly/.")
    w.tool(
        "Glob",
        {"pattern": "logs/nightly/*.log"},
        "/home/dev/data-pipeline/logs/nightly/2026-03-02.log\n/home/dev/data-pipeline/logs/nightly/2026-03-03.log\n/home/dev/data-pipeline/logs/nightly/2026-03-04.log",
        payload={
            "filenames": ["2026-03-02.log", "2026-03-03.log", "2026-03-04.log"],
            "numFiles": 3,
        },
    )
    for day in (2, 3, 4):
        log = "\n".join(
            f"2026-03-0{day}T02:{m:02d}:00Z INFO stage={rng.choice(['extract', 'dedupe', 'join', 'load'])} rows={rng.randint(10_000, 900_000)} ms={rng.randint(200, 90_000)}"
            for m in range(40)
        )
        w.read(f"/home/dev/data-pipeline/logs/nightly/2026-03-0{day}.log", log, hidden=52_000)
    w.say(
        "The `join` stage went from ~9 s to ~85 s on 2026-03-03. Let me look at the data and the join code.",
        think="Compare stage timings day over day; join regressed.",
    )
    agent = w.subagent(
        "general-purpose",
        "Profile the join stage",
        "Profile etl/join.py on the sample partition and report the slowest operations.",
        model="claude-sonnet-4-6",
        say="I'll profile the join stage in a subagent.",
    )
    agent.read("/home/dev/data-pipeline/etl/join.py", python_file(rng, "join", 5), hidden=6_000)
    agent.bash(
        "python -m cProfile -s cumtime etl/join.py --sample",
        "   ncalls  tottime  cumtime filename:lineno(function)\n     1    0.01   84.10 join.py:40(run)\n 38211   71.20   71.20 {method 'apply' of 'DataFrame'}",
        description="Profile the join",
    )
    w.finish(
        agent,
        "94% of the join time is a row-wise DataFrame.apply added in commit 3f2a9c1 (currency conversion). A vectorized merge against the rates table removes it.",
    )
    w.prompt("Show me a sample of the input data first.")
    w.read("/home/dev/data-pipeline/data/sample/events.csv", csv_preview(rng, 60), hidden=88_000)
    w.tool(
        "mcp__github__get_commit",
        {"owner": "dev", "repo": "data-pipeline", "sha": "3f2a9c1"},
        json.dumps({"sha": "3f2a9c1", "message": "convert currencies per row", "files": ["etl/join.py"]}),
    )
    w.ask(
        "How should currency conversion handle missing rates?",
        "Missing rate",
        [
            ("Drop the row", "Skip events whose currency has no rate that day"),
            ("Use the last known rate", "Forward-fill the rates table"),
            ("Fail the job", "Raise and alert"),
        ],
        "Use the last known rate",
    )
    w.edit(
        "/home/dev/data-pipeline/etl/join.py",
        "    df['eur'] = df.apply(convert_row, axis=1)",
        "    df = df.merge(rates.ffill(), on=['day', 'currency'], how='left')\n    df['eur'] = df['amount'] * df['rate']",
    )
    w.bash(
        "python -m etl.run --date 2026-03-04 --dry-run",
        "\n".join(f"stage={s} ms={rng.randint(300, 9_000)}" for s in ("extract", "dedupe", "join", "load")),
        description="Dry-run the ETL",
        hidden=64_000,
    )
    w.say("The join now takes 7.9 s on the full day (was 85 s). Missing rates are forward-filled.")
    w.prompt("Great. Check the other three stages for the same pattern.")
    for stage in ("extract", "dedupe", "load"):
        w.read(f"/home/dev/data-pipeline/etl/{stage}.py", python_file(rng, stage, 4), hidden=31_000)
    w.say("No other stage uses row-wise apply. `dedupe` sorts twice; that's minor (~0.4 s).")
    c.tool_result_file(w, "toolu_events_csv.txt", csv_preview(rng, 40))
    c.save(w, agents=[(agent, "subagents-dir")])

    # Opus 4.7 (native 1M from 2.1.117): a schema migration, moderate size, a tool error.
    w = c.session(
        PIPELINE,
        version="2.1.120",
        model="claude-opus-4-7",
        clock=t(11, 8, 30),
        overhead=21_300,
        branch="etl-refactor",
    )
    w.window_threshold = 967_000
    w.prompt("Add a `country` column to the warehouse events table and backfill it from user profiles.")
    w.tool(
        "Read",
        {"file_path": "/home/dev/data-pipeline/migrations/0007_country.sql"},
        "<tool_use_error>File does not exist.</tool_use_error>",
        error=True,
        payload="Error: File does not exist.",
    )
    w.tool(
        "Write",
        {
            "file_path": "/home/dev/data-pipeline/migrations/0007_country.sql",
            "content": "ALTER TABLE events ADD COLUMN country TEXT;\nUPDATE events e SET country = u.country FROM users u WHERE u.id = e.user_id;\n",
        },
        "File created successfully at: /home/dev/data-pipeline/migrations/0007_country.sql",
        payload={
            "type": "create",
            "filePath": "/home/dev/data-pipeline/migrations/0007_country.sql",
        },
    )
    w.bash(
        "psql -f migrations/0007_country.sql warehouse_test",
        'ERROR:  column "country" of relation "events" already exists',
        description="Apply the migration on the test db",
        error=True,
    )
    w.say(
        "The test database already has the column from a manual change. I'll make the migration idempotent with `ADD COLUMN IF NOT EXISTS`."
    )
    w.prompt("ok do it, and batch the backfill by month")
    w.edit(
        "/home/dev/data-pipeline/migrations/0007_country.sql",
        "ADD COLUMN country TEXT",
        "ADD COLUMN IF NOT EXISTS country TEXT",
    )
    w.bash(
        "psql -f migrations/0007_country.sql warehouse_test",
        "ALTER TABLE\nUPDATE 48211\nUPDATE 51977\nUPDATE 50420",
        description="Apply the migration",
    )
    w.tool(
        "WebFetch",
        {
            "url": "https://www.postgresql.org/docs/current/sql-altertable.html",
            "prompt": "Does ADD COLUMN IF NOT EXISTS take an ACCESS EXCLUSIVE lock?",
        },
        "Yes: ALTER TABLE ... ADD COLUMN acquires an ACCESS EXCLUSIVE lock, but adding a nullable column without default is a metadata-only change.",
        payload={"code": 200, "durationMs": 1840},
    )
    w.say(
        "Migration applied in three monthly batches; adding the nullable column is metadata-only, so the lock is brief."
    )
    c.save(w)


def translate_sessions(c: Corpus) -> None:
    rng = c.rng
    # Sonnet 4.5 with CJK throughout, AskUserQuestion in Chinese, tool errors, a manual /compact.
    w = c.session(
        TRANSLATE,
        version="2.1.40",
        model="claude-sonnet-4-5-20250929",
        clock=t(6, 20, 15),
        overhead=15_600,
    )
    w.prompt("请把 locales/zh-CN.json 里缺少的条目补全，参考 en.json。")
    w.read(
        "/home/dev/翻译工具/locales/en.json",
        json.dumps({f"msg.{i:03d}": f"Message number {i}" for i in range(60)}, indent=2),
    )
    w.tool(
        "Read",
        {"file_path": "/home/dev/翻译工具/locales/zh-CN.json"},
        "<tool_use_error>File content (encoding GB18030) could not be decoded as UTF-8.</tool_use_error>",
        error=True,
        payload="Error: could not decode",
    )
    w.bash(
        "iconv -f GB18030 -t UTF-8 locales/zh-CN.json > /tmp/zh.json && wc -l /tmp/zh.json",
        "187 /tmp/zh.json",
        description="Convert the file to UTF-8",
    )
    w.read("/tmp/zh.json", cjk_json(rng, 45), hidden=4_000)
    w.ask(
        "转换后的文件应该保存为哪种编码？",
        "编码",
        [("UTF-8", "推荐：与其他语言文件一致"), ("GB18030", "保持原来的编码")],
        "UTF-8",
    )
    w.tool(
        "Write",
        {"file_path": "/home/dev/翻译工具/locales/zh-CN.json", "content": cjk_json(rng, 60)},
        "File created successfully at: /home/dev/翻译工具/locales/zh-CN.json",
        payload={"type": "update", "filePath": "/home/dev/翻译工具/locales/zh-CN.json"},
    )
    w.say("已补全 15 个缺少的条目，并把文件改为 UTF-8 编码。术语与 glossary.md 保持一致。")
    w.prompt("/compact")
    w.compact(
        trigger="manual",
        summary="用户要求补全 zh-CN.json 的缺失条目；文件已从 GB18030 转为 UTF-8，补全了 15 条。",
    )
    w.envelope(
        "user",
        message={
            "role": "user",
            "content": "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>",
        },
    )
    w.prompt("再检查一下 ja.json 有没有同样的问题")
    w.bash(
        "file locales/ja.json",
        "locales/ja.json: UTF-8 Unicode text",
        description="Check the encoding",
    )
    w.say("ja.json 已经是 UTF-8，无需转换。它缺少 3 个条目：msg.057、msg.058、msg.059。要补上吗？")
    c.save(w)
    # Haiku: short CJK session with a glossary lookup.
    w = c.session(
        TRANSLATE,
        version="2.1.40",
        model="claude-haiku-4-5-20251001",
        clock=t(12, 9, 5),
        overhead=13_900,
    )
    w.prompt("“上下文窗口”在术语表里怎么翻译？")
    w.tool(
        "Grep",
        {"pattern": "上下文", "path": "glossary.md", "output_mode": "content"},
        "glossary.md:31:| context window | 上下文窗口 | 不要译作“语境窗口” |",
        payload={"mode": "content", "numLines": 1},
    )
    w.say("术语表第 31 行：context window → 上下文窗口（不要译作“语境窗口”）。")
    c.save(w)


def infra_sessions(c: Corpus) -> None:
    rng = c.rng
    # Claude Code 1.0.24: a summary line first, sidechain lines inline in the main file.
    w = c.session(
        INFRA,
        version="1.0.24",
        model="claude-sonnet-4-20250514",
        clock=t(3, 11, 0),
        overhead=12_500,
        modern=False,
    )
    w.prompt("Write a script that rotates the nginx logs older than 7 days into S3.")
    agent = w.subagent(
        "general-purpose",
        "Check existing rotation",
        "Check whether logrotate is already configured for nginx on this repo's hosts and report the config.",
        model="claude-sonnet-4-20250514",
        say="Let me check the current rotation setup first.",
    )
    agent.read(
        "/home/dev/infra-scripts/ansible/roles/nginx/templates/logrotate.j2",
        "/var/log/nginx/*.log {\n  daily\n  rotate 14\n  compress\n  delaycompress\n}\n",
    )
    w.finish(
        agent,
        "logrotate keeps 14 daily compressed files in /var/log/nginx; nothing uploads to S3 yet.",
    )
    w.tool(
        "Write",
        {
            "file_path": "/home/dev/infra-scripts/bin/rotate-to-s3.sh",
            "content": "#!/bin/sh\nset -eu\nfind /var/log/nginx -name '*.gz' -mtime +7 -print0 | xargs -0 -I{} aws s3 mv {} s3://logs-archive/nginx/\n",
        },
        "File created successfully at: /home/dev/infra-scripts/bin/rotate-to-s3.sh",
    )
    w.api_error()
    w.bash("shellcheck bin/rotate-to-s3.sh", "", description="Lint the script")
    w.say(
        "Added bin/rotate-to-s3.sh: moves compressed nginx logs older than 7 days to s3://logs-archive/nginx/. shellcheck is clean."
    )
    c.save(w, agents=[(agent, "inline")], summary="Rotate nginx logs to S3")

    # Claude Code 2.0.30: subagent file beside the session, a queued prompt, Opus 4.1.
    w = c.session(
        INFRA,
        version="2.0.30",
        model="claude-opus-4-1-20250805",
        clock=t(7, 15, 45),
        overhead=16_900,
    )
    w.prompt(
        "Terraform plan fails on the staging VPC after the provider upgrade. Here's the error: `Unsupported argument: enable_classiclink`."
    )
    w.bash(
        "terraform -chdir=envs/staging plan -no-color",
        'Error: Unsupported argument\n\n  on vpc.tf line 14, in module "vpc":\n  14:   enable_classiclink = false\n\nAn argument named "enable_classiclink" is not expected here.',
        description="Run terraform plan",
        error=True,
    )
    agent = w.subagent(
        "Explore",
        "Find classiclink usages",
        "List every file under envs/ and modules/ that sets enable_classiclink or enable_classiclink_dns_support.",
        model="claude-haiku-4-5-20251001",
        say="I'll find every usage.",
    )
    agent.tool(
        "Grep",
        {"pattern": "classiclink", "output_mode": "files_with_matches"},
        "Found 3 files\nenvs/staging/vpc.tf\nenvs/prod/vpc.tf\nmodules/vpc/variables.tf",
        payload={"mode": "files_with_matches", "numFiles": 3},
    )
    w.finish(agent, "3 files: envs/staging/vpc.tf, envs/prod/vpc.tf, modules/vpc/variables.tf.")
    w.queue("do prod too but don't apply anything")
    for env in ("staging", "prod"):
        w.edit(f"/home/dev/infra-scripts/envs/{env}/vpc.tf", "  enable_classiclink = false\n", "")
    w.bash(
        "terraform -chdir=envs/staging plan -no-color",
        "No changes. Your infrastructure matches the configuration.",
        description="Plan again",
    )
    w.say(
        "Removed `enable_classiclink` from staging and prod (ClassicLink is gone from the AWS provider v5). Staging plans clean; nothing applied."
    )
    c.save(w, agents=[(agent, "agent-file")])

    # A few short maintenance sessions across the two weeks (daily-trend material).
    for day, model, version in (
        (8, "claude-sonnet-4-5-20250929", "2.1.20"),
        (10, "claude-haiku-4-5-20251001", "2.1.34"),
        (13, "claude-sonnet-4-6", "2.1.90"),
        (14, "claude-opus-4-6", "2.1.90"),
    ):
        w = c.session(
            INFRA,
            version=version,
            model=model,
            clock=t(day, 9 + day % 5, 20),
            overhead=14_000 + 500 * (day % 4),
        )
        w.prompt(
            rng.choice(
                [
                    "bump the base image to debian 13 in the Dockerfiles",
                    "why is the backup cron failing on db-2?",
                    "add a healthcheck to the grafana container",
                    "list the hosts still on kernel 6.1",
                ]
            )
        )
        w.bash(
            "grep -rn FROM docker/ | head",
            "docker/base/Dockerfile:1:FROM debian:12-slim\ndocker/worker/Dockerfile:1:FROM debian:12-slim",
            description="Find base images",
        )
        w.read(
            "/home/dev/infra-scripts/docker/base/Dockerfile",
            "FROM debian:12-slim\nRUN apt-get update && apt-get install -y --no-install-recommends ca-certificates\n"
            * 3,
            hidden=rng.randint(2_000, 30_000),
        )
        w.say(
            "Done. "
            + rng.choice(
                [
                    "Both Dockerfiles now use debian:13-slim.",
                    "The cron job lacked PGPASSFILE; fixed in the unit file.",
                    "Added a healthcheck on /api/health every 30s.",
                    "Three hosts remain on 6.1: db-2, db-3, edge-1.",
                ]
            )
        )
        c.save(w)


def build(out: Path) -> dict[str, bytes]:
    corpus = Corpus(random.Random(SEED))
    for make in (
        webshop_discounts,
        webshop_small,
        pipeline_sessions,
        translate_sessions,
        infra_sessions,
    ):
        make(corpus)
    if out.exists():
        shutil.rmtree(out)
    for rel, data in sorted(corpus.files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return corpus.files


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    files = build(out)
    sessions = sum(1 for rel in files if rel.count("/") == 2 and rel.endswith(".jsonl") and "/agent-" not in rel)
    size = sum(len(data) for data in files.values())
    print(
        f"wrote {len(files)} files ({sessions} sessions, {size / 1024:.0f} KiB) under {out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
