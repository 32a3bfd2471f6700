"""Discovery of Claude Code transcripts: roots, explicit sources and the three subagent layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from cc_analytics.errors import InputError
from cc_analytics.frames.claude.discovery import default_roots, discover, find_session

from .claude_builders import SESSION, assistant, text, user, write

OTHER = "99999999-2222-4333-8444-555555555555"


def layout(root: Path) -> Path:
    projects = root / "projects"
    project = projects / "-work-demo"
    write(project / f"{SESSION}.jsonl", user("hi"), assistant([text("yo")]))
    write(
        project / SESSION / "subagents" / "agent-a1.jsonl",
        user("task", isSidechain=True, agentId="a1"),
    )
    (project / SESSION / "subagents" / "agent-a1.meta.json").write_text("{}")
    write(project / "agent-b2.jsonl", user("old task", isSidechain=True, agentId="b2"))
    write(project / f"{OTHER}.jsonl", user("other", session=OTHER))
    (project / SESSION / "tool-results").mkdir(parents=True)
    (project / SESSION / "tool-results" / "big.txt").write_text("x")
    (project / "folder.jsonl").mkdir()
    return projects


def test_three_layouts_are_linked_to_their_session(tmp_path: Path) -> None:
    projects = layout(tmp_path)
    files = {f.path.name: f for f in discover([projects])}
    assert set(files) == {f"{SESSION}.jsonl", "agent-a1.jsonl", "agent-b2.jsonl", f"{OTHER}.jsonl"}
    assert files[f"{SESSION}.jsonl"].layout == "main"
    assert (files["agent-a1.jsonl"].layout, files["agent-a1.jsonl"].session_id) == (
        "subagents-dir",
        SESSION,
    )
    assert files["agent-a1.jsonl"].agent_id == "a1"
    assert (files["agent-b2.jsonl"].layout, files["agent-b2.jsonl"].session_id) == (
        "agent-file",
        SESSION,
    )
    assert files["agent-b2.jsonl"].agent_id == "b2"
    assert all(f.project_dir == "-work-demo" for f in files.values())


def test_files_globs_and_missing_sources(tmp_path: Path) -> None:
    projects = layout(tmp_path)
    main = projects / "-work-demo" / f"{SESSION}.jsonl"
    assert [f.path for f in discover([main])] == [main]
    globbed = discover([str(projects / "*" / "agent-*.jsonl")])
    assert [f.path.name for f in globbed] == ["agent-b2.jsonl"]
    recursive = discover([str(projects / "**" / "agent-*.jsonl")])
    assert {f.path.name for f in recursive} == {"agent-a1.jsonl", "agent-b2.jsonl"}
    with pytest.raises(InputError, match="no such file"):
        discover([tmp_path / "missing"])
    assert discover([tmp_path / "empty-glob-*.jsonl"]) == []


def test_config_dir_list(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    layout(first)
    write(second / "projects" / "p" / "aaaaaaaa-2222-4333-8444-555555555555.jsonl", user("x"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{first}, {second},")
    assert default_roots() == [first / "projects", second / "projects"]
    assert len(discover(None)) == 5
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    assert default_roots() == [tmp_path / "nohome" / ".claude" / "projects"]
    assert discover(None) == []


def test_find_session_collects_main_and_subagents(tmp_path: Path) -> None:
    projects = layout(tmp_path)
    found = find_session(SESSION, [projects])
    assert [f.path.name for f in found] == [f"{SESSION}.jsonl", "agent-a1.jsonl", "agent-b2.jsonl"]
    assert find_session("../etc", [projects]) == []
    assert find_session("nope", [projects]) == []


def test_walk_orders_as_paths_do_and_a_plan_finds_what_discover_finds(tmp_path: Path) -> None:
    # Paths order by their parts ("a/b" before "a.b/c"), not by their text; the plan's shortcut
    # (paths told apart once, not looked for again) gives what discover gives.
    from cc_analytics.frames.sources import listed_size, plan, walk

    for relative in ("a/b.jsonl", "a.b/c.jsonl", "a-b/d.jsonl", "a/z/e.jsonl", "f.jsonl"):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"type":"summary"}\n')
    (tmp_path / "g.jsonl").symlink_to(tmp_path / "f.jsonl")  # the same file twice: kept once
    found = walk([tmp_path])
    assert found == sorted(found)
    assert [p.relative_to(tmp_path).as_posix() for p in found][:2] == ["a/b.jsonl", "a/z/e.jsonl"]
    assert plan(tmp_path) == {"claude-code": discover([tmp_path])}
    assert len(plan(tmp_path)["claude-code"]) == 5
    assert listed_size(tmp_path) == 6 * 19  # a rough size: the link counts as its target
