/* multi_gpu_pipeline: a two-stage model split over two GPUs (pipeline
 * parallel), against the same stages on one GPU.
 *
 * Each frame is uploaded to GPU 0, goes through stage 1 there, its
 * activation moves to GPU 1 (a peer copy node, or an NCCL send/recv node),
 * goes through stage 2 there and comes back to the host. One graph holds
 * both stages; a pipeline runs it over the frames with several instances in
 * flight, so frame i's stage 2 on GPU 1 overlaps frame i+1's stage 1 on GPU 0.
 * The single-GPU run is the same graph with every node on GPU 0 (the move is
 * then a copy within the GPU), at its best depth.
 *
 * Each stage is the ready-made work kernel, sized at start so that one stage
 * takes about --stage-ms on GPU 0 (compute-bound: the case where two GPUs
 * can double the rate). Every frame's output is checked against a CPU
 * computation (a sample of elements).
 *
 *   multi_gpu_pipeline [--frames F] [--elements N] [--stage-ms T] [--json PATH]
 *
 * Prints frames per second per configuration and mode, and the ratio of the
 * best two-GPU run to the best single-GPU run; --json writes them. Exit
 * status 0, 1 if an output was wrong or a call failed, 77 with fewer than
 * two GPUs. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

#ifdef SG_EXAMPLE_NCCL
#include <nccl.h>
#endif

#define CHECK(call)                                                                       \
  do {                                                                                    \
    sg_status st_ = (call);                                                               \
    if (st_ != SG_OK) {                                                                   \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,            \
              sg_status_name(st_), sg_last_error());                                      \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

enum move_kind { MOVE_PEER, MOVE_NCCL };

typedef struct app {
  size_t n;                 /* elements per frame */
  uint32_t rounds;          /* per stage */
  unsigned frames;
  uint32_t **in, **out;     /* per frame, pinned */
  /* the configuration being run */
  int dev1, dev2;           /* the stages' devices */
  enum move_kind move;
  void *comms[2];           /* ncclComm_t of devices 0 and 1 (MOVE_NCCL) */
  sg_node up, stage1, move_node, stage2, down;
  unsigned wrong;
} app;

/* One instance's buffers: the activation on each stage's device. */
typedef struct buffers {
  void *a, *b;
} buffers;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint32_t work_ref(uint32_t v, size_t i, uint32_t rounds) {
  for (uint32_t r = 0; r < rounds; r++) v = sg_kernels_mix(v, (uint32_t)i, r);
  return v;
}

static sg_nccl_call nccl_call(sg_nccl_op op, void *comm, const void *send, void *recv, size_t n,
                              int peer) {
  sg_nccl_call c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.comm = comm;
  c.send = send;
  c.recv = recv;
  c.count = n;
  c.type = SG_NCCL_UINT32;
  c.peer = peer;
  return c;
}

/* Points the move node at this instance's buffers. */
static sg_status bind_move(app *p, sg_exec *exec, void *a, void *b) {
  if (p->move == MOVE_PEER) {
    sg_copy_desc c = {b, a, p->n * sizeof(uint32_t), SG_COPY_DEVICE_TO_DEVICE, "move"};
    return sg_exec_set_copy(exec, p->move_node, &c);
  }
  sg_nccl_call calls[2] = {nccl_call(SG_NCCL_SEND, p->comms[p->dev1], a, NULL, p->n, p->dev2),
                           nccl_call(SG_NCCL_RECV, p->comms[p->dev2], NULL, b, p->n, p->dev1)};
  sg_nccl_desc d = {calls, 2, "move"};
  return sg_exec_set_nccl(exec, p->move_node, &d);
}

static int setup(sg_pipeline_instance *inst, void *user) {
  app *p = user;
  buffers *buf = calloc(1, sizeof *buf);
  size_t bytes = p->n * sizeof(uint32_t);
  if (!buf || sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, p->dev1, bytes, &buf->a) ||
      sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, p->dev2, bytes, &buf->b)) {
    fprintf(stderr, "setup: %s\n", sg_last_error());
    return 1;
  }
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(p->up, buf->a),
      sg_bind_kernel_arg(p->stage1, 0, &buf->a, sizeof buf->a),
      sg_bind_kernel_arg(p->stage2, 0, &buf->b, sizeof buf->b),
      sg_bind_copy_src(p->down, buf->b),
  };
  if (sg_pipeline_instance_bind(inst, binds, 4) || bind_move(p, inst->exec, buf->a, buf->b)) {
    fprintf(stderr, "setup: %s\n", sg_last_error());
    return 2;
  }
  inst->data = buf;
  return 0;
}

