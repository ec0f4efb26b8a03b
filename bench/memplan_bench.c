/* memplan_bench: planned temporaries. No GPU needed (host backend).
 *
 *   memplan_bench [out.json] [--quick] [--export-mlp DIR]
 *
 * 1. Peak temporary memory of an MLP inference DAG (micro-batches in
 *    parallel, GEMM + workspace + activation per layer) and of random
 *    activation-like DAGs with 10, 100 and 1000 temporaries, each against
 *    - the lower bound: the largest total size of temporaries the plan
 *      lets be live at once (exact: a maximum weight antichain, see
 *      src/plan/memplan_bound.c);
 *    - no reuse: every temporary in its own bytes;
 *    - the serial live peak: the most bytes live at once when the nodes
 *      run one at a time in the plan's issue order, which any allocator
 *      that frees at last use in program order on one stream (PyTorch's
 *      caching allocator in eager mode, at best, with no fragmentation or
 *      rounding) must hold;
 *    - the packing the same graph gets as a CUDA graph built from its
 *      edges alone (happens-before = reachability: less reuse).
 *    With CUDA (a GPU at run time): the same graphs' temporaries as CUDA
 *    graph memory nodes, and the driver's pool's high-water marks after
 *    one launch (memplan_graphmem.c), beside the arenas.
 * 2. sg_exec_create of 10,000 nodes with 30,000 declared accesses, with
 *    the written buffers the caller's (no memory planning) and with them
 *    planned temporaries: the time with planning over the time without,
 *    on the calling thread's CPU time (the wall clock is shown too).
 *    Median of 7 alternating runs.
 * Targets: peak <= 1.05 x bound (every graph); creation <= 1.2 x.
 *
 * --export-mlp DIR writes, per MLP row, DIR/mlp-MxL-sS.json: the
 * temporaries' sizes, the temporaries each node touches, and two serial
 * orders (issue order; creation order, the order a program running the
 * layers one after the other writes) with the live peak of each, for
 * bench/memplan_torch.py to replay through PyTorch's caching allocator. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/snapshot.h"
#include "plan/memplan.h"
#include "plan/plan.h"
#include "streamgraph/streamgraph.h"
#ifdef SG_MEMPLAN_GRAPHMEM
#include "memplan_graphmem.h"
#endif

#define CHECK(x)                                                                        \
  do {                                                                                  \
    sg_status st_ = (x);                                                                \
    if (st_) {                                                                          \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #x,                  \
              sg_status_name(st_), sg_last_error());                                    \
      exit(2);                                                                          \
    }                                                                                   \
  } while (0)

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The calling thread's CPU time: on a loaded machine the wall clock also
 * counts waiting for a core. (Creation runs on the calling thread; the
 * host backend's workers only start.) */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Addresses for the caller's buffers: accesses only compare them, the
 * empty nodes of this bench never touch them. */
static char *external;
static size_t external_bytes = (size_t)64 << 20;

static sg_node node(sg_graph *g) {
  sg_node n;
  CHECK(sg_graph_add_empty(g, NULL, NULL, 0, &n));
  return n;
}

static sg_temp temp(sg_graph *g, size_t bytes) {
  sg_temp_desc d = {bytes, 0, NULL};
  sg_temp t;
  CHECK(sg_graph_add_temp(g, &d, &t));
  return t;
}

static sg_access on_ext(size_t at, size_t bytes, sg_access_mode mode) {
  sg_access a;
  memset(&a, 0, sizeof a);
  a.ptr = external + at % (external_bytes - bytes);
  a.bytes = bytes;
  a.mode = mode;
  return a;
}

static void declare(sg_graph *g, sg_node n, const sg_access *a, size_t count) {
  CHECK(sg_graph_declare_access(g, n, a, count));
}

/* ---- graphs ------------------------------------------------------------------ */

/* An MLP served in `micro` micro-batches that run side by side: per layer a
 * GEMM (activation in, weights, pre-activation out, a workspace) and an
 * activation; the input is copied in and the output out. */
