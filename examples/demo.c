/*
 * The streamgraph demo: a small DAG, run once on the GPU when there is one,
 * else on the host backend, checked against a CPU reference.
 *
 *   upload a ---> work(a) --.
 *                           +--> mix(a, b) --> download
 *   upload b ---> work(b) --'
 *
 * It prints the backend and why it was chosen, which stream each node ran
 * on and when (in the second launch), which nodes overlapped, and whether
 * the result is right; it writes the launch's trace (Chrome JSON: open it in
 * Perfetto) and the plan (DOT: render it with Graphviz) and names both.
 *
 *   sg_demo [output directory]      (default: the current directory)
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

/* Why SG_BACKEND_AUTO chose the backend it did. */
static void say_backend(sg_backend backend) {
  const char *forced = getenv("SG_BACKEND");
  int devices = sg_cuda_device_count();
  if (backend == SG_BACKEND_CUDA)
    printf("backend: CUDA, device 0 of %d (SG_BACKEND=host would run this on the host backend)\n",
           devices);
  else if (forced && !strcmp(forced, "host"))
    printf("backend: host, because SG_BACKEND=host forced it (%d CUDA device(s) present); "
           "worker threads stand in for streams\n", devices);
  else
    printf("backend: host, because no CUDA device was found (or this build has no CUDA); "
           "worker threads stand in for streams\n");
}

/* Pairs of nodes whose runs overlapped in time in the traced launch. */
static void say_overlaps(const sg_trace_record *rec, size_t count, const char *const *names) {
  int any = 0;
  for (size_t i = 0; i < count; i++)
    for (size_t j = i + 1; j < count; j++) {
      uint64_t start = rec[i].start_ns > rec[j].start_ns ? rec[i].start_ns : rec[j].start_ns;
      uint64_t end = rec[i].end_ns < rec[j].end_ns ? rec[i].end_ns : rec[j].end_ns;
      if (start >= end) continue;
      printf("  %-8s (stream %u) and %-8s (stream %u) ran together for %.1f us\n",
             names[sg_node_index(rec[i].node)], rec[i].stream, names[sg_node_index(rec[j].node)],
             rec[j].stream, (end - start) / 1e3);
      any = 1;
    }
  if (!any) printf("  none (the branches ran one after the other this time)\n");
}

/* `dir`/`name`, or just `name`. */
static void output_path(char *buf, size_t cap, const char *dir, const char *name) {
  snprintf(buf, cap, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : NULL;
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  if (backend == SG_BACKEND_AUTO) { /* SG_BACKEND asks for what this machine cannot give */
    fprintf(stderr, "backend: %s\n", sg_last_error());
    return 1;
  }
  say_backend(backend);

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
  CHECK(sg_exec_get_trace(exec, rec, 6, &count));
  printf("second launch:\n  %-10s %-7s %12s %12s\n", "node", "stream", "start (us)", "end (us)");
  for (size_t i = 0; i < count && i < 6; i++)
    printf("  %-10s %-7u %12.1f %12.1f\n", names[sg_node_index(rec[i].node)], rec[i].stream,
           rec[i].start_ns / 1e3, rec[i].end_ns / 1e3);
  printf("overlapped:\n");
  say_overlaps(rec, count < 6 ? count : 6, names);

  /* The pictures: open the .svg files in a web browser (hover over a bar or
   * a box for its details). The JSON opens in Perfetto, the DOT in Graphviz. */
  char trace_path[4096], trace_svg[4096], plan_svg[4096], dot_path[4096];
  output_path(trace_path, sizeof trace_path, dir, "sg_demo_trace.json");
  output_path(trace_svg, sizeof trace_svg, dir, "sg_demo_trace.svg");
  output_path(plan_svg, sizeof plan_svg, dir, "sg_demo_plan.svg");
  output_path(dot_path, sizeof dot_path, dir, "sg_demo_plan.dot");
  CHECK(sg_exec_write_trace(exec, trace_path));
  CHECK(sg_exec_write_trace_svg(exec, trace_svg));
  const sg_plan *plan;
  char *dot = NULL;
  CHECK(sg_exec_get_plan(exec, &plan));
  CHECK(sg_plan_write_svg(plan, plan_svg));
  CHECK(sg_plan_to_dot(plan, &dot));
  FILE *f = fopen(dot_path, "w");
  int written = f && fputs(dot, f) >= 0;
  if (f && fclose(f) != 0) written = 0;
  sg_free(dot);
  printf("pictures (open in a web browser):\n  timeline: %s\n  plan:     %s\n", trace_svg,
         plan_svg);
  if (written)
    printf("trace: %s (https://ui.perfetto.dev)\nplan:  %s (Graphviz: dot -Tsvg)\n", trace_path,
           dot_path);
  else
    fprintf(stderr, "cannot write %s\n", dot_path);

  size_t wrong = 0;
  for (size_t i = 0; i < N; i++) wrong += out[i] != reference(in_a[i], in_b[i], i);
  printf("result: %s (%zu of %u elements differ from the CPU reference)\n",
         wrong ? "WRONG" : "correct", wrong, N);

  CHECK(sg_exec_destroy(exec));
  CHECK(sg_mem_free(mem));
  free(in_a);
  free(in_b);
  free(out);
  /* The default pinned pool lives until the process ends; giving its idle
   * slabs back leaves a leak checker (compute-sanitizer --leak-check full)
   * nothing to report. */
  sg_pinned_pool_trim(NULL);
  return wrong || !written ? 1 : 0;
}
