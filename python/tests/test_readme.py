"""The first example of python/README.md runs as written, on the CPU (the
host backend): taken from the file, not copied, so the two cannot drift."""
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def first_python_block():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"```python\n(.*?)```", text, re.S)
    assert m, "python/README.md has no ```python block"
    return m.group(1)


def test_first_example_runs_on_the_host_backend(capsys, monkeypatch):
    code = first_python_block()
    assert 'backend="host"' in code, "the first example must name the host backend"
    assert "sg.Module" not in code, "the first example must not need a GPU (NVRTC modules do)"
    monkeypatch.delenv("SG_BACKEND", raising=False)
    exec(compile(code, README, "exec"), {"__name__": "readme_example"})
    assert "axpy on the host backend: correct" in capsys.readouterr().out


def test_first_example_ignores_sg_backend_cuda(monkeypatch):
    """It names its backend, so SG_BACKEND (which only steers "auto") does
    not change where it runs."""
    monkeypatch.setenv("SG_BACKEND", "cuda")
    exec(compile(first_python_block(), README, "exec"), {"__name__": "readme_example"})


def test_resolve_backend_refuses_what_it_cannot_honour(monkeypatch):
    import streamgraph as sg
    monkeypatch.setenv("SG_BACKEND", "bogus")
    with pytest.raises(sg.StreamgraphError) as err:
        sg.resolve_backend()
    assert 'SG_BACKEND is "bogus"' in str(err.value)
    if sg.cuda_device_count() == 0:
        monkeypatch.setenv("SG_BACKEND", "cuda")
        with pytest.raises(sg.BackendUnavailableError) as err:
            sg.resolve_backend()
        assert "SG_BACKEND=cuda" in str(err.value)
    monkeypatch.setenv("SG_BACKEND", "host")
    assert sg.resolve_backend() == "host"
