/* The filter bank's graph, its pipeline instances and its per-chunk binds
 * (see ols_graph.h). */
#include "ols_graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamgraph/kernels.h"

static void note(ols_graph *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->message, sizeof m->message, fmt, ap);
  va_end(ap);
}

/* a * b * c, or 0 when it overflows. */
static size_t mul3(size_t a, size_t b, size_t c) {
  if (b && a > SIZE_MAX / b) return 0;
  size_t ab = a * b;
  if (c && ab > SIZE_MAX / c) return 0;
  return ab * c;
}

static sg_temp add_temp(ols_graph *m, size_t bytes, const char *name, sg_status *st) {
  sg_temp t = {0};
  if (*st) return t;
  if (!bytes) {
    *st = SG_ERR_INVALID_ARGUMENT;
    note(m, "buffer size overflows");
    return t;
  }
  sg_temp_desc d = {bytes, 0, name};
  if ((*st = sg_graph_add_temp(m->graph, &d, &t))) note(m, "%s", sg_last_error());
  return t;
}

/* A kernel node whose pointer arguments 0 .. count-1 are the temporaries
 * `t` (the values in the descriptor are replaced in every executable),
 * with their accesses: argument 0 written, the others read. */
static sg_status add_kernel(ols_graph *m, sg_kernel_call *k, const char *name, const sg_temp *t,
                            unsigned count, sg_node *out) {
  k->desc.name = name;
  sg_status st = sg_graph_add_kernel(m->graph, &k->desc, NULL, 0, out);
  sg_access acc[3];
  for (unsigned i = 0; i < count && !st; i++) {
    st = sg_graph_bind_temp(m->graph, *out, i, t[i], 0);
    acc[i] = sg_access_temp(t[i], i ? SG_ACCESS_READ : SG_ACCESS_WRITE);
  }
  /* The filter of one filter multiplies in place: one access, both ways. */
  if (!st && count == 2 && t[0].opaque == t[1].opaque) {
    acc[0].mode = SG_ACCESS_READ_WRITE;
    count = 1;
  }
  if (!st) st = sg_graph_declare_access(m->graph, *out, acc, count);
  return st;
}

static sg_stream_fn_desc fft_desc(const ols_graph *m, fft_call *call, const char *name) {
  sg_stream_fn_desc d = {m->backend == SG_BACKEND_CUDA ? fft_cuda : NULL, call,
                         fft_call_release, fft_host, name};
  return d;
}

/* An FFT node reading and writing temporary `t` in place. The graph's call
 * is a placeholder (no buffers: it does nothing); every pipeline instance
 * gives the node its own (ols_pipeline_setup). */
static sg_status add_fft(ols_graph *m, int inverse, size_t count, sg_temp t, const char *name,
                         sg_node *out) {
  fft_call *call = calloc(1, sizeof *call);
  if (!call) return SG_ERR_OUT_OF_MEMORY;
  *call = (fft_call){NULL, inverse, NULL, NULL, m->shape.block_len, count};
  sg_stream_fn_desc d = fft_desc(m, call, name);
  sg_status st = sg_graph_add_stream_fn(m->graph, &d, NULL, 0, out);
  if (st) {
    fft_call_release(call); /* the graph did not take it */
    return st;
  }
  sg_access a = sg_access_temp(t, SG_ACCESS_READ_WRITE);
  return sg_graph_declare_access(m->graph, *out, &a, 1);
}

