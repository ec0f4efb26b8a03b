/* The MLP as a streamgraph graph run by a pipeline: one batch of requests
 * per launch, several batches in flight (see mlp.h for the model, gemm.h for
 * the GEMM nodes).
 *
 *   upload (pageable requests -> x) -> layer_norm (x -> a)
 *     -> gemm_0 (a -> b) -> bias_gelu_0 (b) -> gemm_1 (b -> a) -> ...
 *     -> gemm_L-1 -> bias_L-1 -> softmax -> download (-> pageable results)
 *
 * Each pipeline instance owns its activation buffers and its cuBLAS handle
 * and workspace; the weights are uploaded once and shared. The graph is
 * built against a template instance; the pipeline's setup gives each
 * instance its own (mlp_pipeline_setup), and every batch binds its request
 * and result pointers (mlp_batch_binds). */
#ifndef SG_EXAMPLE_MLP_GRAPH_H
#define SG_EXAMPLE_MLP_GRAPH_H

#include "gemm.h"
#include "mlp.h"
#include "streamgraph/streamgraph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The weights on the device (or in host-backend memory), shared. */
typedef struct mlp_device_weights {
  float *w[MLP_MAX_LAYERS], *b[MLP_MAX_LAYERS], *gamma, *beta;
} mlp_device_weights;

/* Uploads the weights once. Returns SG_OK or the failing call's status. */
sg_status mlp_device_weights_upload(sg_backend backend, const mlp_shape *s,
                                    const mlp_weights *host, mlp_device_weights *out);
void mlp_device_weights_free(const mlp_shape *s, mlp_device_weights *w);

/* One instance's buffers and GEMMs. */
typedef struct mlp_instance {
  float *x, *a, *b;                  /* [batch x in], [batch x widest] twice */
  mlp_gemm *gemm[MLP_MAX_LAYERS];    /* owned by the GEMM nodes (released by them) */
} mlp_instance;

/* What the graph, its pipeline's setup and every batch need. */
typedef struct mlp_graph {
  sg_backend backend;
  mlp_shape shape;
  const mlp_device_weights *weights;
  size_t workspace_bytes;            /* each instance's cuBLAS workspace */
  sg_graph *graph;
  sg_node upload, norm, gemm[MLP_MAX_LAYERS], bias[MLP_MAX_LAYERS], softmax, download;
  mlp_instance template_instance;    /* what the graph was built against */
  char message[256];                 /* why setup failed (setup's status is only non-zero) */
} mlp_graph;

/* Builds the graph for `backend` (SG_BACKEND_CUDA: cuBLAS; SG_BACKEND_HOST:
 * the host twin). `requests` and `results` are any host buffers of one batch
 * (batches rebind them). Returns SG_OK or the failing call's status. */
sg_status mlp_graph_build(mlp_graph *m, sg_backend backend, const mlp_shape *s,
                          const mlp_device_weights *weights, const float *requests,
                          float *results);

/* Frees the graph and the template instance's buffers. Call once the
 * pipeline exists (it keeps what it needs) or when building failed. */
void mlp_graph_free(mlp_graph *m);

/* Pipeline callbacks; user_data is the mlp_graph. Setup allocates the
 * instance's buffers and cuBLAS handle, points the instance's nodes at them
 * (binds, and sg_exec_set_stream_fn for the GEMMs) and warms cuBLAS up
 * outside any capture. */
int mlp_pipeline_setup(sg_pipeline_instance *inst, void *user_data);
void mlp_pipeline_teardown(sg_pipeline_instance *inst, void *user_data);

/* The two binds of one batch: its requests (batch x in floats) and where
 * its results go (batch x out floats). */
void mlp_batch_binds(const mlp_graph *m, const float *requests, float *results,
                     sg_pipeline_bind binds[2]);

#ifdef __cplusplus
}
#endif
#endif
