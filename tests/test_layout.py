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
    ("exchange", ("exchange",)),
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


def test_the_architecture_page_lists_every_module():
    """docs/architecture.md names every module of the package (its file name or its path in
    backticks, in the paragraph of its stage): a module added without a word there fails."""
    page = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
    if not page.is_file():
        import pytest

        pytest.skip("no docs beside the tests")
    text = page.read_text(encoding="utf-8")
    missing = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py"))
               + sorted(PACKAGE.glob("*.pyx"))
               if p.name != "__init__.py" and f"`{p.name}`" not in text
               and f"`{p.relative_to(PACKAGE)}`" not in text]
    assert not missing, "modules not in docs/architecture.md: " + ", ".join(missing)

# -- The C core ------------------------------------------------------------------------------

CSRC = Path(__file__).resolve().parents[1] / "csrc"

#: The integrator's modules in layers, lowest first (csrc/ld_work.h draws them): a module
#: includes the private headers of its own layer and those below, and calls only functions
#: defined there. ld_work.h (the workspace), ld_bdf.h (the public API's types) and
#: ld_system.h (the model's callbacks) are below all of them.
C_LAYERS = [("ld_linear", "ld_control"), ("ld_schur",), ("ld_sens", "ld_rk"), ("ld_bdf",), ("ld_run", "ld_schur_gen")]
#: Each module's private header.
C_HEADERS = {"ld_linear.h": "ld_linear", "ld_control.h": "ld_control", "ld_schur.h": "ld_schur", "ld_sens.h": "ld_sens",
             "ld_rk.h": "ld_rk", "ld_bdf_method.h": "ld_bdf"}
C_BASE = {"ld_work.h", "ld_bdf.h", "ld_system.h"}
#: Size limits of the C sources, as for the Python modules.
C_FILE_LINES, C_FUNCTION_LINES = 800, 100


def c_layer(module):
    return next(k for k, members in enumerate(C_LAYERS) if module in members)


def c_definitions(text):
    """The ld_ functions a C source defines (a definition starts at column 0 and its
    parameter list is followed by a brace, not a semicolon)."""
    import re

    return set(re.findall(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?\w[\w\s\*]*?\b(ld_\w+)"
                          r"\s*\([^;{]*\)\s*\{", text, flags=re.M))


def c_calls(text):
    import re

    body = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return set(re.findall(r"\b(ld_\w+)\s*\(", body))


def test_the_c_core_calls_and_includes_one_way():
    import re

    if not CSRC.is_dir():
        import pytest

        pytest.skip("no C sources beside the tests")
    sources = {m: (CSRC / f"{m}.c").read_text(encoding="utf-8")
               for layer in C_LAYERS for m in layer}
    defined = {m: c_definitions(text) for m, text in sources.items()}
    base = set().union(*(c_definitions((CSRC / h).read_text(encoding="utf-8")) for h in C_BASE))
    owner = {f: m for m, names in defined.items() for f in names}
    wrong = []
    for m, text in sources.items():
        for header in re.findall(r'^#include "([\w.]+)"', text, flags=re.M):
            if header in C_BASE:
                continue
            if header not in C_HEADERS:
                wrong.append(f"{m}.c includes {header}, which is no module's header")
            elif c_layer(C_HEADERS[header]) > c_layer(m) or (
                    c_layer(C_HEADERS[header]) == c_layer(m) and C_HEADERS[header] != m):
                wrong.append(f"{m}.c includes {header} of a layer it may not call")
        for f in sorted(c_calls(text) - defined[m] - base):
            callee = owner.get(f)
            if callee is not None and c_layer(callee) >= c_layer(m):
                wrong.append(f"{m}.c calls {f} of {callee}.c, not of a lower layer")
    assert not wrong, "\n".join(wrong)


def test_the_c_checker_sees_a_call_upwards():
    text = "int ld__bdf_step(ld_bdf *w)\n{\n    return ld__rk_step(w);\n}\n"
    assert c_definitions(text) == {"ld__bdf_step"}
    assert "ld__rk_step" in c_calls(text)
    assert c_definitions("int ld__x(int a);\n") == set()


def test_the_c_sources_stay_readable():
    import re

    if not CSRC.is_dir():
        import pytest

        pytest.skip("no C sources beside the tests")
    too_long = []
    for path in sorted(CSRC.glob("*.[ch]")):
        lines = path.read_text(encoding="utf-8").split("\n")
        if len(lines) > C_FILE_LINES:
            too_long.append(f"{path.name}: {len(lines)} lines")
        start = None
        for k, line in enumerate(lines):
            if start is None and re.match(r"^\w[\w\s\*]*\([^;]*$", line) and \
                    not line.startswith(("typedef", "#")):
                start = k
            elif start is not None and line == "}":
                if k - start + 1 > C_FUNCTION_LINES:
                    too_long.append(f"{path.name}: {lines[start].split('(')[0]}, "
                                    f"{k - start + 1} lines")
                start = None
    assert not too_long, "\n".join(too_long)
