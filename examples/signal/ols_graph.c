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

static void *alloc(ols_graph *m, size_t bytes, sg_status *st) {
  void *p = NULL;
  if (*st) return NULL;
  if (!bytes) {
    *st = SG_ERR_INVALID_ARGUMENT;
    note(m, "buffer size overflows");
    return NULL;
  }
  *st = sg_mem_alloc(m->backend, SG_MEMORY_DEVICE, 0, bytes, &p);
  if (*st) note(m, "%s", sg_last_error());
  return p;
}

/* Frees the buffers, and the FFT calls no node owns yet (those a node took
 * are NULL here). */
static void instance_free(ols_instance *in) {
  if (in->forward) fft_call_release(in->forward);
  if (in->inverse) fft_call_release(in->inverse);
  if (in->bank != in->blocks) sg_mem_free(in->bank);
  sg_mem_free(in->history);
  sg_mem_free(in->chunk);
  sg_mem_free(in->blocks);
  sg_mem_free(in->decimated);
  sg_mem_free(in->power);
  memset(in, 0, sizeof *in);
}

static int instance_make(ols_graph *m, ols_instance *in) {
  const fir_shape *s = &m->shape;
  const size_t c = sizeof(sg_complex_f32), outs = mul3(s->filters, fir_chunk_out(s), 1);
  memset(in, 0, sizeof *in);
  sg_status st = SG_OK;
  in->history = alloc(m, mul3(s->taps - 1, c, 1), &st);
  in->chunk = alloc(m, mul3(fir_chunk(s), c, 1), &st);
  in->blocks = alloc(m, mul3(s->blocks, s->block_len, c), &st);
  /* One filter multiplies in place; a bank needs room for every filter. */
  in->bank = s->filters == 1 ? in->blocks
                             : alloc(m, mul3(mul3(s->filters, s->blocks, s->block_len), c, 1), &st);
  in->decimated = alloc(m, mul3(outs, c, 1), &st);
  in->power = alloc(m, mul3(outs, sizeof(float), 1), &st);
  in->forward = calloc(1, sizeof *in->forward);
  in->inverse = calloc(1, sizeof *in->inverse);
  if (!st && (!in->forward || !in->inverse)) {
    st = SG_ERR_OUT_OF_MEMORY;
    note(m, "out of memory");
  }
  if (st) {
    instance_free(in);
    return -1;
  }
  *in->forward = (fft_call){NULL, 0, in->blocks, in->blocks, s->block_len, s->blocks};
  *in->inverse = (fft_call){NULL, 1, in->bank, in->bank, s->block_len, s->filters * s->blocks};
  if (m->backend == SG_BACKEND_CUDA) {
    fft_plans *plans = NULL;
    int rc = fft_plans_create(s->block_len, s->blocks, s->filters * s->blocks, 2, &plans);
    if (rc) {
      note(m, "cuFFT plans: status %d", rc);
      instance_free(in);
      return -1;
    }
    in->forward->plans = in->inverse->plans = plans;
    if ((rc = fft_warm_up(in->forward)) || (rc = fft_warm_up(in->inverse))) {
      note(m, "warming cuFFT up: status %d", rc);
      instance_free(in);
      return -1;
    }
  }
  return 0;
}

