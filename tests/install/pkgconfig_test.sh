#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs a C program
# outside the project the way a user without CMake does:
#   cc prog.c $(pkg-config --cflags --libs streamgraph)
#   pkgconfig_test.sh BUILD_DIR WORK_DIR PROGRAM.c [EXPECT_BUILT]
# EXPECT_BUILT ("1,0,1,1": CUDA, NCCL, NVRTC, NVTX built in) is checked
# against the file's variables (Issue25Item9).
set -euo pipefail
build="$1" work="$2" program="$3" expect="${4:-}"
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
pc="$(find "$work/prefix" -path '*/pkgconfig/streamgraph.pc' | head -1)"
[ -n "$pc" ] || { echo "pkgconfig_test: no streamgraph.pc installed" >&2; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
# Beside the CMake package, as distributions expect.
[ -f "$(dirname "$pc")/../cmake/streamgraph/streamgraphConfig.cmake" ] ||
  { echo "pkgconfig_test: streamgraph.pc is not beside the CMake package" >&2; exit 1; }

if [ -n "$expect" ]; then
  IFS=, read -r want_cuda want_nccl want_nvrtc want_nvtx <<<"$expect"
  for part in cuda nccl nvrtc nvtx; do
    want="want_$part"
    got="$(pkg-config --variable=have_$part streamgraph)"
    [ "$got" = "${!want}" ] ||
      { echo "pkgconfig_test: have_$part is '$got', want ${!want}" >&2; exit 1; }
  done
  if [ "$want_nccl" = 1 ]; then
    lib="$(pkg-config --variable=nccl_library streamgraph)"
    [ -e "$lib" ] || { echo "pkgconfig_test: nccl_library '$lib' does not exist" >&2; exit 1; }
  fi
  echo "built in: cuda $want_cuda nccl $want_nccl nvrtc $want_nvrtc nvtx $want_nvtx"
fi

flags="$(pkg-config --cflags --libs streamgraph)"
echo "cc $(basename "$program") $flags"
cc -std=c11 -Wall -Wextra -Werror "$program" $flags -o "$work/outside"
libdir="$(pkg-config --variable=libdir streamgraph)"
# It starts as built: the run path in Libs finds the library (no
# LD_LIBRARY_PATH, no ldconfig).
env -u LD_LIBRARY_PATH "$work/outside" "$(pkg-config --modversion streamgraph)" "$work"

# A static link: the static library plus what `--static` adds (Libs.private)
# must be enough.
static_libs="$(pkg-config --static --libs streamgraph | sed 's/-lstreamgraph\b//')"
echo "cc $(basename "$program") $libdir/libstreamgraph.a $static_libs"
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags streamgraph) "$program" \
  "$libdir/libstreamgraph.a" $static_libs -o "$work/outside_static"
"$work/outside_static" "$(pkg-config --modversion streamgraph)" "$work"

# The kernels library has its own file, which pulls in streamgraph's; a
# program using both starts as built too.
pkg-config --exists streamgraph-kernels ||
  { echo "pkgconfig_test: no streamgraph-kernels.pc" >&2; exit 1; }
kflags="$(pkg-config --cflags --libs streamgraph-kernels)"
echo "cc outside_kernels.c $kflags"
cc -std=c11 -Wall -Wextra -Werror "$(dirname "$program")/outside_kernels.c" $kflags \
  -o "$work/outside_kernels"
env -u LD_LIBRARY_PATH "$work/outside_kernels"
