"""The C extension as a module (PEP 489 multi-phase initialisation): each module object made from
it, in this interpreter or another, has its own state (the Column type, interned strings,
scratch buffers) and works alone."""

from __future__ import annotations

import gc
import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest

from tests.conftest import extension_or_skip

EXTENSION = "cc_analytics.frames.claude._skim"
LINE = (
    b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-03-01T10:00:00.000Z",'
    b'"message":{"role":"user","content":"hi"}}'
)

installed = extension_or_skip()


def another_module() -> ModuleType:
    """A new module object from the extension's file (not the one in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(EXTENSION, installed.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def works(module: ModuleType) -> None:
    got = module.skim(LINE, 0, len(LINE), 0, 3)
    assert got is not None and got[0] == "user" and got[18] == "hi"
    column = module.Column("str")
    for value in ("", "é", None):
        column.append(value)
    assert module.column_from_state(*column.state()) == column
    assert column.__reduce__()[0] is module.column_from_state


def test_each_module_object_has_its_own_state() -> None:
    other = another_module()
    assert other is not installed
    assert other.Column is not installed.Column  # one static type shared by every module object before
    works(other)
    works(installed)
    assert installed.Column("i64") != other.Column("i64")  # not comparable across module objects
    del other
    gc.collect()  # its state is freed; the installed module is untouched
    works(installed)


def test_the_column_type_is_immutable_and_final() -> None:
    with pytest.raises(TypeError):
        installed.Column.append = None
    with pytest.raises(TypeError):
        type("Sub", (installed.Column,), {})


def test_the_extension_loads_in_a_subinterpreter() -> None:
    # Another interpreter makes its own module object (with its own GIL from 3.12, where a
    # single-phase extension refuses to load: "does not support loading in subinterpreters").
    probe = (
        "import importlib.util, sys\n"
        "try:\n    import _interpreters as interpreters\n"
        "except ImportError:\n    import _xxsubinterpreters as interpreters\n"
        "interp = interpreters.create()\n"
        "code = '''import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location({EXTENSION!r}, {installed.__file__!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        f"assert module.skim({LINE!r}, 0, {len(LINE)}, 0, 3)[0] == 'user'\n"
        "'''\n"
        "print(interpreters.run_string(interp, code))\n"
        "interpreters.destroy(interp)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    if "No module named '_xxsubinterpreters'" in done.stderr:
        pytest.skip("this Python has no subinterpreter module")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None", done.stdout
