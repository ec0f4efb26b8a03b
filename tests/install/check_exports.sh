#!/usr/bin/env bash
# The shared libraries export what they should and nothing else (nm -D):
#   check_exports.sh LIBSTREAMGRAPH LIBSTREAMGRAPH_TESTING LIBSTREAMGRAPH_KERNELS
#  - libstreamgraph: only public names (sg_ followed by a letter or digit;
#    internal sg__ names and everything else hidden), and not the
#    fault-injection entry points of streamgraph/testing.h;
#  - libstreamgraph_testing: the same public names plus those entry points;
#  - libstreamgraph_kernels: only sg_kernels_ names;
#  - both installed libraries carry a versioned soname.
set -euo pipefail
lib="$1" testing="$2" kernels="$3"
status=0
fail() { echo "check_exports: $*" >&2; status=1; }

# Defined dynamic symbols, without those the linker itself defines.
exported() {
  nm -D --defined-only "$1" | awk '{print $NF}' | sed 's/@.*//' |
    grep -vxE '_init|_fini|__bss_start|_edata|_end|_DYNAMIC|_GLOBAL_OFFSET_TABLE_' || true
}
testing_only='sg_fault_arm sg_fault_arm_site sg_fault_fired sg_fault_site sg_live_allocations'

prod="$(exported "$lib")"
bad="$(printf '%s\n' "$prod" | grep -vE '^sg_[a-z0-9]' || true)"
[ -z "$bad" ] || fail "$(basename "$lib") exports non-public symbols:" $bad
for s in $testing_only; do
  grep -qx "$s" <<<"$prod" && fail "$(basename "$lib") exports $s (test-only)"
done
for s in sg_version sg_graph_create sg_exec_launch; do
  grep -qx "$s" <<<"$prod" || fail "$(basename "$lib") does not export $s"
done

test_syms="$(exported "$testing")"
bad="$(printf '%s\n' "$test_syms" | grep -vE '^sg_[a-z0-9]' || true)"
[ -z "$bad" ] || fail "$(basename "$testing") exports non-public symbols:" $bad
for s in $testing_only sg_version; do
  grep -qx "$s" <<<"$test_syms" || fail "$(basename "$testing") does not export $s"
done

kern="$(exported "$kernels")"
bad="$(printf '%s\n' "$kern" | grep -vE '^sg_kernels_' || true)"
[ -z "$bad" ] || fail "$(basename "$kernels") exports symbols outside sg_kernels_:" $bad
grep -qx sg_kernels_mix <<<"$kern" || fail "$(basename "$kernels") lacks sg_kernels_mix"

for l in "$lib" "$kernels"; do
  soname="$(objdump -p "$l" | awk '$1 == "SONAME" {print $2}')"
  [[ "$soname" =~ \.so\.[0-9]+$ ]] || fail "$(basename "$l") has no versioned soname ('$soname')"
done

[ $status -eq 0 ] && echo "check_exports: $(printf '%s\n' "$prod" | wc -l) public symbols," \
  "$(printf '%s\n' "$kern" | wc -l) kernels symbols, test-only entry points hidden"
exit $status
