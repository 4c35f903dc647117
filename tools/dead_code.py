"""List the package's leftovers, so a clean-up can show what it found and measure itself by
the same rule the next time:

    python tools/dead_code.py [--vulture] [--counts]

(a) dead: module-level functions, classes and constants nothing refers to (an ast walk that
    resolves imports module by module, so a name used in one module does not keep a namesake
    alive in another), plus, with --vulture, what vulture at 60% confidence reports (methods,
    attributes, variables: it matches by name). Both know that a function registered by a
    decorator (a click command or group, an MCP tool or resource) is used, and that an import
    under `if TYPE_CHECKING:` is for the type checker. Uses count from the package and from
    bench/ and tools/; tests do not count: a facade kept only for tests is a leftover.
(b) re-exported: names a module hands on from elsewhere: `__all__` entries it does not define,
    and names other modules import from it though it only imported them itself.
    Listed apart, not failed: `handed-to-faces`, a name app/ hands on from core/, git/ or views/
    only to cli/ and mcp/, which may import nothing but app/ (tests/test_layers.py).
(c) alias methods: a function whose body (docstring aside) only calls another with its own
    parameters, unchanged, or returns such a call; and `alias = method` in a class body.
    Listed apart, not failed: `forwards`, a method handing the call to a part it holds
    (`self.store.head()`), which keeps the part out of its callers' sight.

Exit status 1 when anything is dead, re-exported or an alias (0 otherwise).
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "git_lifeline"
USERS = ("bench", "tools")  # outside the package, counted as users; tests are not

FACES = frozenset({"cli", "mcp"})  # may import only app/ (and errors)
BELOW_APP = frozenset({"core", "git", "views"})

# What vulture cannot see is read: attributes set for a library that reads them by name.
READ_ELSEWHERE = {"exc_text": "logging.LogRecord's, read by the logging module's formatter"}

# The last part of a decorator that registers the function it decorates (click, the MCP SDK).
REGISTERS = frozenset({"command", "group", "tool", "resource", "prompt"})


@dataclass
class Module:
    name: str  # dotted: git_lifeline.git.trees
    path: Path
    tree: ast.Module
    is_package: bool
    root: Path = ROOT  # the checkout it was read from

    @property
    def rel(self) -> str:
        return str(self.path.relative_to(self.root))


@dataclass(frozen=True)
class Finding:
    kind: str  # dead | re-exported | alias
    where: str  # path:line
    name: str
    note: str = ""

    def __str__(self) -> str:
        return f"{self.where}: {self.kind} {self.name}" + (f" ({self.note})" if self.note else "")


@dataclass
class Index:
    modules: dict[str, Module] = field(default_factory=dict)
    users: list[Module] = field(default_factory=list)

    def all(self) -> Iterator[Module]:
        yield from self.modules.values()
        yield from self.users


def load(root: Path = ROOT) -> Index:
    index = Index()
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        index.modules[name] = Module(name, path, ast.parse(path.read_text(), str(path)), is_package, root)
    for folder in USERS:
        for path in sorted((root / folder).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            index.users.append(Module(name, path, ast.parse(path.read_text(), str(path)), False, root))
    return index


def imported_from(module: Module, node: ast.ImportFrom) -> str:
    """The dotted module an ImportFrom reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the statements under `if TYPE_CHECKING:` (imports for the type checker)."""
    held: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                held.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return held


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return ""


def registering_factories(index: Index) -> set[str]:
    """Names of the package's own decorators that register what they decorate: functions
    whose body calls `X.command(...)`, `X.tool(...)`, ... (e.g. a `tool(hints)` helper)."""
    names: set[str] = set()
    for module in index.modules.values():
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls = (n for n in ast.walk(node) if isinstance(n, ast.Call) and n is not node)
                if any(isinstance(c.func, ast.Attribute) and c.func.attr in REGISTERS for c in calls):
                    names.add(node.name)
    return names


def is_registered(node: ast.AST, factories: set[str]) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(_decorator_name(d) in REGISTERS | factories for d in decorators)


def top_level_names(module: Module) -> dict[str, ast.stmt]:
    """What a module defines at its top level: functions, classes, assigned constants."""
    defined: dict[str, ast.stmt] = {}
    for stmt in module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = stmt
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            defined[stmt.target.id] = stmt
    return defined


def module_aliases(module: Module, index: Index) -> dict[str, str]:
    """Local name -> package module, for `import a.b as m` and `from a import b` of a module."""
    aliases: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in index.modules:
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = imported_from(module, node)
            for alias in node.names:
                dotted = f"{source}.{alias.name}"
                if dotted in index.modules:
                    aliases[alias.asname or alias.name] = dotted
    return aliases


def uses(index: Index) -> dict[tuple[str, str], set[str]]:
    """(module, name) -> the modules that refer to it from outside (imports, `module.name`)."""
    used: dict[tuple[str, str], set[str]] = {}
    for module in index.all():
        aliases = module_aliases(module, index)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                source = imported_from(module, node)
                for alias in node.names:
                    used.setdefault((source, alias.name), set()).add(module.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in aliases:
                    used.setdefault((aliases[node.value.id], node.attr), set()).add(module.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                dotted = ast.unparse(node.value)
                if dotted in index.modules:  # git_lifeline.app.ledger.Ledger
                    used.setdefault((dotted, node.attr), set()).add(module.name)
    return used


def strings(index: Index) -> set[str]:
    """Every string constant (a name looked up by getattr or a command table counts as used)."""
    return {
        node.value
        for module in index.all()
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def loads_inside(module: Module, name: str, skip: Optional[ast.stmt]) -> bool:
    """Whether the module reads `name` anywhere but inside `skip` (its own definition)."""
    skipped = {id(n) for n in ast.walk(skip)} if skip is not None else set()
    for node in ast.walk(module.tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.Attribute) and node.attr == name:  # self.name, cls.name
            return True
    return False


def dead_names(index: Index) -> list[Finding]:
    """(a) by the ast walk: module-level names nothing refers to."""
    used = uses(index)
    named = strings(index)
    factories = registering_factories(index)
    found: list[Finding] = []
    for module in index.modules.values():
        if module.path.name in ("__main__.py",):
            continue
        for name, stmt in top_level_names(module).items():
            if name.startswith("__") or name in named or is_registered(stmt, factories):
                continue
            if (module.name, name) in used or loads_inside(module, name, stmt):
                continue
            what = (
                "class" if isinstance(stmt, ast.ClassDef) else "constant" if not hasattr(stmt, "args") else "function"
            )
            found.append(Finding("dead", f"{module.rel}:{stmt.lineno}", name, what))
    return found


def vulture_findings(index: Index) -> list[Finding]:
    """(a) by vulture at 60%: what it matches by name, less decorator registrations, TYPE_CHECKING
    imports and a function's parameters (a callback's signature is its caller's)."""
    import vulture  # type: ignore[import-untyped]  # a tool of this script only: pip install vulture

    scanner = vulture.Vulture()
    scanner.scavenge([str(ROOT / PACKAGE), *(str(ROOT / u) for u in USERS)])
    factories = registering_factories(index)
    by_path = {m.path: m for m in index.modules.values()}
    found: list[Finding] = []
    for item in scanner.get_unused_code(min_confidence=60):
        module = by_path.get(Path(item.filename).resolve())
        if module is None:
            continue  # an unused name in bench/ or tools/ is theirs to mind
        node = _node_at(module, item.first_lineno, item.name)
        if node is not None and is_registered(node, factories):
            continue
        if item.typ == "import" and _under_type_checking(module, item.first_lineno):
            continue
        if item.name in READ_ELSEWHERE:
            continue
        if item.typ == "variable" and _is_parameter(module, item.first_lineno, item.name):
            continue
        if any(f.where.startswith(f"{module.rel}:") and f.name == item.name for f in found):
            continue  # one finding a name a file: an attribute is set in several places
        found.append(Finding("dead", f"{module.rel}:{item.first_lineno}", item.name, f"vulture: unused {item.typ}"))
    return found


