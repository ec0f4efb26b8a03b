/* The MLP's graph, its pipeline instances and its per-batch binds (see
 * mlp_graph.h). */
#include "mlp_graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamgraph/kernels.h"

#define WORKSPACE_BYTES ((size_t)32 << 20) /* what cuBLAS asks for on Hopper */

/* a * b * c, or 0 when it overflows (no buffer here is empty). */
static size_t mul3(size_t a, size_t b, size_t c) {
  if (b && a > SIZE_MAX / b) return 0;
  size_t ab = a * b;
  if (c && ab > SIZE_MAX / c) return 0;
  return ab * c;
}

static void note(mlp_graph *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->message, sizeof m->message, fmt, ap);
  va_end(ap);
}

sg_status mlp_device_weights_upload(sg_backend backend, const mlp_shape *s,
                                    const mlp_weights *host, mlp_device_weights *out) {
  memset(out, 0, sizeof *out);
  sg_status st = SG_OK;
#define UPLOAD(dst, src, count)                                                         \
  do {                                                                                  \
    size_t bytes_ = mul3((count), sizeof(float), 1);                                    \
    void *p_ = NULL;                                                                    \
    if (!st) st = sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, bytes_, &p_);              \
    if (!st) st = sg_mem_copy(p_, (src), bytes_);                                       \
    if (p_) (dst) = p_;                                                                 \
  } while (0)
  UPLOAD(out->gamma, host->gamma, s->in);
  UPLOAD(out->beta, host->beta, s->in);
  for (unsigned l = 0; l < s->layers; l++) {
    UPLOAD(out->w[l], host->w[l], mul3(mlp_dim(s, l), mlp_dim(s, l + 1), 1));
    UPLOAD(out->b[l], host->b[l], mlp_dim(s, l + 1));
  }
#undef UPLOAD
  if (st) mlp_device_weights_free(s, out);
  return st;
}

void mlp_device_weights_free(const mlp_shape *s, mlp_device_weights *w) {
  for (unsigned l = 0; l < s->layers; l++) {
    sg_mem_free(w->w[l]);
    sg_mem_free(w->b[l]);
  }
  sg_mem_free(w->gamma);
  sg_mem_free(w->beta);
  memset(w, 0, sizeof *w);
}

static sg_stream_fn_desc gemm_desc(const mlp_graph *m, mlp_gemm *g, const char *name) {
  sg_stream_fn_desc d = {m->backend == SG_BACKEND_CUDA ? mlp_gemm_cuda : NULL, g,
                         mlp_gemm_release, mlp_gemm_host, name};
  return d;
}

/* A kernel node whose arguments 0 and 1 (output, input) are the
 * temporaries `out` and `in` (the pointers in the call are replaced in
 * every executable), with their accesses: in place when they are one. */
static sg_status add_kernel(mlp_graph *m, sg_kernel_call *call, const char *name, sg_temp out,
                            sg_temp in, sg_node *node) {
  call->desc.name = name;
  sg_status st = sg_graph_add_kernel(m->graph, &call->desc, NULL, 0, node);
  if (!st) st = sg_graph_bind_temp(m->graph, *node, 0, out, 0);
  if (!st) st = sg_graph_bind_temp(m->graph, *node, 1, in, 0);
  sg_access acc[2] = {sg_access_temp(out, SG_ACCESS_WRITE), sg_access_temp(in, SG_ACCESS_READ)};
  size_t count = 2;
  if (out.opaque == in.opaque) {
    acc[0].mode = SG_ACCESS_READ_WRITE;
    count = 1;
  }
  if (!st) st = sg_graph_declare_access(m->graph, *node, acc, count);
  return st;
}

static const char *const gemm_names[MLP_MAX_LAYERS] = {"gemm_0", "gemm_1", "gemm_2", "gemm_3",
                                                       "gemm_4", "gemm_5", "gemm_6", "gemm_7"};
static const char *const bias_names[MLP_MAX_LAYERS] = {"bias_act_0", "bias_act_1", "bias_act_2",
                                                       "bias_act_3", "bias_act_4", "bias_act_5",
                                                       "bias_act_6", "bias_act_7"};

