"""Shared fixtures. Tests marked `gpu` need a CUDA device (and skip without
one); the others run on the host backend everywhere. Seeds are printed on
failure through the test ids and assertion messages."""
import os

import pytest

import streamgraph as sg


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skips without one)")


def pytest_sessionfinish(session, exitstatus):
    """A run in which every test was skipped (the GPU tests without a GPU)
    exits with 77, which CTest reports as skipped rather than passed."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    stats = reporter.stats
    ran = sum(len(stats.get(k, [])) for k in ("passed", "failed", "error", "xpassed", "xfailed"))
    if ran == 0 and stats.get("skipped"):
        session.exitstatus = 77


def has_gpu():
    return sg.cuda_device_count() > 0 and os.environ.get("SG_BACKEND") != "host"


@pytest.fixture
def gpu():
    if not has_gpu():
        pytest.skip("no CUDA device (or a build without CUDA)")


@pytest.fixture
def torch_cuda(gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@pytest.fixture
def live_allocations():
    """Checks that what a test made is all freed: the library's allocation
    count is back at its start value once the test's objects are gone."""
    import gc
    if sg._lib.sg_live_allocations is None:
        pytest.skip("this library does not export sg_live_allocations")
    gc.collect()
    before = sg._lib.sg_live_allocations()
    yield
    gc.collect()
    after = sg._lib.sg_live_allocations()
    assert after <= before, "%d allocations of the library leaked" % (after - before)
