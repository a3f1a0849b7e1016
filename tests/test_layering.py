"""The package's layers hold (docs/architecture.md, "The layers").

A module imports from lower layers and, inside its own folder, from modules it does not reach
back from: never upward, never sideways between ``parsing`` and ``readers``, never inside a
function (optional third-party packages excepted), never a ``_private`` name of another module,
and nothing in a circle.
"""

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "agentmsg"

#: Each module's layer, by its first dotted part (a folder, or a top-level module).
LAYERS = {
    "errors": 0, "options": 0, "dialect_templates": 0, "_checks": 0, "pool": 0, "_core": 0, "_sdk_types": 0,
    "model": 1,
    "parsing": 2, "readers": 2,
    "counting": 3,
    "history": 4,
    "convert": 5,
    "arrow": 6, "langchain": 6, "ray": 7,
    "workbench": 8, "cli": 9, "__main__": 10,
    # Old module paths kept as re-exports for one release: nothing imports them.
    "dialects": 11, "encoding": 11, "toolpairs": 11, "events": 11, "blocks": 11, "message": 11, "memory": 11,
}

#: The private names an old module path re-exports because pickles made by earlier releases name
#: them there (one release, as the paths).
PICKLED_NAMES = {("message", "_unpickle"), ("memory", "_restore_memory")}

#: The one function-level import of the package's own modules the layout allows, for one release
#: (then ``Message.from_text`` gives way to a function of ``agentmsg.parsing``): the shortcut
#: parses, and the parser sits above the model.
LATE_IMPORTS_ALLOWED = {("model.message", "parsing")}

Edge = Tuple[str, str, str, str, int]  # importer, imported module, name, kind, line


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
MODULES["_core"] = PACKAGE / "_core.pyi"


def imported(current: str, node: ast.ImportFrom) -> List[Tuple[str, str]]:
    """(module, name) of each name an import takes from the package; a submodule is its own module."""
    if node.level:
        base = current.split(".") if current else []
        if not MODULES[current].name == "__init__.py":
            base = base[:-1]
        base = base[: len(base) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    elif node.module and (node.module == "agentmsg" or node.module.startswith("agentmsg.")):
        module = node.module[len("agentmsg."):] if node.module != "agentmsg" else ""
    else:
        return []
    out = []
    for alias in node.names:
        sub = f"{module}.{alias.name}" if module else alias.name
        out.append((sub, "") if sub in MODULES else (module, alias.name))
    return out


def edges() -> List[Edge]:
    found: List[Edge] = []
    for current, path in MODULES.items():
        if current in ("", "_core"):  # the package face's lazy imports; the stub of the binding
            continue

        def walk(node: ast.AST, kind: str) -> None:
            for child in ast.iter_child_nodes(node):
                child_kind = kind
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    child_kind = "type-checking"
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    child_kind = "function"
                if isinstance(child, ast.ImportFrom):
                    for module, name in imported(current, child):
                        if module != current:
                            found.append((current, module, name, child_kind, child.lineno))
                elif isinstance(child, ast.Import):  # ``import agentmsg.x``: the module x
                    for alias in child.names:
                        if alias.name.startswith("agentmsg."):
                            found.append((current, alias.name[len("agentmsg."):], "", child_kind, child.lineno))
                walk(child, child_kind)

        walk(ast.parse(path.read_text(encoding="utf-8")), "top")
    return found


def layer(module: str) -> int:
    """The module's layer; the package face (its ``__version__``) is below everything."""
    return LAYERS[module.split(".")[0]] if module else -1


def test_every_module_has_a_layer():
    assert sorted(m for m in MODULES if m and m.split(".")[0] not in LAYERS) == []


def test_no_import_runs_up_or_sideways():
    bad = []
    for importer, module, name, kind, line in edges():
        up = layer(module) > layer(importer)
        sideways = layer(module) == layer(importer) and module.split(".")[0] != importer.split(".")[0] \
            and layer(module) != 0
        if (up or sideways) and (importer, module) not in LATE_IMPORTS_ALLOWED:
            bad.append(f"{importer}:{line} imports {module} ({kind})")
    assert bad == []


def test_no_function_level_import_of_the_package():
    bad = [f"{importer}:{line} imports {module}" for importer, module, _, kind, line in edges()
           if kind == "function" and (importer, module.split(".")[0]) not in LATE_IMPORTS_ALLOWED]
    assert bad == []


def test_no_private_name_crosses_a_module():
    bad = [f"{importer}:{line} takes {module}.{name}" for importer, module, name, _, line in edges()
           if name.startswith("_") and not name.startswith("__") and module != "_core"
           and (importer, name) not in PICKLED_NAMES]
    assert bad == []


def test_no_import_circle():
    graph: Dict[str, Set[str]] = {}
    for importer, module, *_ in edges():
        graph.setdefault(importer, set()).add(module)
    # Tarjan's strongly connected components, iteratively.
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    circles: List[List[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    assert circles == []
