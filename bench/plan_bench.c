/* plan_bench: how fast the planner is and how good its plans are, on DAG
 * families up to 100,000 nodes and 300,000 edges; then a graph built and
 * planned through the public API as an application does it, up to
 * 1,000,000 nodes and 3,000,000 edges. No GPU needed.
 *
 *   plan_bench [out.json] [--quick] [--api-only]
 *
 * --quick: the planner up to 10,000 nodes, the API rows at 100,000 only.
 * --api-only: only the API rows.
 *
 * Each case runs in a child process (fork) so that its peak memory can be
 * measured alone: "peak MB" is the child's peak resident set (VmHWM, reset
 * through /proc/self/clear_refs) minus its resident set just before
 * planning, i.e. what the planner itself touched. The input graph is not
 * counted.
 * Time is the median of three runs of sg__schedule_build. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>

#include "plan/schedule_build.h"
#include "streamgraph/streamgraph.h"

typedef struct dag {
  uint32_t n;
  uint32_t *start, *succ;
  size_t m;
} dag;

typedef struct result {
  double ms;
  double peak_mb;
  int status;
  sg__schedule s; /* scalars only are meaningful in the parent */
} result;

/* xorshift64*: reproducible across platforms */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* Edge-list scratch -> CSR (sorted, distinct). */
typedef struct edge {
  uint32_t u, v;
} edge;

static int edge_cmp(const void *a, const void *b) {
  const edge *x = a, *y = b;
  if (x->u != y->u) return x->u < y->u ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v;
}

static dag to_csr(uint32_t n, edge *e, size_t m) {
  qsort(e, m, sizeof *e, edge_cmp);
  dag d = {n, calloc((size_t)n + 1, sizeof(uint32_t)), malloc((m ? m : 1) * sizeof(uint32_t)), 0};
  for (size_t k = 0; k < m; k++) {
    if (k && e[k].u == e[k - 1].u && e[k].v == e[k - 1].v) continue;
    d.succ[d.m++] = e[k].v;
    d.start[e[k].u + 1]++;
  }
  for (uint32_t v = 0; v < n; v++) d.start[v + 1] += d.start[v];
  return d;
}

/* Node labels: a random permutation, so index order is not topological. */
static uint32_t *permutation(uint32_t n) {
  uint32_t *p = malloc((size_t)n * sizeof *p);
  for (uint32_t i = 0; i < n; i++) p[i] = i;
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = (uint32_t)(rnd() % i), t = p[i - 1];
    p[i - 1] = p[j];
    p[j] = t;
  }
  return p;
}

static dag make_chain(uint32_t n) {
  edge *e = malloc((size_t)n * sizeof *e);
  size_t m = 0;
  for (uint32_t v = 1; v < n; v++) e[m++] = (edge){v - 1, v};
  dag d = to_csr(n, e, m);
  free(e);
  return d;
}

/* root -> n-2 independent nodes -> sink */
static dag make_fan(uint32_t n) {
  edge *e = malloc(2 * (size_t)n * sizeof *e);
  size_t m = 0;
  for (uint32_t v = 1; v + 1 < n; v++) {
    e[m++] = (edge){0, v};
    e[m++] = (edge){v, n - 1};
  }
  dag d = to_csr(n, e, m);
  free(e);
  return d;
}

/* fans of `width` nodes between join nodes: join -> width nodes -> join ...
 * (launch_bench's "diamond" DAGs). Chains along edges break at every join. */
static dag make_fans(uint32_t n, uint32_t width) {
  uint32_t *label = permutation(n);
  edge *e = malloc(2 * (size_t)n * sizeof *e);
  size_t m = 0;
  for (uint32_t join = 0; join + width + 1 < n; join += width + 1)
    for (uint32_t k = 1; k <= width; k++) {
      e[m++] = (edge){label[join], label[join + k]};
      e[m++] = (edge){label[join + k], label[join + width + 1]};
    }
  dag d = to_csr(n, e, m);
  free(e);
  free(label);
  return d;
}

/* layers of `width` nodes; node i of a layer follows node i of the layer
 * before, plus two random nodes of it (a pipeline of wide stages, like
 * batched model layers): the width is exactly `width` */