sg_status mlp_graph_build(mlp_graph *m, sg_backend backend, const mlp_shape *s,
                          const mlp_device_weights *weights, const float *requests,
                          float *results) {
  memset(m, 0, sizeof *m);
  m->backend = backend;
  m->shape = *s;
  m->weights = weights;
  m->workspace_bytes = WORKSPACE_BYTES;
  if (s->layers == 0 || s->layers > MLP_MAX_LAYERS || !s->batch || !s->in || !s->out ||
      (s->layers > 1 && !s->hidden)) {
    note(m, "bad shape: layers must be 1..%d and every size > 0", MLP_MAX_LAYERS);
    return SG_ERR_INVALID_ARGUMENT;
  }
  sg_status st = sg_graph_create(&m->graph);
  if (st) {
    note(m, "%s", sg_last_error());
    return st;
  }
  for (unsigned l = 0; l <= s->layers && !st; l++) {
    size_t bytes = mul3(s->batch, mlp_dim(s, l), sizeof(float));
    sg_temp_desc d = {bytes, 0, NULL};
    if (!bytes) {
      note(m, "batch x width overflows");
      st = SG_ERR_INVALID_ARGUMENT;
    } else if (!(st = sg_graph_add_temp(m->graph, &d, &m->act[l])) && l == 0) {
      st = sg_graph_add_temp(m->graph, &d, &m->x); /* layer 0's input is the requests' width */
    }
  }
  sg_kernel_call call;
  if (!st) {
    sg_copy_desc up = {NULL, requests, mul3(s->batch, s->in, sizeof(float)), SG_COPY_AUTO,
                       "upload"};
    st = sg_graph_add_copy_temp(m->graph, &up, m->x, 0, (sg_temp){0}, 0, NULL, 0, &m->upload);
    sg_access w = sg_access_temp(m->x, SG_ACCESS_WRITE);
    if (!st) st = sg_graph_declare_access(m->graph, m->upload, &w, 1);
  }
  if (!st) {
    /* Pointers to temporaries are placeholders here: the bound ones replace them. */
    sg_kernels_layer_norm_f32(&call, NULL, NULL, weights->gamma, weights->beta, s->batch, s->in,
                              MLP_LN_EPS);
    st = add_kernel(m, &call, "layer_norm", m->act[0], m->x, &m->norm);
  }
  for (unsigned l = 0; l < s->layers && !st; l++) {
    mlp_gemm *g = calloc(1, sizeof *g);
    if (!g) {
      note(m, "out of memory");
      st = SG_ERR_OUT_OF_MEMORY;
      break;
    }
    /* A placeholder (no buffers: it does nothing); each instance sets its own. */
    *g = (mlp_gemm){NULL, weights->w[l], NULL, NULL, s->batch, mlp_dim(s, l + 1), mlp_dim(s, l)};
    sg_stream_fn_desc d = gemm_desc(m, g, gemm_names[l]);
    if ((st = sg_graph_add_stream_fn(m->graph, &d, NULL, 0, &m->gemm[l]))) {
      mlp_gemm_release(g); /* the graph did not take it */
      break;
    }
    sg_access acc[2] = {sg_access_temp(m->act[l], SG_ACCESS_READ), sg_access_temp(m->act[l + 1], SG_ACCESS_WRITE)};
    st = sg_graph_declare_access(m->graph, m->gemm[l], acc, 2);
    int last = l + 1 == s->layers;
    if (!st) {
      sg_kernels_bias_act_f32(&call, NULL, NULL, weights->b[l], s->batch, mlp_dim(s, l + 1),
                              last ? SG_ACTIVATION_NONE : SG_ACTIVATION_GELU);
      st = add_kernel(m, &call, bias_names[l], m->act[l + 1], m->act[l + 1], &m->bias[l]);
    }
  }
  sg_temp fin = m->act[s->layers];
  if (!st) {
    sg_kernels_softmax_rows_f32(&call, NULL, NULL, s->batch, s->out);
    st = add_kernel(m, &call, "softmax", fin, fin, &m->softmax);
  }
  if (!st) {
    sg_copy_desc down = {results, NULL, mul3(s->batch, s->out, sizeof(float)), SG_COPY_AUTO,
                         "download"};
    st = sg_graph_add_copy_temp(m->graph, &down, (sg_temp){0}, 0, fin, 0, NULL, 0, &m->download);
    sg_access r = sg_access_temp(fin, SG_ACCESS_READ);
    if (!st) st = sg_graph_declare_access(m->graph, m->download, &r, 1);
  }
  if (st) {
    if (!m->message[0]) note(m, "%s", sg_last_error());
    mlp_graph_free(m); /* releases the GEMMs the graph owns */
  }
  return st;
}