static void teardown(sg_pipeline_instance *inst, void *user) {
  (void)user;
  buffers *buf = inst->data;
  sg_mem_free(buf->a);
  sg_mem_free(buf->b);
  free(buf);
}

/* The graph of one frame, with placeholder buffers that setup replaces. */
static sg_graph *build(app *p, void *tmpl_a, void *tmpl_b) {
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  size_t bytes = p->n * sizeof(uint32_t);
  sg_copy_desc up = {tmpl_a, p->in[0], bytes, SG_COPY_HOST_TO_DEVICE, "upload"};
  CHECK(sg_graph_add_copy(g, &up, NULL, 0, &p->up));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, tmpl_a, p->n, p->rounds);
  k.desc.name = "stage 1";
  CHECK(sg_graph_add_kernel(g, &k.desc, &p->up, 1, &p->stage1));
  if (p->move == MOVE_PEER) {
    sg_copy_desc c = {tmpl_b, tmpl_a, bytes, SG_COPY_DEVICE_TO_DEVICE, "move"};
    CHECK(sg_graph_add_copy(g, &c, &p->stage1, 1, &p->move_node));
  } else {
    sg_nccl_call calls[2] = {
        nccl_call(SG_NCCL_SEND, p->comms[p->dev1], tmpl_a, NULL, p->n, p->dev2),
        nccl_call(SG_NCCL_RECV, p->comms[p->dev2], NULL, tmpl_b, p->n, p->dev1)};
    sg_nccl_desc d = {calls, 2, "move"};
    CHECK(sg_graph_add_nccl(g, &d, &p->stage1, 1, &p->move_node));
  }
  sg_kernels_work_u32(&k, tmpl_b, p->n, p->rounds);
  k.desc.name = "stage 2";
  CHECK(sg_graph_add_kernel(g, &k.desc, &p->move_node, 1, &p->stage2));
  sg_copy_desc down = {p->out[0], tmpl_b, bytes, SG_COPY_DEVICE_TO_HOST, "download"};
  CHECK(sg_graph_add_copy(g, &down, &p->stage2, 1, &p->down));
  CHECK(sg_graph_set_device(g, p->up, p->dev1));
  CHECK(sg_graph_set_device(g, p->stage1, p->dev1));
  /* The peer copy runs on the receiving GPU (it pulls the activation), the
   * send/recv pair on the sender's stream with the receive hopping over. */
  CHECK(sg_graph_set_device(g, p->move_node, p->move == MOVE_PEER ? p->dev2 : p->dev1));
  CHECK(sg_graph_set_device(g, p->stage2, p->dev2));
  CHECK(sg_graph_set_device(g, p->down, p->dev2));
  return g;
}

/* Frames per second of one configuration; checks every frame's output. */
static double run(app *p, sg_exec_mode mode, unsigned depth) {
  size_t bytes = p->n * sizeof(uint32_t);
  void *tmpl_a, *tmpl_b;
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, p->dev1, bytes, &tmpl_a));
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, p->dev2, bytes, &tmpl_b));
  sg_graph *g = build(p, tmpl_a, tmpl_b);
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.exec.backend = SG_BACKEND_CUDA;
  o.exec.mode = mode;
  o.exec.device = p->dev1;
  o.setup = setup;
  o.teardown = teardown;
  o.user_data = p;
  sg_pipeline *pipe;
  CHECK(sg_pipeline_create(g, &o, &pipe));
  for (unsigned f = 0; f < p->frames; f++)
    for (size_t i = 0; i < p->n; i += 4099) p->out[f][i] = 0xA5A5A5A5u;
  /* One frame untimed: first launches set up lazily (NCCL, graph upload). */
  sg_pipeline_bind warm[] = {sg_bind_copy_src(p->up, p->in[0]), sg_bind_copy_dst(p->down, p->out[0])};
  sg_pipeline_batch wb = {warm, 2, NULL};
  CHECK(sg_pipeline_submit(pipe, &wb, NULL));
  CHECK(sg_pipeline_drain(pipe));
  double t0 = now_s();
  for (unsigned f = 0; f < p->frames; f++) {
    sg_pipeline_bind binds[] = {sg_bind_copy_src(p->up, p->in[f]),
                                sg_bind_copy_dst(p->down, p->out[f])};
    sg_pipeline_batch b = {binds, 2, NULL};
    CHECK(sg_pipeline_submit(pipe, &b, NULL));
  }
  CHECK(sg_pipeline_drain(pipe));
  double elapsed = now_s() - t0;
  CHECK(sg_pipeline_destroy(pipe));
  CHECK(sg_graph_destroy(g));
  sg_mem_free(tmpl_a);
  sg_mem_free(tmpl_b);
  for (unsigned f = 0; f < p->frames; f++)
    for (size_t i = 0; i < p->n; i += 4099) {
      uint32_t want = work_ref(work_ref(p->in[f][i], i, p->rounds), i, p->rounds);
      if (p->out[f][i] != want) {
        if (p->wrong++ < 5)
          fprintf(stderr, "frame %u element %zu: got %u, want %u\n", f, i, p->out[f][i], want);
        break;
      }
    }
  return p->frames / elapsed;
}

