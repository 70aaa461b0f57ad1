"""The code's own shape: service/ imports no module that imports it back, and no function in
service/ or client/ is longer than a reader holds at once."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[1] / "service"
CLIENT = SERVICE.parent / "client"

MAX_FUNCTION_LINES = 80
"""A function's lines, from its `def` to its last, docstring and comments included: a longer one
is several steps that want names of their own (issue 29)."""


def _modules() -> dict[str, Path]:
    """service/'s modules by dotted name relative to it ("piper.voice"; a package by its
    folder)."""
    found = {}
    for path in SERVICE.rglob("*.py"):
        parts = list(path.relative_to(SERVICE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of service/ that `name` imports when loaded or type-checked: its top-level
    relative imports and those under `if TYPE_CHECKING:` (a function's own import is left
    out: it runs later, on purpose)."""
    tree = ast.parse(path.read_text())
    statements = list(tree.body)
    for statement in tree.body:
        if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test):
            statements += statement.body
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for statement in statements:
        if not (isinstance(statement, ast.ImportFrom) and statement.level):
            continue
        base = package[: len(package) - (statement.level - 1)]
        target = ".".join([*base, *([statement.module] if statement.module else [])])
        for alias in statement.names:
            inner = f"{target}.{alias.name}" if target else alias.name
            found.add(inner if inner in modules else target)
    return (found & set(modules)) - {name}


def test_no_import_circle_in_the_service() -> None:
    """Bug: piper/'s calibration and segment imported voice, which imported them (type-only
    imports hid it). Each module's imports lead only to modules that do not lead back."""
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                circles.append([*path[path.index(other) :], other])
            elif other not in state:
                visit(other)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert circles == []


def test_no_function_is_over_80_lines() -> None:
    """Bug: Admission.enter (96 lines) held five checks in one body. Every function and method in
    service/ and client/, nested ones too, fits in MAX_FUNCTION_LINES."""
    long = []
    for folder in (SERVICE, CLIENT):
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        where = path.relative_to(folder.parent).as_posix()
                        long.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []
