/* The MLP as a streamgraph graph run by a pipeline: one batch of requests
 * per launch, several batches in flight (see mlp.h for the model, gemm.h for
 * the GEMM nodes).
 *
 *   upload (pageable requests -> x) -> layer_norm (x -> a)
 *     -> gemm_0 (a -> b) -> bias_gelu_0 (b) -> gemm_1 (b -> a) -> ...
 *     -> gemm_L-1 -> bias_L-1 -> softmax -> download (-> pageable results)
 *
 * Each node declares what it reads and writes; the order above follows
 * from those declarations (no edge is wired by hand). The input on the
 * device and every layer's activations are the graph's planned
 * temporaries: each pipeline instance gets its own, in one arena where
 * activations never live together share bytes (the two buffers a
 * hand-written version alternates between). Each instance owns its cuBLAS
 * handle and workspace (made in setup, its GEMMs on its temporaries); the
 * weights are uploaded once and shared. Every batch binds its request and
 * result pointers (mlp_batch_binds). */
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

/* What the graph, its pipeline's setup and every batch need. */
typedef struct mlp_graph {
  sg_backend backend;
  mlp_shape shape;
  const mlp_device_weights *weights;
  size_t workspace_bytes;            /* each instance's cuBLAS workspace */
  sg_graph *graph;
  sg_node upload, norm, gemm[MLP_MAX_LAYERS], bias[MLP_MAX_LAYERS], softmax, download;
  /* The temporaries: the requests on the device [batch x in], and act[l]
   * the input of layer l [batch x dim(l)] (act[layers]: the output). */
  sg_temp x, act[MLP_MAX_LAYERS + 1];
  char message[256];                 /* why setup failed (setup's status is only non-zero) */
} mlp_graph;

/* Builds the graph for `backend` (SG_BACKEND_CUDA: cuBLAS; SG_BACKEND_HOST:
 * the host twin). `requests` and `results` are any host buffers of one batch
 * (batches rebind them). Returns SG_OK or the failing call's status. */
sg_status mlp_graph_build(mlp_graph *m, sg_backend backend, const mlp_shape *s,
                          const mlp_device_weights *weights, const float *requests,
                          float *results);

/* Frees the graph. Call once the pipeline exists (it keeps what it needs)
 * or when building failed. */
void mlp_graph_free(mlp_graph *m);

/* Pipeline callbacks; user_data is the mlp_graph. Setup makes the
 * instance's cuBLAS handle and its GEMMs on its temporaries
 * (sg_exec_get_temp), warms cuBLAS up outside any capture and gives the
 * GEMMs to the instance's nodes (sg_exec_set_stream_fn), which own them. */
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