/* Rounds of the work kernel for one stage of about `ms` on device 0. */
static uint32_t calibrate(size_t n, double ms) {
  void *buf;
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, n * sizeof(uint32_t), &buf));
  uint32_t rounds = 64;
  double took = 0;
  for (int pass = 0; pass < 3; pass++) {
    sg_graph *g;
    CHECK(sg_graph_create(&g));
    sg_kernel_call k;
    sg_kernels_work_u32(&k, buf, n, rounds);
    CHECK(sg_graph_add_kernel(g, &k.desc, NULL, 0, NULL));
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = SG_BACKEND_CUDA;
    sg_exec *x;
    CHECK(sg_exec_create(g, &o, &x));
    CHECK(sg_exec_launch(x, NULL));
    CHECK(sg_exec_wait(x));
    double t0 = now_s();
    for (int i = 0; i < 5; i++) CHECK(sg_exec_launch(x, NULL));
    CHECK(sg_exec_wait(x));
    took = (now_s() - t0) / 5 * 1e3;
    CHECK(sg_exec_destroy(x));
    CHECK(sg_graph_destroy(g));
    double scaled = rounds * ms / (took > 1e-3 ? took : 1e-3);
    rounds = scaled < 1 ? 1 : scaled > 1e6 ? 1000000u : (uint32_t)scaled;
  }
  sg_mem_free(buf);
  return rounds;
}

int main(int argc, char **argv) {
  app p;
  memset(&p, 0, sizeof p);
  p.n = (size_t)2 << 20;
  p.frames = 40;
  double stage_ms = 2.0;
  const char *json = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--frames")) p.frames = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--elements")) p.n = (size_t)atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--stage-ms")) stage_ms = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--json")) json = argv[i + 1];
  }
  if (p.frames < 2 || p.n < 1024) {
    fprintf(stderr, "usage: %s [--frames F>=2] [--elements N>=1024] [--stage-ms T] [--json PATH]\n",
            argv[0]);
    return 1;
  }
  int gpus = sg_cuda_device_count();
  if (gpus < 2) {
    printf("multi_gpu_pipeline: needs two GPUs, %d present: skipped\n", gpus);
    return 77;
  }
  int have_nccl = 0;
#ifdef SG_EXAMPLE_NCCL
  int version = 0;
  if (sg_nccl_version(&version) == SG_OK) {
    setenv("NCCL_NVLS_ENABLE", "0", 1); /* NVLink multicast stays off */
    ncclComm_t comms[2];
    int devs[2] = {0, 1};
    ncclResult_t r = ncclCommInitAll(comms, 2, devs);
    if (r != ncclSuccess) {
      fprintf(stderr, "ncclCommInitAll: %s\n", ncclGetErrorString(r));
      return 1;
    }
    p.comms[0] = comms[0];
    p.comms[1] = comms[1];
    have_nccl = 1;
  }
