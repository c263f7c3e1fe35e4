"""The package's layout: imports go one way. Every import of a linkdyn module by another,
at module level or deferred inside a function, is read from the sources; the test fails on
any import circle and on any import of a higher stage by a lower one (the stages, lowest
first, are LAYERS below; docs/architecture.md draws them)."""

import ast
from pathlib import Path

import linkdyn

PACKAGE = Path(linkdyn.__file__).resolve().parent

#: Stages, lowest first: a module may import its own stage and the stages before it.
LAYERS = [
    ("foundation", ("errors", "_checks", "_progress", "_version", "_html", "_kernels",
                    "_bdf", "_kinematics", "_lcp")),
    ("elements", ("elements",)),
    ("compile", ("compile",)),
    ("describe", ("describe",)),
    ("models", ("models",)),
    ("results", ("results",)),
    ("solve", ("solve",)),
    ("design", ("design",)),
    ("batch", ("batch",)),
    ("command", ("cli", "_command", "__main__", "__init__")),
]


def module_names():
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        names[".".join(parts)] = path
    for path in PACKAGE.glob("*.pyx"):
        names[path.stem] = None
    return names


def imports_of(name, path, modules):
    """The linkdyn modules ``name`` imports (names relative to the package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package or name == "__init__" else name.split(".")[:-1]
    if name == "__init__":
        here = []
    found = set()

    def resolve(base, names):
        if base in modules or base == "":
            pass
        for n in names:
            sub = f"{base}.{n}" if base else n
            found.add(sub if sub in modules else base)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("linkdyn."):
                    mod = alias.name[len("linkdyn."):]
                    resolve(mod.rpartition(".")[0], [mod.rpartition(".")[2]])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module is None or not (node.module == "linkdyn"
                                               or node.module.startswith("linkdyn.")):
                    continue
                base = node.module[len("linkdyn."):] if node.module != "linkdyn" else ""
            else:
                up = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                base = ".".join(up + ([node.module] if node.module else []))
            resolve(base, [a.name for a in node.names])
    found.discard("")
    found.discard(name)
    return {m for m in found if m in modules}


def graph():
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()
            if path is not None}


def layer(name):
    top = name.split(".")[0]
    for k, (_, members) in enumerate(LAYERS):
        if top in members:
            return k
    raise AssertionError(f"module linkdyn.{name} is in no stage of LAYERS: add it")


def test_every_module_belongs_to_a_stage():
    for name in graph():
        layer(name)


def test_no_module_imports_a_higher_stage():
    wrong = [f"linkdyn.{a} ({LAYERS[layer(a)][0]}) imports linkdyn.{b} ({LAYERS[layer(b)][0]})"
             for a, deps in graph().items() for b in deps if layer(b) > layer(a)]
    assert not wrong, "\n".join(wrong)


def test_no_import_circles():
    g = graph()
    # Tarjan's strongly connected components, iteratively (no recursion on the graph's depth).
    index, low, on_stack, stack, circles, counter = {}, {}, set(), [], [], [0]
    for root in g:
        if root in index:
            continue
        work = [(root, iter(sorted(g.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(g.get(child, ())))))
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
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    assert not circles, f"import circles: {circles}"


def test_the_checker_sees_circles_and_deferred_imports(tmp_path):
    # The reader must find an import inside a function and a relative import of a sibling.
    src = tmp_path / "mod.py"
    src.write_text("def f():\n    from ..compile.model import Model\n"
                   "from . import records\n")
    modules = {"elements.mod": src, "compile.model": None, "elements.records": None}
    assert imports_of("elements.mod", src, modules) == {"compile.model", "elements.records"}


def test_old_module_paths_still_import():
    # Code written against the flat layout keeps working.
    import importlib

    for old in ("laws", "forces", "contacts", "events", "friction", "lcp", "model", "natural",
                "description", "modelfile", "geometric", "output", "plotting", "animation",
                "assembly", "kinematics", "simulate", "statics", "periodic", "accuracy",
                "sweep"):
        module = importlib.import_module(f"linkdyn.{old}")
        assert module.__name__.startswith("linkdyn."), old
    from linkdyn.description import ModelBuilder
    from linkdyn.model import compile_model
    from linkdyn.results import PointGeometry

    assert ModelBuilder is linkdyn.ModelBuilder and callable(compile_model)
    assert PointGeometry.__module__ == "linkdyn.compile.geometry"


#: Size limits that keep every module and function readable at one sitting.
MODULE_LINES, FUNCTION_LINES = 800, 100


def test_modules_and_functions_stay_readable():
    too_long = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MODULE_LINES:
            too_long.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                doc = node.body[0]
                if (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                        and isinstance(doc.value.value, str)):
                    lines -= doc.end_lineno - doc.lineno + 1     # the docstring is reading
                if lines > FUNCTION_LINES:
                    too_long.append(f"{path.relative_to(PACKAGE)}: {node.name}, {lines} lines")
    assert not too_long, "\n".join(too_long)
