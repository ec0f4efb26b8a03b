/* SG_TRACE_DIR: an executable made while the variable names a directory is
 * traced, and when it is destroyed (or rebuilt for a new topology) its
 * graph, plan (DOT and SVG) and trace (JSON and SVG) are written there (docs/observability.md). A
 * diagnostic for programs one cannot edit: failures are ignored, and the
 * thread's last error message is left as it was. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sys.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/trace_json.h"
#include "plan/plan.h"

static atomic_uint dumps;

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

size_t sg__dump_stem(const char *graph_name, char *out, size_t cap) {
  const char *dir = getenv("SG_TRACE_DIR");
  char name[64];
  size_t k = 0;
  for (const char *p = graph_name ? graph_name : "graph"; *p && k + 1 < sizeof name; p++) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    name[k++] = ok ? c : '_';
  }
  name[k] = '\0';
  int n = snprintf(out, cap, "%s/%s-%u", dir ? dir : ".", k ? name : "graph",
                   atomic_fetch_add(&dumps, 1) + 1);
  return n < 0 ? 0 : (size_t)n;
}

void sg__exec_dump_graph(sg_exec *exec, const char *stem) {
  char path[4200];
  char *dot = NULL;
  if (sg__snapshot_to_dot(&exec->snap, &dot) == SG_OK) {
    snprintf(path, sizeof path, "%s.graph.dot", stem);
    write_text(path, dot);
    sg__free(dot);
  }
  if (sg_plan_to_dot(exec->plan, &dot) == SG_OK) {
    snprintf(path, sizeof path, "%s.plan.dot", stem);
    write_text(path, dot);
    sg_free(dot);
  }
  snprintf(path, sizeof path, "%s.plan.svg", stem);
  sg_plan_write_svg(exec->plan, path);
}

void sg__exec_dump(sg_exec *exec) {
  char saved[SG_ERROR_MESSAGE_BYTES];
  snprintf(saved, sizeof saved, "%s", sg_last_error());
  char stem[4096], path[4200];
  sg__dump_stem(exec->snap.graph_name, stem, sizeof stem);
  sg__exec_dump_graph(exec, stem);
  if (exec->trace && exec->launched) {
    snprintf(path, sizeof path, "%s.trace.json", stem);
    sg__exec_write_trace(exec, path, "sg_exec_destroy");
    snprintf(path, sizeof path, "%s.trace.svg", stem);
    sg__exec_write_trace_svg(exec, path, "sg_exec_destroy");
  }
  sg__fail(SG_OK, "%s", saved);
}