#endif
  p.in = calloc(p.frames, sizeof *p.in);
  p.out = calloc(p.frames, sizeof *p.out);
  for (unsigned f = 0; f < p.frames; f++) {
    CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, 0, p.n * 4, (void **)&p.in[f]));
    CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, 0, p.n * 4, (void **)&p.out[f]));
    for (size_t i = 0; i < p.n; i++) p.in[f][i] = (uint32_t)(i * 2654435761u) ^ (f * 40503u);
  }
  p.rounds = calibrate(p.n, stage_ms);
  printf("multi_gpu_pipeline: %u frames of %zu elements (%.1f MiB), %u rounds per stage "
         "(about %.1f ms each on GPU 0)\n\n",
         p.frames, p.n, p.n * 4.0 / (1 << 20), p.rounds, stage_ms);
  printf("%-28s %-8s %6s %12s\n", "configuration", "mode", "depth", "frames/s");

  struct row {
    const char *config;
    const char *mode;
    unsigned depth;
    double fps;
  } rows[64];
  int nrows = 0;
  double best1 = 0, best_peer = 0, best_nccl = 0;
  struct config {
    const char *name;
    int dev1, dev2;
    enum move_kind move;
    double *best;
  } configs[] = {
      {"one GPU (both stages)", 0, 0, MOVE_PEER, &best1},
      {"two GPUs, peer copy", 0, 1, MOVE_PEER, &best_peer},
      {"two GPUs, NCCL send/recv", 0, 1, MOVE_NCCL, &best_nccl},
  };
  sg_exec_mode modes[] = {SG_MODE_STREAMS, SG_MODE_GRAPH};
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    if (configs[c].move == MOVE_NCCL && !have_nccl) {
      printf("%-28s (skipped: the library or this example was built without NCCL)\n",
             configs[c].name);
      continue;
    }
    p.dev1 = configs[c].dev1;
    p.dev2 = configs[c].dev2;
    p.move = configs[c].move;
    for (int m = 0; m < 2; m++) {
      /* NCCL calls of several instances in flight on one communicator, each
       * instance's captured in its own graph, launched from one thread: the
       * NCCL guide warns this may deadlock with several GPUs in one process
       * (one GPU per process is its supported way: nccl_two_process). */
      if (p.move == MOVE_NCCL && modes[m] == SG_MODE_GRAPH) {
        printf("%-28s %-8s (not run: NCCL graphs of several GPUs in one process, see source)\n",
               configs[c].name, "graph");
        continue;
      }
      for (unsigned depth = 1; depth <= 4; depth++) {
        if (depth == 1 && p.dev1 != p.dev2) continue; /* one frame at a time cannot overlap */
        double fps = run(&p, modes[m], depth);
        const char *mode = m ? "graph" : "streams";
        printf("%-28s %-8s %6u %12.1f\n", configs[c].name, mode, depth, fps);
        fflush(stdout);
        rows[nrows++] = (struct row){configs[c].name, mode, depth, fps};
        if (fps > *configs[c].best) *configs[c].best = fps;
      }
    }
  }
  double best2 = best_peer > best_nccl ? best_peer : best_nccl;
  printf("\nbest two-GPU / best one-GPU: %.2fx (peer copy %.2fx", best2 / best1, best_peer / best1);
  if (have_nccl) printf(", NCCL send/recv %.2fx", best_nccl / best1);
  printf("; the bound for two equal stages is 2x)\n");
  printf("outputs: %s\n", p.wrong ? "WRONG" : "all frames right (sampled elements)");
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      fprintf(stderr, "cannot write %s\n", json);
      return 1;
    }
    fprintf(f, "{\n  \"frames\": %u, \"elements\": %zu, \"rounds\": %u, \"stage_ms\": %.3f,\n",
            p.frames, p.n, p.rounds, stage_ms);
    fprintf(f, "  \"rows\": [\n");
    for (int r = 0; r < nrows; r++)
      fprintf(f, "    {\"configuration\": \"%s\", \"mode\": \"%s\", \"depth\": %u, \"fps\": %.2f}%s\n",
              rows[r].config, rows[r].mode, rows[r].depth, rows[r].fps, r + 1 < nrows ? "," : "");
    fprintf(f, "  ],\n  \"best_one_gpu_fps\": %.2f, \"best_two_gpu_peer_fps\": %.2f,\n", best1,
            best_peer);
    fprintf(f, "  \"best_two_gpu_nccl_fps\": %.2f, \"ratio_two_over_one\": %.3f,\n", best_nccl,
            best2 / best1);
    fprintf(f, "  \"outputs_right\": %s\n}\n", p.wrong ? "false" : "true");
    fclose(f);
  }
  for (unsigned f = 0; f < p.frames; f++) {
    sg_mem_free(p.in[f]);
    sg_mem_free(p.out[f]);
  }
  free(p.in);
  free(p.out);
#ifdef SG_EXAMPLE_NCCL
  if (have_nccl) {
    ncclCommDestroy((ncclComm_t)p.comms[0]);
    ncclCommDestroy((ncclComm_t)p.comms[1]);
  }
#endif
  /* The default pinned pool lives until the process ends; giving its idle
   * slabs back leaves a leak checker (compute-sanitizer --leak-check full)
   * nothing to report. */
  sg_pinned_pool_trim(NULL);
  return p.wrong ? 1 : 0;
}