def _node_at(module: Module, line: int, name: str) -> Optional[ast.AST]:
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            if node.lineno == line or any(d.lineno == line for d in node.decorator_list):
                return node
    return None


def _under_type_checking(module: Module, line: int) -> bool:
    held = type_checking_nodes(module.tree)
    return any(getattr(n, "lineno", None) == line and id(n) in held for n in ast.walk(module.tree))


def _is_parameter(module: Module, line: int, name: str) -> bool:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.arg) and node.arg == name and node.lineno == line:
            return True
    return False


def reexports(index: Index) -> list[Finding]:
    """(b) names a module hands on though they are defined elsewhere."""
    used = uses(index)
    found: list[Finding] = []
    for module in index.modules.values():
        defined = top_level_names(module)
        imported: dict[str, str] = {}  # local name -> where from
        top = [*module.tree.body, *(n for s in module.tree.body if isinstance(s, ast.If) for n in s.body)]
        for node in top:  # a module's imports, those under `if TYPE_CHECKING:` too
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    imported[alias.asname or alias.name] = f"{imported_from(module, node)}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        imported[alias.asname] = alias.name
        listed = _all_names(module)
        for name in sorted(set(imported) - set(defined)):
            if f"{module.name}.{name}" in index.modules:
                continue  # `from pkg import submodule` reads the submodule, not a re-export
            importers = sorted(
                m for m in used.get((module.name, name), set()) if not f"{m}.".startswith(f"{module.name}.")
            )
            if name not in listed and not importers:
                continue
            by = f"imported by {', '.join(_short(m) for m in importers)}" if importers else "imported by no one"
            where = f"{_short(imported[name])}" + (", __all__" if name in listed else "")
            faces_only = bool(importers) and all(_layer(m) in FACES for m in importers)
            if _layer(module.name) == "app" and _layer(imported[name]) in BELOW_APP and faces_only:
                found.append(Finding("handed-to-faces", module.rel, name, f"from {where}; {by}"))
            else:
                found.append(Finding("re-exported", module.rel, name, f"from {where}; {by}"))
    return found


