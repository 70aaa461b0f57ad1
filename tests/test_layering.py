"""The layers of service/ as its folders (docs/design.md, Layout): which package may import what."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[1] / "service"
PACKAGE = "voxlite.service"

LAYERS = ("grpc", "http", "call", "capacity", "audio", "engines", "settings", "ops")
"""The layer packages of service/, each a folder."""

ROOT = (
    "__init__.py", "__main__.py", "server.py", "families.py", "errors.py", "jobs.py", "tls.py"
)  # fmt: skip
"""The modules directly in service/: the entry point and the composition root (server.py wires
the layers, families.py the engine families), and what every layer shares (domain errors, the
job contract between engines and the scheduler, the TLS files both edges and the settings
read)."""

MAX_ROOT_MODULES = 8

GRPC = ("grpc", "grpc_health", "grpc_reflection", "voxlite.tts.v1.tts_pb2_grpc")
"""Modules that are, or bring in, grpc."""

GRPC_ALLOWED = ("server.py",)
"""Outside service/grpc/, only the composition root imports grpc."""

FORBIDDEN = {
    "engines": ("call", "capacity", "grpc", "http", "server", "families", "__main__"),
    "audio": ("call", "capacity", "grpc", "http", "engines"),
    "call": ("grpc", "http"),
    "capacity": ("grpc", "http"),
    "http": ("grpc",),
    "ops": ("grpc", "call", "http"),
}
"""Layer -> the packages and root modules of service/ it must not import: nothing imports
upward, only the edges (grpc/, http/) know their transport, and neither edge reaches into the
other (what both need, opening a session, checking a token, is in call/; the access log in
ops/). ops/ serves every layer and knows none of the calls."""


def _name(path: Path) -> tuple[str, ...]:
    """The dotted name a file of service/ imports as, split ("voxlite", "service", "call",
    "session"); a package's __init__.py by its package."""
    parts = path.relative_to(SERVICE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return (*PACKAGE.split("."), *parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, wherever in the file (top level, TYPE_CHECKING, a
    function), as an absolute dotted name; `from m import n` counts as m and m.n."""
    own = _name(path)
    package = own if path.name == "__init__.py" else own[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join((*base, *([node.module] if node.module else [])))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _files() -> list[Path]:
    return sorted(p for p in SERVICE.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_layers_are_folders() -> None:
    """`ls service` shows the layers: each is a package, and the modules left directly in
    service/ are the entry point, the composition root and what every layer shares."""
    for layer in LAYERS:
        assert (SERVICE / layer / "__init__.py").is_file(), f"service/{layer}/ is not a package"
    root = sorted(p.name for p in SERVICE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root
    assert set(root) <= set(ROOT), f"new modules directly in service/: {set(root) - set(ROOT)}"


def test_grpc_is_imported_only_by_its_package_and_the_composition_root() -> None:
    """grpc (and its health, reflection and generated stubs) stays at the edge: service/grpc/
    and server.py. Domain code raises domain errors; grpc/status.py maps them to codes."""
    offenders = []
    for path in _files():
        relative = path.relative_to(SERVICE)
        if relative.parts[0] == "grpc" or relative.as_posix() in GRPC_ALLOWED:
            continue
        hits = sorted(m for m in _imports(path) if any(_within(m, g) for g in GRPC))
        if hits:
            offenders.append(f"service/{relative.as_posix()}: {', '.join(hits)}")
    assert offenders == []


def test_no_layer_imports_upward() -> None:
    """engines/ knows nothing of calls, capacity or transports (a family is a model and its
    voices); audio/ knows no voice or call; a call and its capacity do not know the transport
    that brought them."""
    offenders = []
    for path in _files():
        relative = path.relative_to(SERVICE)
        layer = relative.parts[0]
        if len(relative.parts) < 2 or layer not in FORBIDDEN:
            continue
        banned = [f"{PACKAGE}.{name}" for name in FORBIDDEN[layer]]
        hits = sorted(m for m in _imports(path) if any(_within(m, b) for b in banned))
        if hits:
            offenders.append(f"service/{relative.as_posix()}: {', '.join(hits)}")
    assert offenders == []
