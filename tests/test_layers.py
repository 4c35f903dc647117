"""The house's rule, checked on the source: each layer imports only the layers below it.

core (pure) -> git (the only door to git) -> views (derived) -> app (use cases) -> faces (cli, mcp).
A module may import its own layer and any layer below; `errors` is below everything. pygit2 and
subprocess are imported only in git/. No import cycle between modules (function-level imports
included: a cycle hidden inside a function is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "git_lifeline"
ORDER = ["errors", "core", "git", "views", "app", "faces"]
FACES = {"cli", "mcp"}
GIT_ONLY = {"pygit2", "subprocess"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "errors" if parts[0] in ("errors", "__init__") else "faces"  # __main__ is the CLI's
    return "faces" if parts[0] in FACES else parts[0]


def face_of(module: str) -> str:
    return "cli" if module == "__main__" else module.split(".")[0]


def modules() -> dict:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__") if name != "__init__" else "__init__"] = path
    return out


def imports_of(name: str, path: Path) -> list:
    """(imported module under git_lifeline or an external top-level name, line)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    if name == "__init__":
        here = []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else list(here)
                target = base + (node.module.split(".") if node.module else [])
                for alias in node.names:
                    full = ".".join(target + [alias.name])
                    found.append((full if full in MODS else ".".join(target) or "__init__", node.lineno))
            elif node.module:
                top = node.module.split(".")[0]
                if top == "git_lifeline":
                    rest = node.module.split(".")[1:]
                    found.append((".".join(rest) or "__init__", node.lineno))
                else:
                    found.append(("<ext>" + top, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "git_lifeline":
                    found.append((".".join(alias.name.split(".")[1:]) or "__init__", node.lineno))
                else:
                    found.append(("<ext>" + top, node.lineno))
    return found


MODS = modules()


def test_layers_import_only_downwards():
    wrong = []
    for name, path in MODS.items():
        mine = ORDER.index(layer_of(name))
        for target, line in imports_of(name, path):
            if target.startswith("<ext>"):
                continue
            theirs = ORDER.index(layer_of(target))
            if theirs > mine or (layer_of(name) == "faces" and layer_of(target) not in ("app", "errors", "faces")):
                wrong.append(f"{path.relative_to(PKG.parent)}:{line} imports {target}")
            elif layer_of(name) == "faces" and layer_of(target) == "faces" and face_of(name) != face_of(target):
                wrong.append(f"{path.relative_to(PKG.parent)}:{line} (a face) imports another face {target}")
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def test_only_the_git_layer_touches_git():
    wrong = []
    for name, path in MODS.items():
        if layer_of(name) == "git":
            continue
        for target, line in imports_of(name, path):
            if target.startswith("<ext>") and target[5:] in GIT_ONLY:
                wrong.append(f"{path.relative_to(PKG.parent)}:{line} imports {target[5:]}")
    assert not wrong, "git is reached only through git_lifeline/git/:\n" + "\n".join(wrong)


def test_no_import_cycles():
    graph = {name: {t for t, _ in imports_of(name, path) if t in MODS and t != name} for name, path in MODS.items()}
    # a package's __init__ importing its own modules is how packages re-export: not a cycle
    for name in graph:
        if MODS[name].name == "__init__.py":
            graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_layers_exist_and_modules_stay_small():
    packages = {p.parent.name for p in PKG.rglob("__init__.py") if p.parent != PKG}
    assert {"core", "git", "views", "app", "cli", "mcp"} <= packages
    big = [
        f"{p.relative_to(PKG.parent)}: {n} lines"
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    ]
    assert not big, "modules over 600 lines:\n" + "\n".join(big)
    large = []
    for p in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 400:
                large.append(
                    f"{p.relative_to(PKG.parent)}: class {node.name} {node.end_lineno - node.lineno + 1} lines"
                )
    assert not large, "classes over 400 lines:\n" + "\n".join(large)