static dag make_layered(uint32_t n, uint32_t width) {
  uint32_t *label = permutation(n);
  edge *e = malloc(3 * (size_t)n * sizeof *e);
  size_t m = 0;
  for (uint32_t v = width; v < n; v++) {
    uint32_t layer_start = (v / width - 1) * width;
    e[m++] = (edge){label[v - width], label[v]};
    for (int k = 0; k < 2; k++)
      e[m++] = (edge){label[layer_start + (uint32_t)(rnd() % width)], label[v]};
  }
  dag d = to_csr(n, e, m);
  free(e);
  free(label);
  return d;
}

/* `width` columns; every step, random pairs of columns meet in a shared
 * node (i_k -> m -> i_k+1 and j_k -> m -> j_k+1). The width is `width`, but
 * chains that follow edges break at every meeting node, so only chains that
 * jump over them reach it: the hard case for the closure search. */
static dag make_crossings(uint32_t n, uint32_t width) {
  if (width > n) width = n;
  uint32_t per_round = width + width / 2;
  n = width + (n - width) / per_round * per_round; /* whole rounds only */
  uint32_t *label = permutation(n);
  edge *e = malloc(4 * (size_t)n * sizeof *e);
  uint32_t *tail = malloc(width * sizeof *tail), *order = malloc(width * sizeof *order);
  size_t m = 0;
  uint32_t next = 0;
  for (uint32_t c = 0; c < width && next < n; c++) tail[c] = next++;
  while (next + per_round <= n) {
    /* a meeting node for each random pair of columns, then a new node per column */
    for (uint32_t i = 0; i < width; i++) order[i] = i;
    for (uint32_t i = width; i > 1; i--) {
      uint32_t j = (uint32_t)(rnd() % i), t = order[i - 1];
      order[i - 1] = order[j];
      order[j] = t;
    }
    uint32_t first_meet = next;
    for (uint32_t p = 0; p + 1 < width; p += 2) {
      uint32_t meet = next++;
      e[m++] = (edge){label[tail[order[p]]], label[meet]};
      e[m++] = (edge){label[tail[order[p + 1]]], label[meet]};
    }
    for (uint32_t p = 0; p < width; p++) {
      uint32_t c = order[p], v = next++;
      if (p / 2 * 2 + 1 < width) e[m++] = (edge){label[first_meet + p / 2], label[v]};
      else e[m++] = (edge){label[tail[c]], label[v]};
      tail[c] = v;
    }
  }
  dag d = to_csr(n, e, m);
  free(e);
  free(tail);
  free(order);
  free(label);
  return d;
}

/* random sparse: 3 edges per node, each from a node at most `window`
 * positions earlier in a hidden topological order (window = n: uniform) */
static dag make_random(uint32_t n, uint32_t window) {
  uint32_t *label = permutation(n);
  edge *e = malloc(3 * (size_t)n * sizeof *e);
  size_t m = 0;
  for (uint32_t v = 1; v < n; v++)
    for (int k = 0; k < 3; k++) {
      uint32_t span = v < window ? v : window;
      uint32_t u = v - 1 - (uint32_t)(rnd() % span);
      e[m++] = (edge){label[u], label[v]};
    }
  dag d = to_csr(n, e, m);
  free(e);
  free(label);
  return d;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A field of /proc/self/status in kB ("VmRSS", "VmHWM"), or 0. */
static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  size_t len = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, len) && line[len] == ':') kb = atol(line + len + 1);
  if (f) fclose(f);
  return kb;
}

