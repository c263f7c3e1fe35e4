"""The linkdyn command."""

import subprocess
import sys

import linkdyn
from linkdyn.cli import main


def test_assemble_jansen(capsys):
    assert main(["assemble"]) == 0
    out = capsys.readouterr().out
    assert "coordinates 44, constraints 43" in out
    assert "degrees of freedom 1" in out
    assert "total -0.5806293458 J" in out


def test_assemble_model_file(tmp_path, capsys, fourbar):
    path = tmp_path / "fourbar.json"
    fourbar.save(path)
    assert main(["assemble", str(path)]) == 0
    assert "model fourbar" in capsys.readouterr().out


def test_errors_are_reported_not_raised(capsys, tmp_path):
    assert main(["assemble", "no-such-model"]) == 2
    assert "not a built-in model" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["assemble", str(bad)]) == 2
    assert "missing required field" in capsys.readouterr().err


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "linkdyn", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"linkdyn {linkdyn.__version__}"
