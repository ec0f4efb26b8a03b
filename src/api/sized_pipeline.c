/* The exported entry points of pipeline.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include <stddef.h>
#include <string.h>

#include "core/abi.h"
#include "core/error.h"
#include "core/sys.h"
#include "streamgraph/pipeline.h"

/* The layout of a program compiled before sg_exec_options.trace_every:
 * sg_exec_options ended at trace_launches, and the fields of
 * sg_pipeline_options after `exec` sat that much earlier (docs/abi.md: an
 * embedded struct that grows keeps the outer struct's older layouts). A
 * caller's size up to this struct's is read (and written) this way. */
typedef struct exec_options_v1 {
  sg_backend backend;
  sg_exec_mode mode;
  sg_graph_build build;
  unsigned max_streams;
  int device;
  sg_staging_options staging;
  int trace;
  unsigned trace_launches;
} exec_options_v1;

typedef struct pipeline_options_v1 {
  unsigned depth;
  exec_options_v1 exec;
  sg_pipeline_setup_fn setup;
  sg_pipeline_teardown_fn teardown;
  sg_pipeline_bind_fn bind;
  sg_pipeline_complete_fn on_complete;
  void *user_data;
  const int *devices;
  unsigned device_count;
  unsigned queue;
} pipeline_options_v1;

/* exec_options_v1 is sg_exec_options' first layout, a prefix of today's. */
_Static_assert(sizeof(exec_options_v1) == SG__ABI_FIRST(sg_exec_options, trace_launches),
               "exec_options_v1 is sg_exec_options up to trace_launches");
_Static_assert(offsetof(exec_options_v1, trace_launches) ==
                   offsetof(sg_exec_options, trace_launches),
               "exec_options_v1 is a prefix of sg_exec_options");
_Static_assert(sizeof(pipeline_options_v1) < sizeof(sg_pipeline_options),
               "today's layout is longer than the one before trace_every");

/* The first published layout ended at user_data, with exec_options_v1. */
#define PIPELINE_FIRST SG__ABI_FIRST(pipeline_options_v1, user_data)

static void from_v1(const pipeline_options_v1 *v, sg_pipeline_options *o) {
  memset(o, 0, sizeof *o);
  o->depth = v->depth;
  memcpy(&o->exec, &v->exec, sizeof v->exec); /* trace_every and later: 0, as before */
  o->setup = v->setup;
  o->teardown = v->teardown;
  o->bind = v->bind;
  o->on_complete = v->on_complete;
  o->user_data = v->user_data;
  o->devices = v->devices;
  o->device_count = v->device_count;
  o->queue = v->queue;
}

static void to_v1(const sg_pipeline_options *o, pipeline_options_v1 *v) {
  memset(v, 0, sizeof *v);
  v->depth = o->depth;
  memcpy(&v->exec, &o->exec, sizeof v->exec);
  v->setup = o->setup;
  v->teardown = o->teardown;
  v->bind = o->bind;
  v->on_complete = o->on_complete;
  v->user_data = o->user_data;
  v->devices = o->devices;
  v->device_count = o->device_count;
  v->queue = o->queue;
}

void sg_pipeline_options_init_sized(sg_pipeline_options *opts, size_t opts_size) {
  if (!opts) return;
  if (opts_size == sizeof *opts) {
    sg_pipeline_options_init(opts);
    return;
  }
  /* Smaller than any layout: nothing can be filled in right. */
  if (opts_size < PIPELINE_FIRST) return;
  sg_pipeline_options local;
  sg_pipeline_options_init(&local);
  if (opts_size <= sizeof(pipeline_options_v1)) {
    pipeline_options_v1 v;
    to_v1(&local, &v);
    sg__abi_out(opts, opts_size, &v, sizeof v);
    return;
  }
  sg__abi_out(opts, opts_size, &local, sizeof local);
}

sg_status sg_pipeline_create_sized(const sg_graph *graph, const sg_pipeline_options *opts,
                                   size_t opts_size, sg_pipeline **out) {
  sg_pipeline_options local;
  const void *p;
  if (opts && opts_size != sizeof *opts && opts_size <= sizeof(pipeline_options_v1)) {
    pipeline_options_v1 v;
    sg_status st = sg__abi_in(opts, opts_size, PIPELINE_FIRST, &v, sizeof v,
                              "sg_pipeline_create", "opts", &p);
    if (st) return st;
    from_v1(p, &local);
    return sg_pipeline_create(graph, &local, out);
  }
  sg_status st = sg__abi_in(opts, opts_size, PIPELINE_FIRST, &local, sizeof local,
                            "sg_pipeline_create", "opts", &p);
  return st ? st : sg_pipeline_create(graph, p, out);
}

