"""Check that every compiled extension of the installed linkdyn resolves the SuiteSparse
libraries from the wheel itself (linkdyn.libs/), never from the system. Run with the
interpreter of the environment the wheel is installed in."""

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import linkdyn

SUITESPARSE = re.compile(r"lib(klu|ldl|amd|colamd|btf|camd|ccolamd|cholmod|suitesparseconfig)\b")

pkg = Path(linkdyn.__file__).parent
libs = pkg.parent / "linkdyn.libs"
extensions = sorted(pkg.glob("*.so"))
if not extensions:
    sys.exit(f"no compiled extensions under {pkg}")
problems, bundled = [], 0
for ext in extensions:
    out = subprocess.run(["ldd", str(ext)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if "not found" in line:
            problems.append(f"{ext.name}: {line.strip()}")
        m = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if m and SUITESPARSE.search(m.group(1)):
            if Path(m.group(2)).resolve().parent != libs.resolve():
                problems.append(f"{ext.name}: {m.group(1)} resolves to {m.group(2)}, outside "
                                f"{libs}")
            else:
                bundled += 1
# What a distribution carries besides code: its licence text and the typing marker.
dist = metadata.distribution("linkdyn")
files = {str(f) for f in dist.files or ()}
if not any(f.endswith("LICENSE") for f in files):
    problems.append("the wheel carries no LICENSE file")
if not (pkg / "py.typed").exists():
    problems.append("the wheel carries no py.typed marker")
if problems:
    sys.exit("wheel is not self-contained:\n  " + "\n  ".join(problems))
if bundled == 0:
    sys.exit("no SuiteSparse library found among the extensions' dependencies")
print(f"ok: {len(extensions)} extensions; {bundled} SuiteSparse dependencies, all resolved "
      f"inside {libs}; LICENSE and py.typed included")