def _layer(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == PACKAGE else ""


def _short(dotted: str) -> str:
    return dotted.removeprefix(f"{PACKAGE}.")


def _all_names(module: Module) -> set[str]:
    for stmt in module.tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                return {e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _base_name(base: ast.expr) -> str:
    """`Checks` of `Checks`, `Checks[R]` or `checks.Checks`."""
    if isinstance(base, ast.Subscript):
        base = base.value
    return base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""


def overriding_methods(index: Index) -> set[tuple[str, int]]:
    """(module, line) of each method that overrides a method of the same name in a base class
    defined in the package: an implementation of its base's interface, not an alias."""
    methods: dict[str, set[str]] = {}
    classes: list[tuple[Module, ast.ClassDef]] = []
    for module in index.modules.values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ClassDef):
                classes.append((module, node))
                defined = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                methods.setdefault(node.name, set()).update(defined)
    found: set[tuple[str, int]] = set()
    for module, node in classes:
        inherited = set().union(*(methods.get(_base_name(b), set()) for b in node.bases))
        for n in node.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in inherited:
                found.add((module.name, n.lineno))
    return found


def aliases(index: Index) -> list[Finding]:
    """(c) functions that only pass their parameters on to another, and `name = other` in a class;
    a method overriding its base's method of the same name is listed apart ("overrides")."""
    found: list[Finding] = []
    overrides = overriding_methods(index)
    for module in index.modules.values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ClassDef):
                methods = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in methods:
                        name = ast.unparse(stmt.targets[0])
                        found.append(Finding("alias", f"{module.rel}:{stmt.lineno}", name, f"= {stmt.value.id}"))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                target = _passes_on(node)
                if target:
                    # self.part.method(...): a holder handing a call to one of its parts
                    kind = "forwards" if target.startswith(("self.", "cls.")) and target.count(".") > 1 else "alias"
                    if kind == "alias" and (module.name, node.lineno) in overrides:
                        kind = "overrides"
                    found.append(Finding(kind, f"{module.rel}:{node.lineno}", node.name, f"only calls {target}"))
    return found


def _passes_on(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The callee when `func`'s body only calls it with func's own parameters, unchanged."""
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)) or func.decorator_list:
        return ""
    call = body[0].value
    if isinstance(call, ast.Await):
        call = call.value
    if not isinstance(call, ast.Call) or not _plain_name(call.func):
        return ""
    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    passed = [a.id for a in call.args if isinstance(a, ast.Name)]
    passed += [k.value.id for k in call.keywords if isinstance(k.value, ast.Name) and k.arg == k.value.id]
    every_argument_plain = len(passed) == len(call.args) + len(call.keywords)
    if not every_argument_plain or sorted(passed) != sorted(params):
        return ""
    if func.args.vararg or func.args.kwarg:
        return ""
    return ast.unparse(call.func)


def _plain_name(node: ast.expr) -> bool:
    """`name` or `a.b.c`: no call or subscript choosing the callee (that is a dispatch)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vulture", action="store_true", help="add vulture's findings at 60%% (pip install vulture)")
    parser.add_argument("--counts", action="store_true", help="only the three counts")
    args = parser.parse_args(argv)
    index = load()
    dead = dead_names(index)
    if args.vulture:
        seen = {(f.where, f.name) for f in dead}
        dead += [f for f in vulture_findings(index) if (f.where, f.name) not in seen]
    handed = reexports(index)
    called = aliases(index)
    sections = {
        "dead": dead,
        "re-exported": [f for f in handed if f.kind == "re-exported"],
        "alias": [f for f in called if f.kind == "alias"],
        # listed, not failed: the layer rule (faces import only app/) and holders hiding their parts
        "handed-to-faces": [f for f in handed if f.kind == "handed-to-faces"],
        "forwards": [f for f in called if f.kind == "forwards"],
        "overrides": [f for f in called if f.kind == "overrides"],
    }
    for findings in sections.values():
        if not args.counts:
            for finding in sorted(findings, key=lambda f: (f.where.split(":")[0], f.name)):
                print(finding)
    print(", ".join(f"{len(findings)} {kind}" for kind, findings in sections.items()))
    return 1 if sections["dead"] or sections["re-exported"] or sections["alias"] else 0


if __name__ == "__main__":
    sys.exit(main())