sg_status sg_pipeline_get_stats_sized(const sg_pipeline *pipeline, sg_pipeline_stats *stats,
                                      size_t stats_size) {
  if (!stats || stats_size == sizeof *stats) return sg_pipeline_get_stats(pipeline, stats);
  sg_status st = sg__abi_out_check(stats_size, SG__ABI_FIRST(sg_pipeline_stats, fail_status),
                                   "sg_pipeline_get_stats", "stats");
  if (st) return st;
  sg_pipeline_stats local;
  st = sg_pipeline_get_stats(pipeline, &local);
  if (!st) sg__abi_out(stats, stats_size, &local, sizeof local);
  return st;
}

sg_status sg_pipeline_get_instance_sized(const sg_pipeline *pipeline, unsigned index,
                                         sg_pipeline_instance *instance, size_t instance_size) {
  if (!instance || instance_size == sizeof *instance)
    return sg_pipeline_get_instance(pipeline, index, instance);
  sg_status st = sg__abi_out_check(instance_size, SG__ABI_FIRST(sg_pipeline_instance, data),
                                   "sg_pipeline_get_instance", "instance");
  if (st) return st;
  sg_pipeline_instance local;
  st = sg_pipeline_get_instance(pipeline, index, &local);
  if (!st) sg__abi_out(instance, instance_size, &local, sizeof local);
  return st;
}

/* Binds of another layout, brought to this library's in a new array (*out;
 * *owned to free), or the caller's own when the sizes agree. */
static sg_status binds_in(const sg_pipeline_bind *binds, size_t bind_size, size_t count,
                          const char *fn, const sg_pipeline_bind **out, sg_pipeline_bind **owned) {
  *out = binds;
  *owned = NULL;
  if (!binds || bind_size == sizeof *binds || count == 0) return SG_OK;
  sg_pipeline_bind *local = sg__realloc_array(NULL, count, sizeof *local);
  if (!local) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  for (size_t i = 0; i < count; i++) {
    const void *p;
    sg_status st = sg__abi_in((const char *)binds + i * bind_size, bind_size,
                              SG__ABI_FIRST(sg_pipeline_bind, arg), &local[i], sizeof *local, fn,
                              "a bind", &p);
    if (st) {
      sg__free(local);
      return st;
    }
    if (p != &local[i]) local[i] = *(const sg_pipeline_bind *)p;
  }
  *out = *owned = local;
  return SG_OK;
}

sg_status sg_pipeline_instance_bind_sized(sg_pipeline_instance *instance, size_t instance_size,
                                          const sg_pipeline_bind *binds, size_t bind_size,
                                          size_t count) {
  static const char fn[] = "sg_pipeline_instance_bind";
  sg_pipeline_instance local;
  const void *p;
  sg_status st = sg__abi_in(instance, instance_size, SG__ABI_FIRST(sg_pipeline_instance, data),
                            &local, sizeof local, fn, "instance", &p);
  const sg_pipeline_bind *b;
  sg_pipeline_bind *owned;
  if (!st) st = binds_in(binds, bind_size, count, fn, &b, &owned);
  if (st) return st;
  st = sg_pipeline_instance_bind((sg_pipeline_instance *)p, b, count);
  sg__free(owned);
  return st;
}

/* submit and try_submit: the batch and its binds in this library's layout. */
static sg_status submit(sg_pipeline *pipeline, const sg_pipeline_batch *batch, size_t batch_size,
                        size_t bind_size, uint64_t *index, int blocking) {
  const char *fn = blocking ? "sg_pipeline_submit" : "sg_pipeline_try_submit";
  sg_pipeline_batch local;
  const void *p;
  sg_status st = sg__abi_in(batch, batch_size, SG__ABI_FIRST(sg_pipeline_batch, user_data), &local,
                            sizeof local, fn, "batch", &p);
  if (st) return st;
  const sg_pipeline_batch *b = p;
  sg_pipeline_bind *owned = NULL;
  if (b && b->binds && bind_size != sizeof *b->binds) {
    if (b != &local) {
      local = *b;
      b = &local;
    }
    if ((st = binds_in(b->binds, bind_size, b->bind_count, fn, &local.binds, &owned))) return st;
  }
  st = blocking ? sg_pipeline_submit(pipeline, b, index)
                : sg_pipeline_try_submit(pipeline, b, index);
  sg__free(owned);
  return st;
}

sg_status sg_pipeline_submit_sized(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                                   size_t batch_size, size_t bind_size, uint64_t *index) {
  return submit(pipeline, batch, batch_size, bind_size, index, 1);
}

sg_status sg_pipeline_try_submit_sized(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                                       size_t batch_size, size_t bind_size, uint64_t *index) {
  return submit(pipeline, batch, batch_size, bind_size, index, 0);
}