static void build_mlp(sg_graph *g, unsigned micro, unsigned layers, size_t batch) {
  static const size_t width[] = {1024, 4096, 4096, 1024};
  size_t weights_at = 0;
  for (unsigned m = 0; m < micro; m++) {
    size_t d = width[0];
    sg_temp act = temp(g, batch * d * 4);
    sg_node in = node(g);
    sg_access a[4] = {on_ext(m * 1048576, batch * d * 4, SG_ACCESS_READ),
                      sg_access_temp(act, SG_ACCESS_WRITE)};
    declare(g, in, a, 2);
    weights_at = 16u << 20;
    for (unsigned l = 0; l < layers; l++) {
      size_t out = width[(l + 1) % 4];
      sg_temp pre = temp(g, batch * out * 4), ws = temp(g, (size_t)4 << 20);
      sg_node gemm = node(g);
      a[0] = sg_access_temp(act, SG_ACCESS_READ);
      a[1] = on_ext(weights_at, d * out * 4 > 4096 ? 4096 : d * out * 4, SG_ACCESS_READ);
      a[2] = sg_access_temp(pre, SG_ACCESS_WRITE);
      a[3] = sg_access_temp(ws, SG_ACCESS_READ_WRITE);
      declare(g, gemm, a, 4);
      weights_at += 4096;
      sg_temp next = temp(g, batch * out * 4);
      sg_node relu = node(g);
      a[0] = sg_access_temp(pre, SG_ACCESS_READ);
      a[1] = sg_access_temp(next, SG_ACCESS_WRITE);
      declare(g, relu, a, 2);
      act = next;
      d = out;
    }
    sg_node out = node(g);
    a[0] = sg_access_temp(act, SG_ACCESS_READ);
    a[1] = on_ext((size_t)(40 + m) << 20, batch * d * 4, SG_ACCESS_WRITE);
    declare(g, out, a, 2);
  }
}

/* Random activation-like DAG: node i writes temporary i (4 KiB to 4 MiB,
 * log-uniform) and reads one to three outputs of the 32 nodes before it,
 * now and then one from much earlier (a skip connection), so that the
 * edges come from the data. */
static void build_random(sg_graph *g, unsigned temps) {
  sg_temp *t = malloc(temps * sizeof *t);
  for (unsigned i = 0; i < temps; i++) {
    double e = 12 + (rnd() % 1000) / 1000.0 * 10;
    t[i] = temp(g, (size_t)pow(2, e));
    sg_node n = node(g);
    sg_access a[4];
    unsigned k = 0;
    a[k++] = sg_access_temp(t[i], SG_ACCESS_WRITE);
    unsigned reads = i ? 1 + rnd() % 3 : 0;
    for (unsigned r = 0; r < reads; r++) {
      unsigned back = rnd() % 8 == 0 ? 1 + rnd() % i : 1 + rnd() % (i < 32 ? i : 32);
      a[k++] = sg_access_temp(t[i - back], SG_ACCESS_READ);
    }
    declare(g, n, a, k);
  }
  free(t);
}

/* ---- figures --------------------------------------------------------------------- */

typedef struct row {
  char family[32];
  unsigned temps, nodes, streams;
  size_t peak, bound, no_reuse, serial, graph_mode, graph_mode_bound;
  double plan_ms;
  int graphmem;              /* 1: measured on a GPU (memory nodes), 0: not */
  size_t gm_used, gm_reserved;
  double gm_instantiate_ms;
} row;

/* --export-mlp: the folder for the MLP rows' replay files, or NULL. */
static const char *export_dir;

static sg_exec_options host(unsigned streams) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.max_streams = streams;
  return o;
}

/* The most bytes live at once running the nodes one by one in `order`
 * (every node once): each temporary from its first use to its last. */