static sg_stream_fn_desc fft_desc(const ols_graph *m, fft_call *call, const char *name) {
  sg_stream_fn_desc d = {m->backend == SG_BACKEND_CUDA ? fft_cuda : NULL, call,
                         fft_call_release, fft_host, name};
  return d;
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
  ols_instance *t = &m->template_instance;
  if (instance_make(m, t)) return SG_ERR_CALLBACK;
  sg_status st = sg_graph_create(&m->graph);
  if (st) {
    note(m, "%s", sg_last_error());
    instance_free(t);
    return st;
  }
  const size_t c = sizeof(sg_complex_f32), outs = s->filters * fir_chunk_out(s);
  sg_kernel_call k;
  sg_copy_desc uh = {t->history, history, (s->taps - 1) * c, SG_COPY_AUTO, "upload_history"};
  sg_copy_desc uc = {t->chunk, chunk, fir_chunk(s) * c, SG_COPY_AUTO, "upload_chunk"};
  if (!st) st = sg_graph_add_copy(m->graph, &uh, NULL, 0, &m->up_history);
  if (!st) st = sg_graph_add_copy(m->graph, &uc, NULL, 0, &m->up_chunk);
  if (!st) {
    sg_node ups[2] = {m->up_history, m->up_chunk};
    sg_kernels_ols_assemble_c32(&k, t->blocks, t->history, t->chunk, s->taps - 1, s->block_len,
                                fir_hop(s), s->blocks);
    k.desc.name = "assemble";
    st = sg_graph_add_kernel(m->graph, &k.desc, ups, 2, &m->assemble);
  }
  if (!st) {
    sg_stream_fn_desc f = fft_desc(m, t->forward, "fft_forward");
    st = sg_graph_add_stream_fn(m->graph, &f, &m->assemble, 1, &m->fft_forward);
    if (!st) t->forward = NULL; /* the node owns it now */
  }
  if (!st) {
    sg_kernels_cmul_c32(&k, t->bank, t->blocks, spectra, s->block_len, s->blocks, s->filters,
                        1.0f); /* the spectra carry the 1 / block_len */
    k.desc.name = "filter";
    st = sg_graph_add_kernel(m->graph, &k.desc, &m->fft_forward, 1, &m->filter);
  }
  if (!st) {
    sg_stream_fn_desc f = fft_desc(m, t->inverse, "fft_inverse");
    st = sg_graph_add_stream_fn(m->graph, &f, &m->filter, 1, &m->fft_inverse);
    if (!st) t->inverse = NULL;
  }
  if (!st) {
    sg_kernels_ols_discard_c32(&k, t->decimated, t->bank, s->block_len, s->taps - 1,
                               s->filters * s->blocks, s->factor);
    k.desc.name = "discard_decimate";
    st = sg_graph_add_kernel(m->graph, &k.desc, &m->fft_inverse, 1, &m->discard);
  }
  if (!st) {
    sg_kernels_power_db_c32(&k, t->power, t->decimated, outs);
    k.desc.name = "power_db";
    st = sg_graph_add_kernel(m->graph, &k.desc, &m->discard, 1, &m->power);
  }
  if (!st) {
    sg_copy_desc d = {out, t->power, outs * sizeof(float), SG_COPY_AUTO, "download"};
    st = sg_graph_add_copy(m->graph, &d, &m->power, 1, &m->download);
  }
  if (st) {
    note(m, "%s", sg_last_error());
    sg_graph_destroy(m->graph); /* releases the FFT calls the graph owns */
    m->graph = NULL;
    instance_free(t);           /* and those it does not */
  }
  return st;
}

void ols_graph_free(ols_graph *m) {
  if (m->graph) sg_graph_destroy(m->graph);
  m->graph = NULL;
  instance_free(&m->template_instance);
}

int ols_pipeline_setup(sg_pipeline_instance *inst, void *user_data) {
  ols_graph *m = user_data;
  ols_instance *in = calloc(1, sizeof *in);
  if (!in) {
    note(m, "instance %u: out of memory", inst->index);
    return 1;
  }
  if (instance_make(m, in)) {
    free(in);
    return 2;
  }
  sg_pipeline_bind b[] = {
      sg_bind_copy_dst(m->up_history, in->history),
      sg_bind_copy_dst(m->up_chunk, in->chunk),
      sg_bind_kernel_arg(m->assemble, 0, &in->blocks, sizeof in->blocks),
      sg_bind_kernel_arg(m->assemble, 1, &in->history, sizeof in->history),
      sg_bind_kernel_arg(m->assemble, 2, &in->chunk, sizeof in->chunk),
      sg_bind_kernel_arg(m->filter, 0, &in->bank, sizeof in->bank),
      sg_bind_kernel_arg(m->filter, 1, &in->blocks, sizeof in->blocks),
      sg_bind_kernel_arg(m->discard, 0, &in->decimated, sizeof in->decimated),
      sg_bind_kernel_arg(m->discard, 1, &in->bank, sizeof in->bank),
      sg_bind_kernel_arg(m->power, 0, &in->power, sizeof in->power),
      sg_bind_kernel_arg(m->power, 1, &in->decimated, sizeof in->decimated),
      sg_bind_copy_src(m->download, in->power),
  };
  sg_status st = sg_pipeline_instance_bind(inst, b, sizeof b / sizeof b[0]);
  /* The instance's own plans; in graph mode their work is captured anew. */
  if (!st) {
    sg_stream_fn_desc f = fft_desc(m, in->forward, "fft_forward");
    st = sg_exec_set_stream_fn(inst->exec, m->fft_forward, &f);
    if (!st) in->forward = NULL;
  }
  if (!st) {
    sg_stream_fn_desc f = fft_desc(m, in->inverse, "fft_inverse");
    st = sg_exec_set_stream_fn(inst->exec, m->fft_inverse, &f);
    if (!st) in->inverse = NULL;
  }
  if (st) {
    note(m, "instance %u: %s", inst->index, sg_last_error());
    instance_free(in);
    free(in);
    return 3;
  }
  inst->data = in;
  return 0;
}

void ols_pipeline_teardown(sg_pipeline_instance *inst, void *user_data) {
  (void)user_data;
  ols_instance *in = inst->data;
  if (!in) return;
  instance_free(in);
  free(in);
  inst->data = NULL;
}

void ols_chunk_binds(const ols_graph *m, const sg_complex_f32 *history,
                     const sg_complex_f32 *chunk, float *out, sg_pipeline_bind binds[3]) {
  binds[0] = sg_bind_copy_src(m->up_history, history);
  binds[1] = sg_bind_copy_src(m->up_chunk, chunk);
  binds[2] = sg_bind_copy_dst(m->download, out);
}
