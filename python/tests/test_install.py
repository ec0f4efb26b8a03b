"""`pip install ./python` works offline (no index, nothing downloaded: the
package's build backend is standard library only) and leaves nothing in the
source tree (no build/, no *.egg-info); the installed package imports and
runs a graph on the host backend."""
import os
import shutil
import subprocess
import sys

import pytest

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/


def listing(root):
    out = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(folder, name), root))
    return out


def test_pip_install_offline_leaves_the_tree_clean(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip("pip is not installed for %s" % sys.executable)
    src = tmp_path / "python"
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = listing(src)
    site = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1")
    env.pop("PYTHONPATH", None)  # the installed copy, not the source tree
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                        "--target", str(site), str(src)], capture_output=True, text=True,
                       env=env, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert listing(src) == before, "pip left files in the source tree: %s" % sorted(
        listing(src) - before)
    assert (site / "streamgraph" / "__init__.py").exists()
    program = ("import numpy as np, streamgraph as sg\n"
               "assert sg.__file__.startswith(%r), sg.__file__\n"
               "a = np.arange(1000, dtype=np.float32); b = np.empty_like(a)\n"
               "d = sg.empty(1000, 'float32', backend='host')\n"
               "g = sg.Graph(); u = g.copy(d, a); g.copy(b, d, after=u)\n"
               "g.compile(backend='host').run()\n"
               "assert (a == b).all()\n"
               "print('installed package: correct')\n") % str(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                       env=env, cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "installed package: correct" in r.stdout