static size_t serial_peak(const uint32_t *order, uint32_t n, const sg__access_table *t) {
  uint32_t *rank = malloc((n + 1) * sizeof *rank);
  uint32_t *first = malloc((t->temp_count + 1) * sizeof *first);
  uint32_t *last = malloc((t->temp_count + 1) * sizeof *last);
  long long *delta = calloc(n + 2, sizeof *delta);
  if (!rank || !first || !last || !delta) exit(3);
  for (uint32_t k = 0; k < n; k++) rank[order[k]] = k;
  for (uint32_t k = 0; k < t->temp_count; k++) first[k] = UINT32_MAX, last[k] = 0;
  for (uint32_t i = 0; i < t->count; i++) {
    const sg__access *a = &t->acc[i];
    if (a->temp == SG__NO_TEMP) continue;
    uint32_t r = rank[a->node];
    if (r < first[a->temp]) first[a->temp] = r;
    if (r > last[a->temp]) last[a->temp] = r;
  }
  for (uint32_t k = 0; k < t->temp_count; k++)
    if (first[k] != UINT32_MAX) {
      delta[first[k]] += (long long)t->temps[k].bytes;
      delta[last[k] + 1] -= (long long)t->temps[k].bytes;
    }
  long long live = 0, peak = 0;
  for (uint32_t k = 0; k <= n; k++) {
    live += delta[k];
    if (live > peak) peak = live;
  }
  free(rank);
  free(first);
  free(last);
  free(delta);
  return (size_t)peak;
}

static void write_order(FILE *f, const char *name, const uint32_t *order, uint32_t n,
                        const sg__access_table *t, int last) {
  fprintf(f, "    {\"name\": \"%s\", \"serial_live_bytes\": %zu, \"nodes\": [", name,
          serial_peak(order, n, t));
  for (uint32_t k = 0; k < n; k++) fprintf(f, "%s%u", k ? ", " : "", order[k]);
  fprintf(f, "]}%s\n", last ? "" : ",");
}

/* DIR/mlp-MxL-sS.json for bench/memplan_torch.py: the temporaries, the ones
 * each node touches (each once, in declaration order), and the serial
 * orders to replay. Creation order is written only where it is a
 * topological order (an explicit edge may point backwards). */
