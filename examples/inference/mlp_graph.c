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

/* Layer l reads one activation buffer and writes the other. */
static float *layer_in(const mlp_instance *in, unsigned l) { return l % 2 ? in->b : in->a; }
static float *layer_out(const mlp_instance *in, unsigned l) { return l % 2 ? in->a : in->b; }
static float *final_out(const mlp_graph *m, const mlp_instance *in) {
  return layer_out(in, m->shape.layers - 1);
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

/* Frees what instance_make made and no node owns yet: buffers always,
 * GEMMs from index `first_unowned` on. */
static void instance_free(mlp_instance *in, unsigned layers, unsigned first_unowned) {
  for (unsigned l = first_unowned; l < layers; l++)
    if (in->gemm[l]) mlp_gemm_release(in->gemm[l]);
  sg_mem_free(in->x);
  sg_mem_free(in->a);
  sg_mem_free(in->b);
  memset(in, 0, sizeof *in);
}

/* One instance's buffers, GEMMs and (CUDA) cuBLAS handle, warmed up. */
static int instance_make(mlp_graph *m, mlp_instance *in) {
  const mlp_shape *s = &m->shape;
  memset(in, 0, sizeof *in);
  size_t x_bytes = mul3(s->batch, s->in, sizeof(float));
  size_t act_bytes = mul3(s->batch, mlp_widest(s), sizeof(float));
  if (!x_bytes || !act_bytes) {
    note(m, "batch x width overflows");
    return -1;
  }
  void *x = NULL, *a = NULL, *b = NULL;
  sg_status st = sg_mem_alloc(m->backend, SG_MEMORY_DEVICE, 0, x_bytes, &x);
  if (!st) st = sg_mem_alloc(m->backend, SG_MEMORY_DEVICE, 0, act_bytes, &a);
  if (!st) st = sg_mem_alloc(m->backend, SG_MEMORY_DEVICE, 0, act_bytes, &b);
  in->x = x;
  in->a = a;
  in->b = b;
  if (st) {
    note(m, "activation buffers: %s", sg_last_error());
    instance_free(in, s->layers, 0);
    return -1;
  }
  for (unsigned l = 0; l < s->layers; l++) {
    if (!(in->gemm[l] = calloc(1, sizeof *in->gemm[l]))) {
      note(m, "out of memory");
      instance_free(in, s->layers, 0);
      return -1;
    }
    *in->gemm[l] = (mlp_gemm){NULL, m->weights->w[l], layer_in(in, l), layer_out(in, l),
                              s->batch, mlp_dim(s, l + 1), mlp_dim(s, l)};
  }
  mlp_blas *blas = NULL;
  if (m->backend == SG_BACKEND_CUDA) {
    /* One reference per GEMM node of the instance. */
    int rc = mlp_blas_create(m->workspace_bytes, s->layers, &blas);
    if (rc) {
      note(m, "cuBLAS handle and workspace: status %d", rc);
      instance_free(in, s->layers, 0);
      return -1;
    }
    for (unsigned l = 0; l < s->layers; l++) in->gemm[l]->blas = blas;
  }
  if (blas) {
    for (unsigned l = 0; l < s->layers; l++) {
      int rc = mlp_gemm_warm_up(in->gemm[l]);
      if (rc) {
        note(m, "warming up cuBLAS for layer %u: status %d", l, rc);
        instance_free(in, s->layers, 0);
        return -1;
      }
    }
  }
  return 0;
}

static sg_stream_fn_desc gemm_desc(const mlp_graph *m, mlp_gemm *g, const char *name) {
  sg_stream_fn_desc d = {m->backend == SG_BACKEND_CUDA ? mlp_gemm_cuda : NULL, g,
                         mlp_gemm_release, mlp_gemm_host, name};
  return d;
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
  mlp_instance *t = &m->template_instance;
  if (instance_make(m, t)) return SG_ERR_CALLBACK;
  sg_status st = sg_graph_create(&m->graph);
  if (st) {
    instance_free(t, s->layers, 0);
    return st;
  }
  unsigned owned = 0; /* GEMMs handed to nodes */
  sg_kernel_call call;
  sg_copy_desc up = {t->x, requests, mul3(s->batch, s->in, sizeof(float)), SG_COPY_AUTO,
                     "upload"};
  st = sg_graph_add_copy(m->graph, &up, NULL, 0, &m->upload);
  if (!st) {
    sg_kernels_layer_norm_f32(&call, t->a, t->x, weights->gamma, weights->beta, s->batch, s->in,
                              MLP_LN_EPS);
    call.desc.name = "layer_norm";
    st = sg_graph_add_kernel(m->graph, &call.desc, &m->upload, 1, &m->norm);
  }
  sg_node prev = m->norm;
  for (unsigned l = 0; l < s->layers && !st; l++) {
    sg_stream_fn_desc g = gemm_desc(m, t->gemm[l], gemm_names[l]);
    st = sg_graph_add_stream_fn(m->graph, &g, &prev, 1, &m->gemm[l]);
    if (st) break;
    owned = l + 1;
    int last = l + 1 == s->layers;
    sg_kernels_bias_act_f32(&call, layer_out(t, l), layer_out(t, l), weights->b[l], s->batch,
                            mlp_dim(s, l + 1), last ? SG_ACTIVATION_NONE : SG_ACTIVATION_GELU);
    call.desc.name = bias_names[l];
    st = sg_graph_add_kernel(m->graph, &call.desc, &m->gemm[l], 1, &m->bias[l]);
    prev = m->bias[l];
  }
  if (!st) {
    sg_kernels_softmax_rows_f32(&call, final_out(m, t), final_out(m, t), s->batch, s->out);
    call.desc.name = "softmax";
    st = sg_graph_add_kernel(m->graph, &call.desc, &prev, 1, &m->softmax);
  }
  if (!st) {
    sg_copy_desc down = {results, final_out(m, t), mul3(s->batch, s->out, sizeof(float)),
                         SG_COPY_AUTO, "download"};
    st = sg_graph_add_copy(m->graph, &down, &m->softmax, 1, &m->download);
  }
  if (st) {
    note(m, "%s", sg_last_error());
    sg_graph_destroy(m->graph); /* releases the GEMMs the graph owns */
    m->graph = NULL;
    instance_free(t, s->layers, owned);
  }
  return st;
}

void mlp_graph_free(mlp_graph *m) {
  if (m->graph) sg_graph_destroy(m->graph);
  m->graph = NULL;
  /* The GEMM data belongs to the nodes (released with the last holder). */
  instance_free(&m->template_instance, m->shape.layers, m->shape.layers);
}

int mlp_pipeline_setup(sg_pipeline_instance *inst, void *user_data) {
  mlp_graph *m = user_data;
  const mlp_shape *s = &m->shape;
  mlp_instance *in = calloc(1, sizeof *in);
  if (!in) {
    note(m, "instance %u: out of memory", inst->index);
    return 1;
  }
  if (instance_make(m, in)) {
    free(in);
    return 2;
  }
  float *fin = final_out(m, in);
  sg_pipeline_bind binds[4 + 2 * MLP_MAX_LAYERS];
  size_t n = 0;
  binds[n++] = sg_bind_copy_dst(m->upload, in->x);
  binds[n++] = sg_bind_kernel_arg(m->norm, 0, &in->a, sizeof in->a);
  binds[n++] = sg_bind_kernel_arg(m->norm, 1, &in->x, sizeof in->x);
  float *outs[MLP_MAX_LAYERS];
  for (unsigned l = 0; l < s->layers; l++) {
    outs[l] = layer_out(in, l);
    binds[n++] = sg_bind_kernel_arg(m->bias[l], 0, &outs[l], sizeof outs[l]);
    binds[n++] = sg_bind_kernel_arg(m->bias[l], 1, &outs[l], sizeof outs[l]);
  }
  binds[n++] = sg_bind_kernel_arg(m->softmax, 0, &fin, sizeof fin);
  binds[n++] = sg_bind_kernel_arg(m->softmax, 1, &fin, sizeof fin);
  sg_status st = sg_pipeline_instance_bind(inst, binds, n);
  unsigned owned = 0;
  for (unsigned l = 0; l < s->layers && !st; l++) {
    /* The instance's own GEMM data; in graph mode its work is captured anew. */
    sg_stream_fn_desc g = gemm_desc(m, in->gemm[l], gemm_names[l]);
    st = sg_exec_set_stream_fn(inst->exec, m->gemm[l], &g);
    if (!st) owned = l + 1;
  }
  if (!st) {
    sg_pipeline_bind down = sg_bind_copy_src(m->download, fin);
    st = sg_pipeline_instance_bind(inst, &down, 1);
  }
  if (st) {
    note(m, "instance %u: %s", inst->index, sg_last_error());
    instance_free(in, s->layers, owned);
    free(in);
    return 3;
  }
  inst->data = in;
  return 0;
}

void mlp_pipeline_teardown(sg_pipeline_instance *inst, void *user_data) {
  mlp_graph *m = user_data;
  mlp_instance *in = inst->data;
  if (!in) return;
  instance_free(in, m->shape.layers, m->shape.layers);
  free(in);
  inst->data = NULL;
}

void mlp_batch_binds(const mlp_graph *m, const float *requests, float *results,
                     sg_pipeline_bind binds[2]) {
  binds[0] = sg_bind_copy_src(m->upload, requests);
  binds[1] = sg_bind_copy_dst(m->download, results);
}
