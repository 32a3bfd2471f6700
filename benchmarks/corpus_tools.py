"""Tool calls for ``corpus.py``: the input, result and ``toolUseResult`` of each tool Claude Code runs.

Imports: the standard library and ``corpus_text``. Sizes follow Claude Code's limits: a Read
returns at most 25,000 tokens (else the error it prints), Bash output at most 30,000 characters.
"""

from __future__ import annotations

import json
import random

from corpus_text import ADJECTIVES, NOUNS, VERBS, Pools, tokens_of

READ_MAX_TOKENS = 25_000
BASH_MAX_CHARS = 30_000
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
    "the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how "
    "to proceed."
)


def tool_call(
    name: str, *, rng: random.Random, pools: Pools, files: list[tuple[str, int]], cwd: str, room: int
) -> tuple[dict, str | list, object, bool]:
    """(input, result content, toolUseResult, is_error) of one call of ``name``.

    ``files`` are the project's (path, size); ``room`` is how many tokens the context can still take.
    """
    index = rng.randrange(len(files))
    if name == "Read":
        path, content, numbered = pools.project_file(*files[index])
        if rng.random() < 0.004:
            data = pools.slice(pools.b64, rng, rng.randint(20_000, 200_000))
            image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
            payload = {
                "type": "image",
                "file": {"base64": data, "type": "image/png", "originalSize": len(data) * 3 // 4},
            }
            return {"file_path": path.rsplit(".", 1)[0] + ".png"}, [image], payload, False
        tokens = tokens_of(numbered)
        if tokens > READ_MAX_TOKENS or tokens > room:
            text = (
                f"File content ({tokens} tokens) exceeds maximum allowed tokens ({READ_MAX_TOKENS}). Please use "
                "offset and limit parameters to read specific portions of the file, or use the GrepTool to "
                "search for specific content."
            )
            return {"file_path": path}, f"<tool_use_error>{text}</tool_use_error>", f"Error: {text}", True
        lines = content.count("\n") + 1
        file = {"filePath": path, "content": content, "numLines": lines, "startLine": 1, "totalLines": lines}
        return {"file_path": path}, numbered, {"type": "text", "file": file}, False
    if name == "Bash":
        size = min(BASH_MAX_CHARS, int(rng.lognormvariate(7.0, 1.4)))
        out = pools.chunk(pools.log, rng, size) if size > 40 else ""
        command = rng.choice(
            (
                "pytest -x -q",
                "git diff --stat",
                "npm run build",
                "ls -la src",
                "cargo test",
                "git log --oneline -20",
                "make lint",
            )
        )
        tool_input = {"command": command, "description": f"{rng.choice(VERBS).title()} the {rng.choice(NOUNS)}s"}
        if rng.random() < 0.06:
            return tool_input, f"Exit code 1\n{out}", f"Error: Exit code 1\n{out}", True
        return tool_input, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}, False
    if name == "Edit":
        path, content, _ = pools.project_file(*files[index])
        old = pools.chunk(content, rng, rng.randint(40, 600)) if len(content) > 100 else content
        new = old.replace("return", "return (") if "return" in old else old + "\n    # checked"
        tool_input = {"file_path": path, "old_string": old, "new_string": new}
        if rng.random() < 0.03:
            return tool_input, REJECTED, "User rejected tool use", True
        before = old.split("\n")
        patch = [{"oldStart": 1, "oldLines": len(before), "newStart": 1, "newLines": new.count("\n") + 1,
                  "lines": [f"-{x}" for x in before] + [f"+{x}" for x in new.split("\n")]}]  # fmt: skip
        snippet = "\n".join(f"{i:>6}\t{x}" for i, x in enumerate(new.split("\n")[:12], 1))
        result = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{snippet}"
        payload = {"filePath": path, "oldString": old, "newString": new, "originalFile": content,
                   "structuredPatch": patch, "userModified": False, "replaceAll": False}  # fmt: skip
        return tool_input, result, payload, False
    if name == "Write":
        path = f"{cwd}/src/{rng.choice(NOUNS)}_{rng.choice(VERBS)}.py"
        content = pools.chunk(pools.code, rng, int(rng.lognormvariate(7.5, 0.9)))
        payload = {"type": "create", "filePath": path, "content": content, "structuredPatch": []}
        return {"file_path": path, "content": content}, f"File created successfully at: {path}", payload, False
    if name in ("Grep", "Glob"):
        paths = [p for p, _ in rng.sample(files, min(len(files), rng.randint(1, 40)))]
        pattern = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
        if name == "Glob":
            payload = {
                "filenames": paths,
                "durationMs": rng.randint(2, 90),
                "numFiles": len(paths),
                "truncated": False,
            }
            return {"pattern": "**/*.py"}, "\n".join(paths), payload, False
        result = f"Found {len(paths)} files\n" + "\n".join(paths)
        payload = {"mode": "files_with_matches", "filenames": paths, "numFiles": len(paths)}
        return {"pattern": pattern, "output_mode": "files_with_matches"}, result, payload, False
    if name == "TodoWrite":
        todos = [
            {"content": f"{rng.choice(VERBS).title()} the {rng.choice(NOUNS)}", "status": rng.choice(("pending", "in_progress", "completed")), "activeForm": f"Working on the {rng.choice(NOUNS)}"}
            for _ in range(rng.randint(2, 8))
        ]  # fmt: skip
        result = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable"
        return {"todos": todos}, result, {"oldTodos": [], "newTodos": todos}, False
    if name in ("WebFetch", "WebSearch"):
        body = pools.prose_text(rng, int(rng.lognormvariate(7.4, 0.8)))
        if name == "WebFetch":
            url = f"https://docs.example.org/{rng.choice(NOUNS)}/{rng.choice(VERBS)}.html"
            tool_input = {"url": url, "prompt": f"How does the {rng.choice(NOUNS)} {rng.choice(VERBS)} work?"}
            return (
                tool_input,
                body,
                {
                    "bytes": len(body) * 3,
                    "code": 200,
                    "result": body,
                    "durationMs": rng.randint(300, 9000),
                    "url": url,
                },
                False,
            )
        query = f"{rng.choice(NOUNS)} {rng.choice(VERBS)} {rng.choice(ADJECTIVES)}"
        return (
            {"query": query},
            f'Web search results for query: "{query}"\n\n{body}',
            {"query": query, "durationSeconds": round(rng.uniform(1, 9), 3)},
            False,
        )
    issue = {
        "number": rng.randint(1, 900),
        "title": pools.prose_text(rng, 60),
        "body": pools.prose_text(rng, int(rng.lognormvariate(7, 0.8))),
        "state": "open",
    }
    text = json.dumps(issue, ensure_ascii=False)
    return (
        {"owner": "dev", "repo": cwd.rsplit("/", 1)[-1], "issue_number": issue["number"]},
        [{"type": "text", "text": text}],
        [{"type": "text", "text": text}],
        False,
    )
