"""Modules from Python without a GPU: what a build or machine that cannot
load them answers, and the statistics call."""
import pytest

import streamgraph as sg
from conftest import has_gpu

SOURCE = 'extern "C" __global__ void k(int *p) { *p = 1; }'


def test_without_a_device_creation_says_why():
    if has_gpu():
        pytest.skip("a CUDA device is present")
    with pytest.raises(sg.StreamgraphError) as info:
        sg.Module(SOURCE)
    assert isinstance(info.value, (sg.UnsupportedError, sg.BackendUnavailableError))
    assert "sg_module_create_from_source" in info.value.message
    with pytest.raises(sg.StreamgraphError):
        sg.Module.from_ptx(".version 8.0\n.target sm_90\n")


def test_images_that_are_no_code_are_refused():
    with pytest.raises(sg.StreamgraphError) as info:
        sg.Module.from_image(b"neither PTX nor ELF", name="junk.bin")
    assert info.value.status == "SG_ERR_INVALID_ARGUMENT"
    assert "junk.bin" in info.value.message
    with pytest.raises(sg.StreamgraphError) as info:
        sg.Module.from_file("/nonexistent/kernels.ptx")
    assert "cannot open" in info.value.message


def test_stats_are_a_dict_of_counts():
    s = sg.module_stats()
    assert set(s) == {"compiles", "cache_hits", "cache_misses", "cache_stores", "cache_errors",
                      "loads", "live_modules"}
    assert all(isinstance(v, int) and v >= 0 for v in s.values())