sg_status ols_graph_build(ols_graph *m, sg_backend backend, const fir_shape *s,
                          const sg_complex_f32 *spectra, const sg_complex_f32 *history,
                          const sg_complex_f32 *chunk, float *out) {
  memset(m, 0, sizeof *m);
  m->backend = backend;
  m->shape = *s;
  m->spectra = spectra;
  const char *problem = fir_shape_problem(s);
  if (problem) {
    note(m, "%s", problem);
    return SG_ERR_INVALID_ARGUMENT;
  }
  sg_status st = sg_graph_create(&m->graph);
  if (st) {
    note(m, "%s", sg_last_error());
    return st;
  }
  const size_t c = sizeof(sg_complex_f32), outs = mul3(s->filters, fir_chunk_out(s), 1);
  m->history = add_temp(m, mul3(s->taps - 1, c, 1), "history", &st);
  m->chunk = add_temp(m, mul3(fir_chunk(s), c, 1), "chunk", &st);
  m->blocks = add_temp(m, mul3(s->blocks, s->block_len, c), "blocks", &st);
  /* One filter multiplies in place; a bank needs room for every filter. */
  m->bank = s->filters == 1
                ? m->blocks
                : add_temp(m, mul3(mul3(s->filters, s->blocks, s->block_len), c, 1), "bank", &st);
  m->decimated = add_temp(m, mul3(outs, c, 1), "decimated", &st);
  m->powers = add_temp(m, mul3(outs, sizeof(float), 1), "powers", &st);
  if (st) {
    ols_graph_free(m);
    return st;
  }
  sg_kernel_call k;
  sg_copy_desc uh = {NULL, history, (s->taps - 1) * c, SG_COPY_AUTO, "upload_history"};
  sg_copy_desc uc = {NULL, chunk, fir_chunk(s) * c, SG_COPY_AUTO, "upload_chunk"};
  sg_access w;
  st = sg_graph_add_copy_temp(m->graph, &uh, m->history, 0, (sg_temp){0}, 0, NULL, 0,
                              &m->up_history);
  w = sg_access_temp(m->history, SG_ACCESS_WRITE);
  if (!st) st = sg_graph_declare_access(m->graph, m->up_history, &w, 1);
  if (!st)
    st = sg_graph_add_copy_temp(m->graph, &uc, m->chunk, 0, (sg_temp){0}, 0, NULL, 0,
                                &m->up_chunk);
  w = sg_access_temp(m->chunk, SG_ACCESS_WRITE);
  if (!st) st = sg_graph_declare_access(m->graph, m->up_chunk, &w, 1);
  if (!st) {
    /* Pointer arguments are placeholders: the temporaries bound replace them. */
    sg_kernels_ols_assemble_c32(&k, NULL, NULL, NULL, s->taps - 1, s->block_len, fir_hop(s),
                                s->blocks);
    sg_temp t[3] = {m->blocks, m->history, m->chunk};
    st = add_kernel(m, &k, "assemble", t, 3, &m->assemble);
  }
  if (!st) st = add_fft(m, 0, s->blocks, m->blocks, "fft_forward", &m->fft_forward);
  if (!st) {
    sg_kernels_cmul_c32(&k, NULL, NULL, spectra, s->block_len, s->blocks, s->filters,
                        1.0f); /* the spectra carry the 1 / block_len */
    sg_temp t[2] = {m->bank, m->blocks};
    st = add_kernel(m, &k, "filter", t, 2, &m->filter);
  }
  if (!st)
    st = add_fft(m, 1, s->filters * s->blocks, m->bank, "fft_inverse", &m->fft_inverse);
  if (!st) {
    sg_kernels_ols_discard_c32(&k, NULL, NULL, s->block_len, s->taps - 1, s->filters * s->blocks,
                               s->factor);
    sg_temp t[2] = {m->decimated, m->bank};
    st = add_kernel(m, &k, "discard_decimate", t, 2, &m->discard);
  }
  if (!st) {
    sg_kernels_power_db_c32(&k, NULL, NULL, outs);
    sg_temp t[2] = {m->powers, m->decimated};
    st = add_kernel(m, &k, "power_db", t, 2, &m->power);
  }
  if (!st) {
    sg_copy_desc d = {out, NULL, outs * sizeof(float), SG_COPY_AUTO, "download"};
    st = sg_graph_add_copy_temp(m->graph, &d, (sg_temp){0}, 0, m->powers, 0, NULL, 0,
                                &m->download);
    sg_access r = sg_access_temp(m->powers, SG_ACCESS_READ);
    if (!st) st = sg_graph_declare_access(m->graph, m->download, &r, 1);
  }
  if (st) {
    note(m, "%s", sg_last_error());
    ols_graph_free(m); /* releases the FFT calls the graph owns */
  }
  return st;
}

void ols_graph_free(ols_graph *m) {
  if (m->graph) sg_graph_destroy(m->graph);
  m->graph = NULL;
}

int ols_pipeline_setup(sg_pipeline_instance *inst, void *user_data) {
  ols_graph *m = user_data;
  const fir_shape *s = &m->shape;
  void *blocks = NULL, *bank = NULL;
  sg_status st = sg_exec_get_temp(inst->exec, m->blocks, &blocks);
  if (!st) st = sg_exec_get_temp(inst->exec, m->bank, &bank);
  if (st) {
    note(m, "instance %u: %s", inst->index, sg_last_error());
    return 1;
  }
  fft_call *forward = calloc(1, sizeof *forward), *inverse = calloc(1, sizeof *inverse);
  if (!forward || !inverse) {
    free(forward);
    free(inverse);
    note(m, "instance %u: out of memory", inst->index);
    return 2;
  }
  *forward = (fft_call){NULL, 0, blocks, blocks, s->block_len, s->blocks};
  *inverse = (fft_call){NULL, 1, bank, bank, s->block_len, s->filters * s->blocks};
  int rc = 0;
  if (m->backend == SG_BACKEND_CUDA) {
    /* One reference per FFT node; the warm-up writes only the instance's
     * temporaries, and nothing has run on them yet. */
    fft_plans *plans = NULL;
    rc = fft_plans_create(s->block_len, s->blocks, s->filters * s->blocks, 2, &plans);
    if (rc) note(m, "instance %u: cuFFT plans: status %d", inst->index, rc);
    forward->plans = inverse->plans = plans;
    if (!rc && ((rc = fft_warm_up(forward)) || (rc = fft_warm_up(inverse))))
      note(m, "instance %u: warming cuFFT up: status %d", inst->index, rc);
  }
  if (!rc) {
    sg_stream_fn_desc f = fft_desc(m, forward, "fft_forward");
    if (!(st = sg_exec_set_stream_fn(inst->exec, m->fft_forward, &f))) forward = NULL;
  }
  if (!rc && !st) {
    sg_stream_fn_desc f = fft_desc(m, inverse, "fft_inverse");
    if (!(st = sg_exec_set_stream_fn(inst->exec, m->fft_inverse, &f))) inverse = NULL;
  }
  if (st) note(m, "instance %u: %s", inst->index, sg_last_error());
  /* What a node did not take (each drops its reference to the plans). */
  if (forward) fft_call_release(forward);
  if (inverse) fft_call_release(inverse);
  return rc || st ? 3 : 0;
}

void ols_pipeline_teardown(sg_pipeline_instance *inst, void *user_data) {
  (void)inst;
  (void)user_data; /* the instance's FFT calls belong to its nodes */
}

void ols_chunk_binds(const ols_graph *m, const sg_complex_f32 *history,
                     const sg_complex_f32 *chunk, float *out, sg_pipeline_bind binds[3]) {
  binds[0] = sg_bind_copy_src(m->up_history, history);
  binds[1] = sg_bind_copy_src(m->up_chunk, chunk);
  binds[2] = sg_bind_copy_dst(m->download, out);
}
