/* Pipelines: one trace of every instance on one timeline, each launch
 * labelled with its batch (the instances label their launches at submit). */
#include <stdio.h>

#include "core/handles.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "exec/trace_json.h"
#include "exec/trace_svg.h"
#include "pipeline/pipeline_internal.h"

/* Describes every instance's trace into `sources` (titles in `titles`). */
static sg_status gather(sg_pipeline *p, sg__trace_source *sources, char (*titles)[96],
                        const char *fn) {
  for (unsigned i = 0; i < p->depth; i++) {
    const char *name = sg__exec_graph_name(p->slots[i].inst.exec);
    snprintf(titles[i], sizeof titles[i], "instance %u of %u%s%.48s%s", i, p->depth,
             name ? " ('" : "", name ? name : "", name ? "')" : "");
    sg_status st = sg__exec_trace_source(p->slots[i].inst.exec, titles[i], &sources[i], fn);
    if (st) return st;
  }
  return SG_OK;
}

/* svg 0: Chrome trace JSON; 1: an SVG timeline. */
static sg_status write_trace(sg_pipeline *p, const char *path, int svg, const char *fn) {
  sg__trace_source *sources = sg__calloc(p->depth, sizeof *sources);
  char (*titles)[96] = sg__calloc(p->depth, sizeof *titles);
  sg_status st = !sources || !titles ? sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn)
                                     : gather(p, sources, titles, fn);
  if (!st)
    st = svg ? sg__trace_write_svg(sources, p->depth, path, fn)
             : sg__trace_write_json(sources, p->depth, path, fn);
  sg__free(sources);
  sg__free(titles);
  return st;
}

static sg_status write_checked(sg_pipeline *pipeline, const char *path, int svg,
                               const char *fn) {
  sg_status st = sg__pipeline_enter(pipeline, fn);
  if (st) return st;
  if (!path)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
  else if (!pipeline->options.exec.trace && !pipeline->dump)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: the pipeline was created without tracing (options.exec.trace)", fn);
  else
    st = write_trace(pipeline, path, svg, fn);
  sg__pipeline_leave(pipeline);
  return st;
}

sg_status sg_pipeline_write_trace(sg_pipeline *pipeline, const char *path) {
  return write_checked(pipeline, path, 0, __func__);
}

sg_status sg_pipeline_write_trace_svg(sg_pipeline *pipeline, const char *path) {
  return write_checked(pipeline, path, 1, __func__);
}

void sg__pipeline_dump(sg_pipeline *p) {
  char saved[SG_ERROR_MESSAGE_BYTES];
  snprintf(saved, sizeof saved, "%s", sg_last_error());
  char stem[4096], path[4200];
  sg__dump_stem(sg__exec_graph_name(p->slots[0].inst.exec), stem, sizeof stem);
  sg__exec_dump_graph(p->slots[0].inst.exec, stem);
  snprintf(path, sizeof path, "%s.pipeline.trace.json", stem);
  write_trace(p, path, 0, "sg_pipeline_destroy");
  snprintf(path, sizeof path, "%s.pipeline.trace.svg", stem);
  write_trace(p, path, 1, "sg_pipeline_destroy");
  sg__fail(SG_OK, "%s", saved);
}
