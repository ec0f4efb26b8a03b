/*
 * The streamgraph demo: a small DAG, run once on the GPU when there is one,
 * else on the host backend, checked against a CPU reference.
 *
 *   upload a ---> work(a) --.
 *                           +--> mix(a, b) --> download
 *   upload b ---> work(b) --'
 *
 * It prints the backend, which stream each node ran on, when it ran (in the
 * second launch), and whether the result is right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

#define N (1u << 20)
#define ROUNDS 16u

#define CHECK(call)                                                                  \
  do {                                                                               \
    sg_status st_ = (call);                                                          \
    if (st_ != SG_OK) {                                                              \
      fprintf(stderr, "%s failed: %s: %s\n", #call, sg_status_name(st_), sg_last_error()); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static uint32_t reference(uint32_t a, uint32_t b, size_t i) {
  for (uint32_t r = 0; r < ROUNDS; r++) {
    a = sg_kernels_mix(a, (uint32_t)i, r);
    b = sg_kernels_mix(b, (uint32_t)i, r);
  }
  return sg_kernels_mix(a, b, 7);
}

int main(void) {
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  if (backend == SG_BACKEND_CUDA)
    printf("backend: CUDA (%d device(s); running on device 0)\n", sg_cuda_device_count());
  else
    printf("backend: host (no CUDA device found; worker threads stand in for streams)\n");

  uint32_t *in_a = malloc(N * 4), *in_b = malloc(N * 4), *out = malloc(N * 4);
  if (!in_a || !in_b || !out) return 1;
  srand(2026);
  for (size_t i = 0; i < N; i++) in_a[i] = (uint32_t)rand(), in_b[i] = (uint32_t)rand();
  memset(out, 0xff, N * 4); /* poison: every element must be written */

  void *mem = NULL;
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, 2 * N * 4, &mem));
  uint32_t *a = mem, *b = a + N;

  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node up_a, up_b, work_a, work_b, mix, down;
  sg_copy_desc c = {a, in_a, N * 4, SG_COPY_AUTO, "upload a"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up_a));
  c = (sg_copy_desc){b, in_b, N * 4, SG_COPY_AUTO, "upload b"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up_b));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, a, N, ROUNDS);
  k.desc.name = "work a";
  CHECK(sg_graph_add_kernel(g, &k.desc, &up_a, 1, &work_a));
  sg_kernels_work_u32(&k, b, N, ROUNDS);
  k.desc.name = "work b";
  CHECK(sg_graph_add_kernel(g, &k.desc, &up_b, 1, &work_b));
  sg_node both[] = {work_a, work_b};
  sg_kernels_mix_u32(&k, a, a, b, 7, N);
  k.desc.name = "mix";
  CHECK(sg_graph_add_kernel(g, &k.desc, both, 2, &mix));
  c = (sg_copy_desc){out, a, N * 4, SG_COPY_AUTO, "download"};
  CHECK(sg_graph_add_copy(g, &c, &mix, 1, &down));

  sg_exec_options opts;
  sg_exec_options_init(&opts);
  opts.backend = backend;
  opts.trace = 1;
  sg_exec *exec;
  CHECK(sg_exec_create(g, &opts, &exec));
  CHECK(sg_graph_destroy(g)); /* the executable keeps its own snapshot */

  sg_exec_info info;
  CHECK(sg_exec_get_info(exec, &info));
  printf("plan: %zu nodes on %u stream(s), %u cross-stream event(s)\n", info.node_count,
         info.stream_count, info.event_count);

  /* The first launch also pays one-off costs (the pinned staging pool is
   * made on first use, kernels are loaded); the trace shows the second. */
  for (int launch = 0; launch < 2; launch++) {
    CHECK(sg_exec_launch(exec, NULL));
    CHECK(sg_exec_wait(exec));
  }

  sg_trace_record rec[6];
  size_t count = 0;
  const char *names[] = {"upload a", "upload b", "work a", "work b", "mix", "download"};
  if (sg_exec_get_trace(exec, rec, 6, &count) == SG_OK) {
    printf("second launch:\n%-10s %-7s %12s %12s\n", "node", "stream", "start (us)", "end (us)");
    for (size_t i = 0; i < count && i < 6; i++)
      printf("%-10s %-7u %12.1f %12.1f\n", names[sg_node_index(rec[i].node)], rec[i].stream,
             rec[i].start_ns / 1e3, rec[i].end_ns / 1e3);
  } else {
    printf("(no trace in this mode: %s)\n", sg_last_error());
  }

  size_t wrong = 0;
  for (size_t i = 0; i < N; i++) wrong += out[i] != reference(in_a[i], in_b[i], i);
  printf("result: %s (%zu of %u elements differ from the CPU reference)\n",
         wrong ? "WRONG" : "correct", wrong, N);

  CHECK(sg_exec_destroy(exec));
  CHECK(sg_mem_free(mem));
  free(in_a);
  free(in_b);
  free(out);
  return wrong ? 1 : 0;
}
