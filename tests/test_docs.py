"""The documentation: the README is a front page whose example runs, no user-facing file
speaks of the project's internal source-document names, every built-in model appears in an
example, and (slow) the Sphinx site builds with warnings as errors, running every example
and every code block of its pages."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import linkdyn

ROOT = Path(__file__).resolve().parents[1]


def test_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) <= 15_000
    # The two set-up commands, the test command behind the marker CI reads.
    assert "bash ci/install.sh && .venv/bin/linkdyn simulate jansen" in text
    assert re.search(r"<!-- ci:test-command -->\n```bash\nbash ci/install.sh && bash ci/test.sh",
                     text)
    # Its links into the docs and the examples lead somewhere.
    for link in re.findall(r"\]\(((?:docs|examples)/[^)]*)\)", text):
        assert (ROOT / link).exists(), link
    assert (ROOT / "docs" / "_static" / "jansen.png").is_file()


def test_readme_example_runs(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## A first mechanism\n\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["result"].status == "success"
    assert (tmp_path / "crank.gif").stat().st_size > 0


def test_no_user_facing_file_names_the_source_documents_by_number():
    # Users cannot know the project's internal file names of its source papers: cite the
    # papers themselves.
    pattern = re.compile(r"\bseeds?\s*0*\d", re.I)
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    for folder, suffixes in (("src/linkdyn", (".py", ".pyx", ".json")), ("docs", (".md", ".py")),
                             ("examples", (".py", ".rst"))):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in suffixes
                  and "_build" not in p.parts and "generated" not in p.parts
                  and "auto_examples" not in p.parts]
    offenders = [str(p.relative_to(ROOT)) for p in files
                 if pattern.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert offenders == []


def test_every_builtin_model_appears_in_an_example():
    examples = "".join(p.read_text(encoding="utf-8")
                       for p in sorted((ROOT / "examples").glob("plot_*.py")))
    assert len(list((ROOT / "examples").glob("plot_*.py"))) >= 12
    missing = [name for name in linkdyn.builtin_names() if f'"{name}"' not in examples
               and not re.search(rf'"{re.sub(r"[0-9]+$", "", name)}{{k}}"', examples)]
    assert missing == []


def test_api_reference_lists_every_public_name():
    api = ROOT / "docs" / "api"
    text = "".join(p.read_text(encoding="utf-8") for p in api.glob("*.*"))
    listed = set(re.findall(r"^   ([A-Za-z_][A-Za-z0-9_]*)$", text, re.M))
    modules = {path.rsplit(".", 1)[-1]
               for path in re.findall(r"automodule:: linkdyn\.([a-z_.]+)$", text, re.M)}
    missing = [name for name in linkdyn.__all__ if name != "__version__"
               and name not in listed and name not in modules]
    assert missing == []


@pytest.mark.slow
def test_documentation_builds_with_warnings_as_errors():
    # ci/docs.sh installs the docs extra into the environment when it is missing, builds
    # the HTML (every gallery example runs) and runs the pages' code blocks (doctest).
    venv = ROOT / ".venv" / "bin" / "python"
    if Path(sys.executable).resolve() != venv.resolve() and not venv.exists():
        pytest.skip("ci/docs.sh builds against ./.venv, made by ci/install.sh")
    env = {k: v for k, v in os.environ.items() if k != "LINKDYN_DOCS_FAST"}
    done = subprocess.run(["bash", str(ROOT / "ci" / "docs.sh")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    html = ROOT / "docs" / "_build" / "html"
    examples = list((html / "auto_examples").glob("plot_*.html"))
    assert len(examples) >= 12
    images = list((html / "_images").glob("sphx_glr_plot_*.png"))
    assert len(images) >= len(examples)
    assert (html / "api" / "generated" / "linkdyn.simulate.html").is_file()