/* Resets the peak resident set (VmHWM) to the current one (Linux >= 4.0). */
static void reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) {
    fputs("5", f);
    fclose(f);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Plans in a child; the result comes back through a pipe. */
static result run_case(const dag *d, unsigned limit) {
  result r;
  memset(&r, 0, sizeof r);
  int fds[2];
  if (pipe(fds)) {
    r.status = -1;
    return r;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
#ifdef __GLIBC__
    malloc_trim(0); /* give back the parent's freed heap, so the planner's pages are new */
#endif
    reset_peak();
    long before = status_kb("VmRSS");
    double times[3];
    for (int k = 0; k < 3; k++) {
      sg__schedule s;
      double t0 = now_ms();
      r.status = sg__schedule_build(d->n, d->start, d->succ, limit, &s);
      times[k] = now_ms() - t0;
      if (r.status) break;
      r.s = s;
      if (k < 2) sg__schedule_free(&s);
    }
    qsort(times, 3, sizeof times[0], cmp_double);
    r.ms = times[1];
    r.peak_mb = (status_kb("VmHWM") - before) / 1024.0;
    ssize_t wrote = write(fds[1], &r, sizeof r);
    _exit(wrote == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fds[1]);
  ssize_t got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  waitpid(pid, NULL, 0);
  if (got != (ssize_t)sizeof r) r.status = -1;
  return r;
}

/* ---- building and planning through the public API -----------------------
 *
 * What an application with a huge graph pays: sg_graph_add_kernel once per
 * node with its dependencies (the graph keeps every edge, checks every
 * handle), then sg_plan_create (snapshot, cycle check, plan). Nodes are
 * created in a hidden topological order (dependencies must exist first);
 * each node has up to 3 dependencies:
 *   random-local    3 from the 64 nodes created before it
 *   layered-w100    stages of 100: its column's node and 2 random nodes of
 *                   the stage before
 *   random-uniform  3 from every node created before it
 * Each case runs in a child. Times are wall clock and CPU (user + system of
 * the child: on a shared machine the wall clock also counts time the child
 * waited for a core). Peak is the child's peak resident set minus its
 * resident set before the graph was created: graph, plan and temporaries. */

typedef struct api_result {
  int status;
  double build_ms, plan_ms, build_cpu_ms, plan_cpu_ms;
  double peak_mb;
  size_t edges;
  sg_plan_summary summary;
  char message[256];
} api_result;

static void api_twin(const sg_kernel_launch *launch, void *const *args) {
  (void)launch;
  (void)args;
}

static double cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* The dependencies of node v (< n) in family `kind` (3 local, 2 layered,
 * 4 uniform), written to deps as node indices; returns how many. */
static size_t api_deps(int kind, uint32_t v, uint32_t *deps) {
  size_t nd = 0;
  if (kind == 2) {
    const uint32_t width = 100;
    if (v < width) return 0;
    uint32_t stage_start = (v / width - 1) * width;
    deps[nd++] = v - width;
    for (int k = 0; k < 2; k++) deps[nd++] = stage_start + (uint32_t)(rnd() % width);
    return nd;
  }
  if (v == 0) return 0;
  uint32_t window = kind == 3 ? 64 : v;
  uint32_t span = v < window ? v : window;
  for (int k = 0; k < 3; k++) deps[nd++] = v - 1 - (uint32_t)(rnd() % span);
  return nd;
}

static void api_build_and_plan(int kind, uint32_t n, api_result *r) {
  long before = status_kb("VmRSS");
  sg_node *handles = NULL;
  sg_graph *g = NULL;
  sg_plan *plan = NULL;
  sg_kernel_desc k;
  memset(&k, 0, sizeof k);
  k.grid = (sg_dim3){1, 1, 1};
  k.block = (sg_dim3){1, 1, 1};
  k.host_twin = api_twin;

  double t0 = now_ms(), c0 = cpu_ms();
  handles = malloc((size_t)n * sizeof *handles);
  r->status = handles ? sg_graph_create(&g) : SG_ERR_OUT_OF_MEMORY;
  for (uint32_t v = 0; v < n && !r->status; v++) {
    uint32_t idx[3];
    sg_node deps[3];
    size_t nd = api_deps(kind, v, idx);
    for (size_t i = 0; i < nd; i++) deps[i] = handles[idx[i]];
    r->status = sg_graph_add_kernel(g, &k, deps, nd, &handles[v]);
  }
  double t1 = now_ms(), c1 = cpu_ms();
  if (!r->status) r->status = sg_graph_edge_count(g, &r->edges);
  if (!r->status) r->status = sg_plan_create(g, 0, &plan);
  double t2 = now_ms(), c2 = cpu_ms();
  if (!r->status) r->status = sg_plan_get_summary(plan, &r->summary);
  if (r->status) snprintf(r->message, sizeof r->message, "%s", sg_last_error());
  r->build_ms = t1 - t0;
  r->plan_ms = t2 - t1;
  r->build_cpu_ms = c1 - c0;
  r->plan_cpu_ms = c2 - c1;
  r->peak_mb = (status_kb("VmHWM") - before) / 1024.0;
  if (plan) sg_plan_destroy(plan);
  if (g) sg_graph_destroy(g);
  free(handles);
}

static api_result run_api_case(int kind, uint32_t n) {
  api_result r;
  memset(&r, 0, sizeof r);
  int fds[2];
  if (pipe(fds)) {
    r.status = -1;
    return r;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    reset_peak();
    rng_state = 88172645463325252ull + n + (uint64_t)kind;
    api_build_and_plan(kind, n, &r);
    ssize_t wrote = write(fds[1], &r, sizeof r);
    _exit(wrote == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fds[1]);
  ssize_t got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  waitpid(pid, NULL, 0);
  if (got != (ssize_t)sizeof r) r.status = -1;
  return r;
}

/* Prints the API rows and appends them to the JSON; returns 1 when every
 * 1,000,000-node case built and planned within the target (2 s together). */
static int run_api_rows(FILE *json, int quick, int *first) {
  static const struct {
    const char *name;
    int kind;
  } fams[] = {{"random-local", 3}, {"layered-w100", 2}, {"random-uniform", 4}};
  static const uint32_t api_sizes[] = {100000, 1000000};
  const double target_ms = 2000;
  int met = 1;
  printf("\nbuilt through the API (sg_graph_add_kernel per node) and planned (sg_plan_create, "
         "default limit)\n");
  printf("%-15s %8s %8s %9s %9s %9s %9s %9s %8s %6s %7s %7s  %s\n", "family", "nodes", "edges",
         "build ms", "plan ms", "total ms", "cpu ms", "peak MB", "B/edge", "width", "streams",
         "events", "target");
  for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++)
    for (size_t z = 0; z < (quick ? 1u : 2u); z++) {
      uint32_t n = api_sizes[z];
      api_result r = run_api_case(fams[f].kind, n);
      if (r.status) {
        printf("%-15s %8u  failed (%d): %s\n", fams[f].name, n, r.status, r.message);
        met = 0;
        continue;
      }
      double total = r.build_ms + r.plan_ms, cpu = r.build_cpu_ms + r.plan_cpu_ms;
      const char *verdict = "";
      if (n == 1000000) {
        /* On a loaded machine the wall clock counts waiting for a core; the
         * target is judged on the CPU time, and both are shown. */
        verdict = cpu <= target_ms ? "met (cpu <= 2 s)" : "MISSED (cpu > 2 s)";
        if (cpu > target_ms) met = 0;
      }
      printf("%-15s %8u %8zu %9.0f %9.0f %9.0f %9.0f %9.1f %8.1f %6zu %7u %7u  %s\n",
             fams[f].name, n, r.edges, r.build_ms, r.plan_ms, total, cpu, r.peak_mb,
             r.peak_mb * 1048576.0 / (double)(r.edges ? r.edges : 1), r.summary.width,
             r.summary.stream_count, r.summary.event_count, verdict);
      fprintf(json,
              "%s    {\"api\": true, \"family\": \"%s\", \"nodes\": %u, \"edges\": %zu, "
              "\"build_ms\": %.1f, \"plan_ms\": %.1f, \"build_cpu_ms\": %.1f, "
              "\"plan_cpu_ms\": %.1f, \"peak_mb\": %.2f, \"width\": %zu, \"streams\": %u, "
              "\"events\": %u, \"reduced_edges\": %zu}",
              *first ? "" : ",\n", fams[f].name, n, r.edges, r.build_ms, r.plan_ms,
              r.build_cpu_ms, r.plan_cpu_ms, r.peak_mb, r.summary.width, r.summary.stream_count,
              r.summary.event_count, r.summary.reduced_edge_count);
      *first = 0;
      fflush(stdout);
    }
  return met;
}

typedef struct family {
  const char *name;
  int kind; /* 0 chain, 1 fan, 2 layered, 3 random local, 4 random uniform, 5 crossings,
               6 fans between joins */
} family;

int main(int argc, char **argv) {
  const char *json_path = "plan_bench.json";
  int quick = 0, api_only = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--api-only")) api_only = 1;
    else json_path = argv[i];
  }
  FILE *json = fopen(json_path, "w");
  if (!json) {
    perror(json_path);
    return 1;
  }
  static const family families[] = {{"chain", 0},         {"fan", 1},
                                    {"layered-w100", 2},  {"random-local", 3},
                                    {"random-uniform", 4}, {"crossings-w64", 5},
                                    {"joined-fans-w8", 6}};
  static const uint32_t sizes[] = {1000, 10000, 100000};
  static const unsigned limits[] = {0, 32, UINT_MAX};
  size_t nsizes = api_only ? 0 : quick ? 2 : 3;

  if (nsizes)
    printf("%-15s %7s %7s %6s %8s %8s %7s %7s %7s %5s %4s %7s %7s %3s %6s %6s\n", "family",
         "nodes", "edges", "limit", "ms", "peak MB", "streams", "chains", "width", "exact", "red",
         "events", "waits", "wx", "cp", "plancp");
  fprintf(json, "{\n  \"results\": [\n");
  int first = 1;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (size_t z = 0; z < nsizes; z++) {
      uint32_t n = sizes[z];
      rng_state = 88172645463325252ull + n;
      dag d;
      switch (families[f].kind) {
        case 0: d = make_chain(n); break;
        case 1: d = make_fan(n); break;
        case 2: d = make_layered(n, 100); break;
        case 3: d = make_random(n, 64); break;
        case 4: d = make_random(n, n); break;
        case 5: d = make_crossings(n, 64); break;
        default: d = make_fans(n, 8); break;
      }
      for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        result r = run_case(&d, limits[l]);
        char limit_text[16];
        if (limits[l] == UINT_MAX) snprintf(limit_text, sizeof limit_text, "none");
        else snprintf(limit_text, sizeof limit_text, "%u", r.s.max_streams);
        if (r.status) {
          printf("%-15s %7u %7zu %6s  failed (%d)\n", families[f].name, n, d.m, limit_text,
                 r.status);
          continue;
        }
        const sg__schedule *s = &r.s;
        printf("%-15s %7u %7zu %6s %8.1f %8.1f %7u %7u %6zu%s %5s %4s %7u %7zu %3s %6zu %6zu\n",
               families[f].name, n, d.m, limit_text, r.ms, r.peak_mb, s->stream_count,
               s->chain_count, s->width, s->width_exact ? " " : "+", s->width_exact ? "yes" : "no",
               s->reduction_exact ? "yes" : "no", s->event_count, s->wait_count,
               s->waits_exact ? "yes" : "no", s->critical_path, s->plan_critical_path);
        fprintf(json,
                "%s    {\"family\": \"%s\", \"nodes\": %u, \"edges\": %zu, \"max_streams\": %u, "
                "\"ms\": %.3f, \"peak_mb\": %.2f, \"streams\": %u, \"chains\": %u, "
                "\"width\": %zu, \"width_exact\": %d, \"reduction_exact\": %d, "
                "\"reduced_edges\": %zu, \"events\": %u, \"waits\": %zu, \"waits_exact\": %d, "
                "\"critical_path\": %zu, \"plan_critical_path\": %zu}",
                first ? "" : ",\n", families[f].name, n, d.m, s->max_streams, r.ms, r.peak_mb,
                s->stream_count, s->chain_count, s->width, s->width_exact, s->reduction_exact,
                s->reduced_edge_count, s->event_count, s->wait_count, s->waits_exact,
                s->critical_path, s->plan_critical_path);
        first = 0;
        fflush(stdout);
      }
      free(d.start);
      free(d.succ);
    }
  if (nsizes)
    printf("\nwidth: exact, or '+' = lower bound (largest layer); exact: width exact; red: "
           "transitive reduction exact; wx: every wait proved necessary; cp/plancp: critical "
           "path of the DAG / of the plan (nodes)\n");
  run_api_rows(json, quick, &first);
  fprintf(json, "\n  ]\n}\n");
  fclose(json);
  printf("\nB/edge: peak bytes per edge (graph, plan and temporaries); target: build + plan of "
         "1,000,000 nodes within 2 s of CPU on the 2-core development machine\n");
  return 0;
}
