"""Write the Gemini CLI samples under ``data-samples/gemini`` (a ``~/.gemini/tmp`` layout).

Run: ``python data-samples/make_gemini.py`` (``make samples`` runs it). Three hand-made chats
of March 2026, in Gemini CLI's two file forms:

* ``session-…-refactor.json``: a document (written over many lines, as Gemini CLI does) with
  two prompts, tool calls (one failed), thoughts and cached input;
* ``session-…-docs.json``: a document whose model changes from Flash to Pro mid-session;
* ``session-…-rewind.jsonl``: a 0.40 log with ``$set`` patches, a message written twice under
  its id (the last write wins) and a ``$rewindTo`` that removes an answer from the history.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "gemini"
PROJECT = "/home/dev/shop"


def project_hash(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()


def user(identifier: str, time: str, text: str) -> dict[str, Any]:
    return {"id": identifier, "timestamp": time, "type": "user", "content": [{"text": text}]}


def answer(
    identifier: str,
    time: str,
    text: str,
    tokens: tuple[int, int, int, int, int],
    *,
    model: str = "gemini-2.5-flash",
    calls: list[dict[str, Any]] | None = None,
    thought: str | None = None,
) -> dict[str, Any]:
    prompt, cached, output, thoughts, tool = tokens
    message: dict[str, Any] = {
        "id": identifier,
        "timestamp": time,
        "type": "gemini",
        "content": text,
        "thoughts": [{"subject": "Plan", "description": thought, "timestamp": time}] if thought else [],
        "tokens": {
            "input": prompt,
            "output": output,
            "cached": cached,
            "thoughts": thoughts,
            "tool": tool,
            "total": prompt + output + thoughts + tool,
        },
        "model": model,
    }
    if calls:
        message["toolCalls"] = calls
    return message


def call(identifier: str, name: str, args: dict[str, Any], output: str, *, status: str = "success") -> dict[str, Any]:
    response: dict[str, Any] = {"output": output} if status == "success" else {"error": output}
    return {
        "id": identifier,
        "name": name,
        "args": args,
        "result": [{"functionResponse": {"id": identifier, "name": name, "response": response}}],
        "status": status,
        "timestamp": "2026-03-04T09:00:05.000Z",
        "displayName": name,
    }


def refactor() -> dict[str, Any]:
    return {
        "sessionId": "5b0c3f2e-1d4a-4e8f-9a61-0c2d7e4b9f01",
        "projectHash": project_hash(PROJECT),
        "startTime": "2026-03-04T09:00:00.000Z",
        "lastUpdated": "2026-03-04T09:06:30.000Z",
        "kind": "main",
        "messages": [
            user("r1", "2026-03-04T09:00:01.000Z", "Rename the Cart class to Basket across the shop."),
            answer(
                "r2",
                "2026-03-04T09:00:09.000Z",
                "",
                (8_421, 0, 212, 96, 0),
                thought="Find every use of Cart first.",
                calls=[
                    call("c1", "search_file_content", {"pattern": "class Cart"}, "shop/cart.py:3: class Cart:"),
                    call(
                        "c2",
                        "read_file",
                        {"absolute_path": "/home/dev/shop/missing.py"},
                        "File not found.",
                        status="error",
                    ),
                ],
            ),
            answer(
                "r3",
                "2026-03-04T09:01:15.000Z",
                "Renamed Cart to Basket in 4 files.",
                (9_950, 8_192, 388, 140, 12),
                calls=[
                    call(
                        "c3",
                        "replace",
                        {"file_path": "shop/cart.py", "old_string": "Cart", "new_string": "Basket"},
                        "OK",
                    )
                ],
            ),
            {"id": "r4", "timestamp": "2026-03-04T09:02:00.000Z", "type": "info", "content": "Checkpoint saved."},
            user("r5", "2026-03-04T09:05:00.000Z", "Now run the tests."),
            answer(
                "r6",
                "2026-03-04T09:06:30.000Z",
                "All 42 tests pass.",
                (11_204, 9_728, 95, 0, 0),
                calls=[call("c4", "run_shell_command", {"command": "pytest -q"}, "42 passed in 1.93s")],
            ),
        ],
    }


def docs() -> dict[str, Any]:
    return {
        "sessionId": "8e41d9a0-77b2-4c55-b0e3-5a9f1c6d2e17",
        "projectHash": project_hash(PROJECT),
        "startTime": "2026-03-11T14:20:00.000Z",
        "lastUpdated": "2026-03-11T14:31:10.000Z",
        "kind": "main",
        "messages": [
            user("d1", "2026-03-11T14:20:02.000Z", "Draft a README section on the checkout flow."),
            answer("d2", "2026-03-11T14:20:30.000Z", "Here is a first draft.", (5_310, 0, 920, 0, 0)),
            user("d3", "2026-03-11T14:29:00.000Z", "Use the Pro model to review it for accuracy."),
            answer(
                "d4",
                "2026-03-11T14:31:10.000Z",
                "Two steps were out of order; fixed.",
                (6_402, 4_096, 610, 1_204, 0),
                model="gemini-2.5-pro",
                thought="Compare the draft with checkout.py.",
            ),
        ],
    }


def rewind_log() -> list[dict[str, Any]]:
    header = {
        "sessionId": "c7a2e5f1-3b68-4d09-8f14-2e6b0d9a5c33",
        "projectHash": project_hash("/home/dev/blog"),
        "startTime": "2026-03-18T20:10:00.000Z",
        "lastUpdated": "2026-03-18T20:10:00.000Z",
        "kind": "main",
    }
    first = answer("g1", "2026-03-18T20:10:20.000Z", "", (3_002, 0, 44, 0, 0), model="gemini-3-flash-preview")
    rewritten = answer(
        "g1",
        "2026-03-18T20:10:24.000Z",
        "A title: Static Sites in 2026.",
        (3_002, 0, 118, 60, 0),
        model="gemini-3-flash-preview",
    )
    return [
        header,
        user("u1", "2026-03-18T20:10:15.000Z", "Suggest a title for my post on static sites."),
        {"$set": {"lastUpdated": "2026-03-18T20:10:15.000Z"}},
        first,
        rewritten,
        user("u2", "2026-03-18T20:12:00.000Z", "Make it longer."),
        answer(
            "g2",
            "2026-03-18T20:12:09.000Z",
            "Static Sites in 2026: Fast, Cheap, Yours.",
            (3_190, 2_048, 71, 0, 0),
            model="gemini-3-flash-preview",
        ),
        {"$rewindTo": "u2"},
        user("u3", "2026-03-18T20:13:00.000Z", "Make it shorter instead."),
        answer(
            "g3",
            "2026-03-18T20:13:06.000Z",
            "Static, Fast, Yours.",
            (3_175, 2_048, 39, 0, 0),
            model="gemini-3-flash-preview",
        ),
        {"$set": {"lastUpdated": "2026-03-18T20:13:06.000Z", "summary": "Blog post title"}},
    ]


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    shop = OUT / "tmp" / project_hash(PROJECT) / "chats"
    blog = OUT / "tmp" / project_hash("/home/dev/blog") / "chats"
    shop.mkdir(parents=True)
    blog.mkdir(parents=True)
    (shop / "session-2026-03-04T09-00-5b0c3f2e.json").write_text(json.dumps(refactor(), indent=2) + "\n")
    (shop / "session-2026-03-11T14-20-8e41d9a0.json").write_text(json.dumps(docs(), indent=2) + "\n")
    lines = (json.dumps(value, separators=(",", ":")) for value in rewind_log())
    (blog / "session-2026-03-18T20-10-c7a2e5f1.jsonl").write_text("\n".join(lines) + "\n")
    print(f"wrote 3 Gemini CLI chats under {OUT.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