static void export_replay(const row *r, const sg__schedule *s, const sg__snapshot *snap) {
  const sg__access_table *t = &snap->access;
  uint32_t n = s->node_count;
  char path[4096], name[64];
  unsigned m, l;
  if (sscanf(r->family, "mlp %ux%u", &m, &l) != 2) exit(3);
  snprintf(name, sizeof name, "mlp-%ux%u-s%u.json", m, l, r->streams);
  snprintf(path, sizeof path, "%s/%s", export_dir, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  /* The accesses by node (a counting sort), then each node's temporaries. */
  uint32_t *start = calloc(n + 1, sizeof *start);
  uint32_t *by_node = malloc((t->count + 1) * sizeof *by_node);
  uint32_t *seen = calloc(t->temp_count + 1, sizeof *seen);
  uint32_t *order = calloc(n + 1, sizeof *order);
  if (!start || !by_node || !seen || !order) exit(3);
  for (uint32_t i = 0; i < t->count; i++) start[t->acc[i].node + 1]++;
  for (uint32_t v = 0; v < n; v++) start[v + 1] += start[v];
  for (uint32_t i = 0; i < t->count; i++) by_node[start[t->acc[i].node]++] = i;
  for (uint32_t v = n; v > 0; v--) start[v] = start[v - 1];
  start[0] = 0;
  fprintf(f, "{\n  \"benchmark\": \"memplan_bench export\",\n  \"graph\": \"%s\",\n", r->family);
  fprintf(f,
          "  \"streams\": %u,\n  \"nodes\": %u,\n  \"peak_bytes\": %zu,\n  \"bound_bytes\": %zu,\n"
          "  \"no_reuse_bytes\": %zu,\n  \"graph_mode_bytes\": %zu,\n  \"temps\": [\n",
          r->streams, n, r->peak, r->bound, r->no_reuse, r->graph_mode);
  for (uint32_t k = 0; k < t->temp_count; k++)
    fprintf(f, "    {\"id\": %u, \"bytes\": %zu}%s\n", k, t->temps[k].bytes,
            k + 1 < t->temp_count ? "," : "");
  fprintf(f, "  ],\n  \"node_temps\": [\n");
  for (uint32_t v = 0; v < n; v++) {
    fprintf(f, "    [");
    int any = 0;
    for (uint32_t i = start[v]; i < start[v + 1]; i++) {
      uint32_t tmp = t->acc[by_node[i]].temp;
      if (tmp == SG__NO_TEMP || seen[tmp] == v + 1) continue;
      seen[tmp] = v + 1;
      fprintf(f, "%s%u", any++ ? ", " : "", tmp);
    }
    fprintf(f, "]%s\n", v + 1 < n ? "," : "");
  }
  int creation_ok = 1;
  for (uint32_t v = 0; v < n; v++) {
    order[v] = v;
    for (uint32_t e = snap->succ_start[v]; e < snap->succ_start[v + 1]; e++)
      if (snap->succ[e] < v) creation_ok = 0;
  }
  fprintf(f, "  ],\n  \"orders\": [\n");
  write_order(f, "issue", s->order, n, t, !creation_ok);
  if (creation_ok) write_order(f, "creation", order, n, t, 1);
  fprintf(f, "  ]\n}\n");
  if (fclose(f)) {
    perror(path);
    exit(1);
  }
  free(start);
  free(by_node);
  free(seen);
  free(order);
}

static void measure(sg_graph *g, unsigned streams, const char *family, row *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->family, sizeof r->family, "%s", family);
  r->streams = streams;
  sg_exec_options o = host(streams);
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  sg_exec_memory mem;
  CHECK(sg_exec_get_memory(e, &mem));
  const sg_plan *plan;
  CHECK(sg_exec_get_plan(e, &plan));
  const sg__schedule *s = sg__plan_schedule(plan);
  sg__snapshot snap;
  if (sg__graph_snapshot_shallow(g, &snap)) exit(3);
  r->temps = (unsigned)mem.temp_count;
  r->nodes = s->node_count;
  r->peak = mem.arena_bytes;
  r->no_reuse = mem.no_reuse_bytes;
  CHECK(sg__memplan_lower_bound(s, snap.succ_start, snap.succ, &snap.access, &r->bound));
  r->serial = serial_peak(s->order, s->node_count, &snap.access);
  sg__memplan m;
  double t0 = now_ms();
  CHECK(sg__memplan_build(s, snap.succ_start, snap.succ, &snap.access, 1, &m));
  r->plan_ms = now_ms() - t0;
  CHECK(sg__memplan_check(s, snap.succ_start, snap.succ, &snap.access, &m));
  sg__memplan_free(&m);
  sg__schedule view = *s;
  view.streams_planned = 0;
  CHECK(sg__memplan_build(&view, snap.succ_start, snap.succ, &snap.access, 1, &m));
  CHECK(sg__memplan_check(&view, snap.succ_start, snap.succ, &snap.access, &m));
  r->graph_mode = m.arena_bytes;
  sg__memplan_free(&m);
  CHECK(sg__memplan_lower_bound(&view, snap.succ_start, snap.succ, &snap.access,
                                &r->graph_mode_bound));
  if (export_dir && !strncmp(family, "mlp ", 4)) export_replay(r, s, &snap);
#ifdef SG_MEMPLAN_GRAPHMEM
  graphmem_result gm;
  int gm_rc = graphmem_measure(s, snap.succ_start, snap.succ, &snap.access, &gm);
  if (gm_rc < 0) exit(4);
  if (gm_rc == 0) {
    r->graphmem = 1;
    r->gm_used = gm.used_high;
    r->gm_reserved = gm.reserved_high;
    r->gm_instantiate_ms = gm.instantiate_ms;
  }
#endif
  sg__snapshot_free(&snap);
  CHECK(sg_exec_destroy(e));
}

static void print_row(const row *r) {
  printf("%-14s %6u %6u %4u %10.2f %10.2f %7.3f %10.2f %10.2f %10.2f %9.2f %8.2f\n", r->family,
         r->temps, r->nodes, r->streams, r->peak / 1048576.0, r->bound / 1048576.0,
         (double)r->peak / (double)(r->bound ? r->bound : 1), r->no_reuse / 1048576.0,
         r->serial / 1048576.0, r->graph_mode / 1048576.0, r->graph_mode_bound / 1048576.0,
         r->plan_ms);
}

