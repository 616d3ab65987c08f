"""The shape of the code, checked: layers only import downwards, no import cycles, thin non-HTTP functions, one
place for settings and for HTTP statuses, no oversized modules without a reason.

Read from the source with `ast` (every import counts, also those inside functions), so a lazy import cannot
hide a wrong-way dependency.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest
import sourcerer
from sourcerer import errors

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "sourcerer" / "sourcerer"

# lowest first; a module may import its own layer and the ones before it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("errors", ("sourcerer.errors",)),
    ("foundations", ("sourcerer.settings", "sourcerer.scopes", "sourcerer.accounting", "sourcerer.sqlitedb")),
    (
        "library",
        (
            "sourcerer.text",
            "sourcerer.injection",
            "sourcerer.e5file",
            "sourcerer.reading",
            "sourcerer.models",
            "sourcerer.citations",
            "sourcerer.support",
            "sourcerer.verify",
            "sourcerer.history",
            "sourcerer.grounding",
            "sourcerer.pipeline",
            "sourcerer.retrieval",
            "sourcerer.synthesis",
            "sourcerer.store",
            "sourcerer.ledger",
            "sourcerer",  # the package itself: `from sourcerer import ask`
        ),
    ),
    ("service", ("sourcerer.service",)),
    ("http", ("sourcerer.http",)),
    ("cli", ("sourcerer.cli",)),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every `sourcerer...` module `path` imports (`from sourcerer.a import b` counts `sourcerer.a.b` when that
    is a module, else `sourcerer.a`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "sourcerer")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sourcerer":
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
    return found


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    assert best >= 0, f"{module} belongs to no layer: add it to LAYERS"
    return best


def test_every_module_belongs_to_a_layer_and_imports_only_downwards():
    wrong = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in GRAPH.items()
        for target in targets
        if target in MODULES and _layer(target) > _layer(module)
    ]
    assert wrong == []


def test_the_ledger_and_the_store_know_nothing_of_each_other_or_of_tiers():
    for module, targets in GRAPH.items():
        if module.startswith("sourcerer.ledger"):
            assert not any(t.startswith(("sourcerer.store", "sourcerer.service")) for t in targets), module
        if module.startswith("sourcerer.store"):
            assert not any(t.startswith(("sourcerer.ledger", "sourcerer.service")) for t in targets), module


def test_there_are_no_import_cycles():
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for target in sorted(GRAPH.get(module, ())):
            if target not in MODULES or target == "sourcerer":  # the package re-exports; its own imports count
                continue
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target, [*stack, target])
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])
    assert cycles == []


@pytest.mark.parametrize("function", ["ingest/s3.py", "ingest/embed.py", "audit/app.py"])
def test_lambda_functions_outside_the_api_import_no_http_code(function):
    reached, todo = set(), list(_imports(ROOT / "functions" / function))
    while todo:  # everything they import, directly or through other modules
        module = todo.pop()
        if module in MODULES and module not in reached:
            reached.add(module)
            todo.extend(GRAPH[module])
    assert reached and not any(m.startswith("sourcerer.http") for m in reached)


def test_only_the_settings_module_reads_the_environment():
    readers = [
        name
        for name, path in MODULES.items()
        if name != "sourcerer.settings" and ("os.environ.get(" in path.read_text() or "getenv(" in path.read_text())
    ]
    assert readers == []


def test_every_exception_is_a_sourcerer_error_and_none_carries_an_http_status():
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, BaseException)]
    assert len(classes) > 10
    for cls in classes:
        assert issubclass(cls, errors.SourcererError), cls
        assert not hasattr(cls, "status") and not hasattr(cls, "code"), cls
    for name in (m for m in MODULES if not m.endswith("__main__")):  # no other module defines one of its own
        module = importlib.import_module(name)
        own = [
            c.__name__
            for c in vars(module).values()
            if inspect.isclass(c) and issubclass(c, BaseException) and c.__module__ == name
        ]
        assert name == "sourcerer.errors" or not own, f"{name} defines {own}"


def test_the_status_table_covers_every_error_a_request_can_raise():
    from sourcerer.http.statuses import STATUS, status_of

    assert all(issubclass(cls, errors.SourcererError) for cls in STATUS)
    assert status_of(errors.UnsupportedDocument("x")) == (400, "unsupported_document")  # the most specific wins
    assert status_of(errors.DocumentNotFound("x")) == (404, "not_found")
    assert status_of(errors.MalformedReply("x")) == (503, "backend_unavailable")
    assert status_of(errors.ConfigurationError("x")) == (503, "configuration_error")
    assert status_of(RuntimeError("x")) is None  # an internal error: a logged 500


def test_a_long_module_or_a_wide_class_says_why_it_is_so():
    """What a module does, counted: a module over 420 lines states "Why it is long:" in its docstring, and a class
    with more than 30 methods (that many jobs) "Why it is wide:" in its own. A line count in a docstring goes
    stale as the code changes, so none may stand in for the reason."""
    unexplained = []
    for name, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        doc = ast.get_docstring(tree) or ""
        if re.search(r"about [\d,]+ lines", doc):
            unexplained.append(f"{name}: a line count in the docstring")
        if source.count("\n") > 420 and "Why it is long:" not in doc:
            unexplained.append(f"{name}: {source.count(chr(10))} lines, no 'Why it is long:'")
        for node in ast.walk(tree):
            body = node.body if isinstance(node, ast.ClassDef) else []
            methods = [m for m in body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if isinstance(node, ast.ClassDef) and len(methods) > 30 and "Why it is wide:" not in (ast.get_docstring(node) or ""):
                unexplained.append(f"{name}.{node.name}: {len(methods)} methods, no 'Why it is wide:'")
    assert unexplained == []


def test_the_package_version_is_importable_without_the_service():
    assert sourcerer.__version__ and "sourcerer.service" not in GRAPH["sourcerer"]
