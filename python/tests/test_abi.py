"""The ctypes structures match the C headers: a C program prints each
structure's size and each field's offset, compared with ctypes' own."""
import ctypes
import os
import shutil
import subprocess

import pytest

from streamgraph import _lib

# The headers: the source tree's, plus the build's generated ones
# (STREAMGRAPH_INCLUDE, set by CTest: folders separated by ':').
INCLUDES = [p for p in os.environ.get("STREAMGRAPH_INCLUDE", "").split(":") if p] or [
    os.path.join(os.path.dirname(__file__), "..", "..", "include")]
INCLUDE = INCLUDES[0]

STRUCTS = [
    "sg_node", "sg_dim3", "sg_kernel_launch", "sg_copy_desc", "sg_kernel_desc",
    "sg_memset_desc", "sg_host_desc", "sg_staging_options", "sg_exec_options", "sg_exec_info",
    "sg_exec_stats", "sg_pipeline_instance", "sg_pipeline_options", "sg_pipeline_bind",
    "sg_pipeline_batch", "sg_pipeline_stats", "sg_temp", "sg_temp_desc", "sg_access",
    "sg_exec_memory", "sg_grid_ref",
]
MODULE_STRUCTS = ["sg_module_header", "sg_module_options", "sg_module_stats"]


def test_structures_match_the_headers(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or not os.path.isdir(INCLUDE):
        pytest.skip("needs a C compiler and the source tree's include/")
    have_module = os.path.exists(os.path.join(INCLUDE, "streamgraph", "module.h"))
    structs = STRUCTS + (MODULE_STRUCTS if have_module else [])
    lines = ["#include <stddef.h>", "#include <stdio.h>",
             "#include \"streamgraph/streamgraph.h\"",
             "#include \"streamgraph/grid_device.h\""]
    if have_module:
        lines.append("#include \"streamgraph/module.h\"")
    lines.append("int main(void) {")
    expected = []
    for name in structs:
        cls = getattr(_lib, name)
        lines.append('  printf("%s %%zu\\n", sizeof(%s));' % (name, name))
        expected.append("%s %d" % (name, ctypes.sizeof(cls)))
        for field, _ in cls._fields_:
            lines.append('  printf("%s.%s %%zu\\n", offsetof(%s, %s));'
                         % (name, field, name, field))
            expected.append("%s.%s %d" % (name, field, getattr(cls, field).offset))
    lines += ["  return 0;", "}"]
    src = tmp_path / "abi.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "abi"
    flags = [x for d in INCLUDES for x in ("-I", d)]
    subprocess.run([cc, "-std=c11"] + flags + [str(src), "-o", str(exe)], check=True)
    got = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    mismatches = [(e, g) for e, g in zip(expected, got) if e != g]
    assert not mismatches, "ctypes vs C (expected, got): %r" % mismatches
    assert len(got) - 1 == len(expected)