void mlp_graph_free(mlp_graph *m) {
  if (m->graph) sg_graph_destroy(m->graph);
  m->graph = NULL;
}

int mlp_pipeline_setup(sg_pipeline_instance *inst, void *user_data) {
  mlp_graph *m = user_data;
  const mlp_shape *s = &m->shape;
  void *act[MLP_MAX_LAYERS + 1];
  sg_status st = SG_OK;
  for (unsigned l = 0; l <= s->layers && !st; l++) st = sg_exec_get_temp(inst->exec, m->act[l], &act[l]);
  if (st) {
    note(m, "instance %u: %s", inst->index, sg_last_error());
    return 1;
  }
  mlp_gemm *g[MLP_MAX_LAYERS] = {NULL};
  int rc = 0;
  for (unsigned l = 0; l < s->layers && !rc; l++) {
    if (!(g[l] = calloc(1, sizeof *g[l]))) {
      note(m, "instance %u: out of memory", inst->index);
      rc = 2;
      break;
    }
    *g[l] = (mlp_gemm){NULL, m->weights->w[l], act[l], act[l + 1], s->batch, mlp_dim(s, l + 1),
                       mlp_dim(s, l)};
  }
  if (!rc && m->backend == SG_BACKEND_CUDA) {
    /* One reference per GEMM node of the instance; the warm-up writes only
     * the instance's temporaries, and nothing has run on them yet. */
    mlp_blas *blas = NULL;
    int bad = mlp_blas_create(m->workspace_bytes, s->layers, &blas);
    if (bad) {
      note(m, "instance %u: cuBLAS handle and workspace: status %d", inst->index, bad);
      rc = 3;
    }
    for (unsigned l = 0; l < s->layers && blas; l++) g[l]->blas = blas;
    for (unsigned l = 0; l < s->layers && !rc; l++)
      if ((bad = mlp_gemm_warm_up(g[l]))) {
        note(m, "instance %u: warming up cuBLAS for layer %u: status %d", inst->index, l, bad);
        rc = 4;
      }
  }
  for (unsigned l = 0; l < s->layers && !rc; l++) {
    /* The instance's own GEMM; in graph mode its work is captured anew. */
    sg_stream_fn_desc d = gemm_desc(m, g[l], gemm_names[l]);
    if ((st = sg_exec_set_stream_fn(inst->exec, m->gemm[l], &d))) {
      note(m, "instance %u: %s", inst->index, sg_last_error());
      rc = 5;
    } else {
      g[l] = NULL; /* the node owns it now */
    }
  }
  /* What no node took (each drops its reference to the handle). */
  for (unsigned l = 0; l < s->layers; l++)
    if (g[l]) mlp_gemm_release(g[l]);
  return rc;
}

void mlp_pipeline_teardown(sg_pipeline_instance *inst, void *user_data) {
  (void)inst;
  (void)user_data; /* the instance's GEMMs belong to its nodes */
}

void mlp_batch_binds(const mlp_graph *m, const float *requests, float *results,
                     sg_pipeline_bind binds[2]) {
  binds[0] = sg_bind_copy_src(m->upload, requests);
  binds[1] = sg_bind_copy_dst(m->download, results);
}
