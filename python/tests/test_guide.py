"""The Python program of the user guide (examples/guide/first.py, shown in
docs/guide.md) runs as written on the host backend, and the timeline it
draws is there."""
import os
import runpy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "examples", "guide", "first.py")


def test_guide_program_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SG_BACKEND", raising=False)
    runpy.run_path(PROGRAM, run_name="__main__")
    assert "python: correct" in capsys.readouterr().out
    svg = (tmp_path / "guide_python_timeline.svg").read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "<svg" in svg
    assert "'upload'" in svg and "'download'" in svg and "'scale'" in svg