/* ---- creation time ------------------------------------------------------------------- */

/* 10,000 nodes, each writing one buffer and reading two written by the 64
 * before it: 30,000 accesses. planned: the written buffers are temporaries. */
static void build_create(sg_graph *g, unsigned n, int planned, uint64_t seed) {
  rng_state = seed;
  sg_temp *t = planned ? malloc(n * sizeof *t) : NULL;
  for (unsigned i = 0; i < n; i++) {
    size_t bytes = (size_t)4096 << (rnd() % 8);
    if (planned) t[i] = temp(g, bytes);
    sg_node v = node(g);
    sg_access a[3];
    a[0] = planned ? sg_access_temp(t[i], SG_ACCESS_WRITE) : on_ext((size_t)i * 4096, 4096, SG_ACCESS_WRITE);
    for (unsigned r = 1; r < 3; r++) {
      unsigned from = i ? i - 1 - (unsigned)(rnd() % (i < 64 ? i : 64)) : 0;
      if (!i) {
        a[r] = on_ext((size_t)(n + r) * 4096, 4096, SG_ACCESS_READ); /* an input */
      } else {
        a[r] = planned ? sg_access_temp(t[from], SG_ACCESS_READ)
                       : on_ext((size_t)from * 4096, 4096, SG_ACCESS_READ);
      }
    }
    declare(g, v, a, 3);
  }
  free(t);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const char *json_path = "memplan_bench.json";
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else if (!strcmp(argv[i], "--export-mlp")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "memplan_bench: --export-mlp needs a folder (it is created if missing)\n");
        return 1;
      }
      export_dir = argv[++i];
      if (mkdir(export_dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "memplan_bench: --export-mlp %s: %s\n", export_dir, strerror(errno));
        return 1;
      }
    } else {
      json_path = argv[i];
    }
  }
  external = malloc(external_bytes);
  FILE *json = fopen(json_path, "w");
  if (!json || !external) {
    perror(json_path);
    return 1;
  }
  printf("peak: planned arena; bound: most bytes the plan lets be live at once; serial: live\n"
         "peak running one node at a time in issue order (an eager allocator's floor);\n"
         "graph mode: the same graph packed for a CUDA graph built from its edges (gm bound:\n"
         "its bound, happens-before being the edges' reachability).\n\n");
  printf("%-14s %6s %6s %4s %10s %10s %7s %10s %10s %10s %9s %8s\n", "graph", "temps", "nodes",
         "strm", "peak MiB", "bound MiB", "ratio", "noreuse", "serial", "graph mode", "gm bound",
         "plan ms");
  row rows[64];
  int nrows = 0;
  double worst_mlp = 0, worst_random = 0, worst_graph_mode = 0;
  /* The MLP: 1, 4 and 8 micro-batches of 64 on 8 streams; 4 also on 2, and
   * on 1 (serial, as a program on one stream runs it). */
  struct {
    unsigned micro, layers, streams;
  } mlps[] = {{1, 12, 8}, {4, 12, 8}, {4, 12, 2}, {4, 12, 1}, {8, 24, 8}};
  for (unsigned i = 0; i < sizeof mlps / sizeof *mlps; i++) {
    sg_graph *g;
    CHECK(sg_graph_create(&g));
    build_mlp(g, mlps[i].micro, mlps[i].layers, 64);
    char name[32];
    snprintf(name, sizeof name, "mlp %ux%u", mlps[i].micro, mlps[i].layers);
    measure(g, mlps[i].streams, name, &rows[nrows]);
    print_row(&rows[nrows]);
    double ratio = (double)rows[nrows].peak / (double)rows[nrows].bound;
    if (ratio > worst_mlp) worst_mlp = ratio;
    nrows++;
    sg_graph_destroy(g);
  }
  unsigned sizes[] = {10, 100, 1000};
  unsigned seeds = quick ? 2 : 5;
  for (unsigned si = 0; si < 3; si++)
    for (unsigned seed = 1; seed <= seeds; seed++) {
      rng_state = 0x9e3779b97f4a7c15ull * (seed + 17 * sizes[si]);
      sg_graph *g;
      CHECK(sg_graph_create(&g));
      build_random(g, sizes[si]);
      char name[32];
      snprintf(name, sizeof name, "random s%u", seed);
      measure(g, 8, name, &rows[nrows]);
      print_row(&rows[nrows]);
      double ratio = (double)rows[nrows].peak / (double)rows[nrows].bound;
      if (ratio > worst_random) worst_random = ratio;
      double gm = (double)rows[nrows].graph_mode /
                  (double)(rows[nrows].graph_mode_bound ? rows[nrows].graph_mode_bound : 1);
      if (gm > worst_graph_mode) worst_graph_mode = gm;
      nrows++;
      sg_graph_destroy(g);
    }

  int any_graphmem = 0;
  for (int i = 0; i < nrows; i++) any_graphmem |= rows[i].graphmem;
  if (any_graphmem) {
    printf("\nCUDA graph memory nodes (one allocation and one free node per temporary, the\n"
           "graph's edges; the driver's pool after one launch) against the arenas:\n");
    printf("%-14s %6s %4s %10s %10s %12s %12s %9s\n", "graph", "temps", "strm", "arena MiB",
           "graph MiB", "nodes used", "nodes rsrvd", "inst ms");
    for (int i = 0; i < nrows; i++)
      if (rows[i].graphmem)
        printf("%-14s %6u %4u %10.2f %10.2f %12.2f %12.2f %9.2f\n", rows[i].family, rows[i].temps,
               rows[i].streams, rows[i].peak / 1048576.0, rows[i].graph_mode / 1048576.0,
               rows[i].gm_used / 1048576.0, rows[i].gm_reserved / 1048576.0,
               rows[i].gm_instantiate_ms);
  } else {
    printf("\nCUDA graph memory nodes: not measured (%s)\n",
#ifdef SG_MEMPLAN_GRAPHMEM
           "no GPU"
#else
           "built without CUDA"
#endif
    );
  }

  /* Creation time. */
  const unsigned n = quick ? 2000 : 10000;
  sg_graph *plain, *planned;
  CHECK(sg_graph_create(&plain));
  CHECK(sg_graph_create(&planned));
  build_create(plain, n, 0, 42);
  build_create(planned, n, 1, 42);
  size_t edges_plain = 0, edges_planned = 0, accesses = 0;
  CHECK(sg_graph_inferred_edge_count(plain, &edges_plain));
  CHECK(sg_graph_inferred_edge_count(planned, &edges_planned));
  CHECK(sg_graph_access_count(planned, &accesses));
  enum { RUNS = 7 };
  double t_plain[RUNS], t_planned[RUNS], c_plain[RUNS], c_planned[RUNS];
  sg_exec_options o = host(8);
  sg_exec_memory mem = {0};
  for (int run = 0; run < RUNS; run++) {
    sg_exec *e;
    double t0 = now_ms(), c0 = cpu_ms();
    CHECK(sg_exec_create(plain, &o, &e));
    c_plain[run] = cpu_ms() - c0;
    t_plain[run] = now_ms() - t0;
    CHECK(sg_exec_destroy(e));
    t0 = now_ms();
    c0 = cpu_ms();
    CHECK(sg_exec_create(planned, &o, &e));
    c_planned[run] = cpu_ms() - c0;
    t_planned[run] = now_ms() - t0;
    CHECK(sg_exec_get_memory(e, &mem));
    CHECK(sg_exec_destroy(e));
  }
  qsort(t_plain, RUNS, sizeof *t_plain, cmp_double);
  qsort(t_planned, RUNS, sizeof *t_planned, cmp_double);
  qsort(c_plain, RUNS, sizeof *c_plain, cmp_double);
  qsort(c_planned, RUNS, sizeof *c_planned, cmp_double);
  double create_ratio = c_planned[RUNS / 2] / c_plain[RUNS / 2];
  double wall_ratio = t_planned[RUNS / 2] / t_plain[RUNS / 2];
  printf("\nsg_exec_create, %u nodes, %zu accesses (%zu / %zu inferred edges), median of %d:\n"
         "  caller's buffers %.1f ms cpu (%.1f wall), planned temporaries %.1f ms cpu (%.1f "
         "wall): %.3fx cpu, %.3fx wall (target <= 1.2x, on cpu time)\n"
         "  %zu temporaries: arena %.1f MiB, no reuse %.1f MiB\n",
         n, accesses, edges_plain, edges_planned, RUNS, c_plain[RUNS / 2], t_plain[RUNS / 2],
         c_planned[RUNS / 2], t_planned[RUNS / 2], create_ratio, wall_ratio, mem.temp_count,
         mem.arena_bytes / 1048576.0, mem.no_reuse_bytes / 1048576.0);
  printf("\nworst peak / bound: MLP %.3fx, random %.3fx, random in graph mode %.3fx (target "
         "<= 1.05x)\n", worst_mlp, worst_random, worst_graph_mode);

  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  fprintf(json, "{\n  \"benchmark\": \"memplan_bench\",\n  \"date\": \"%s\",\n  \"quick\": %d,\n",
          date, quick);
  fprintf(json,
          "  \"targets\": [\n"
          "    {\"ratio\": \"mlp_peak_vs_bound\", \"limit\": 1.05, \"worst\": %.4f},\n"
          "    {\"ratio\": \"random_peak_vs_bound\", \"limit\": 1.05, \"worst\": %.4f},\n"
          "    {\"ratio\": \"random_graph_mode_peak_vs_bound\", \"limit\": 1.05, \"worst\": %.4f},\n"
          "    {\"ratio\": \"create_planned_vs_plain\", \"limit\": 1.20, \"worst\": %.4f}\n  ],\n",
          worst_mlp, worst_random, worst_graph_mode, create_ratio);
  fprintf(json, "  \"rows\": [\n");
  for (int i = 0; i < nrows; i++) {
    const row *r = &rows[i];
    fprintf(json,
            "    {\"graph\": \"%s\", \"temps\": %u, \"nodes\": %u, \"streams\": %u, "
            "\"peak_bytes\": %zu, \"bound_bytes\": %zu, \"no_reuse_bytes\": %zu, "
            "\"serial_live_bytes\": %zu, \"graph_mode_bytes\": %zu, "
            "\"graph_mode_bound_bytes\": %zu, \"plan_ms\": %.3f",
            r->family, r->temps, r->nodes, r->streams, r->peak, r->bound, r->no_reuse, r->serial,
            r->graph_mode, r->graph_mode_bound, r->plan_ms);
    if (r->graphmem)
      fprintf(json,
              ", \"graph_mem_nodes_used_high_bytes\": %zu, "
              "\"graph_mem_nodes_reserved_high_bytes\": %zu, \"graph_mem_nodes_instantiate_ms\": %.3f",
              r->gm_used, r->gm_reserved, r->gm_instantiate_ms);
    fprintf(json, "}%s\n", i + 1 < nrows ? "," : "");
  }
  fprintf(json,
          "  ],\n  \"create\": {\"nodes\": %u, \"accesses\": %zu, \"temps\": %zu, "
          "\"plain_cpu_ms\": %.3f, \"planned_cpu_ms\": %.3f, \"plain_wall_ms\": %.3f, "
          "\"planned_wall_ms\": %.3f, \"ratio_cpu\": %.4f, \"ratio_wall\": %.4f, "
          "\"arena_bytes\": %zu, \"no_reuse_bytes\": %zu}\n}\n",
          n, accesses, mem.temp_count, c_plain[RUNS / 2], c_planned[RUNS / 2], t_plain[RUNS / 2],
          t_planned[RUNS / 2], create_ratio, wall_ratio, mem.arena_bytes, mem.no_reuse_bytes);
  fclose(json);
  sg_graph_destroy(plain);
  sg_graph_destroy(planned);
  free(external);
  return 0;
}
