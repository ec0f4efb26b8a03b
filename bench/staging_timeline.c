/* staging_timeline: where the time of one staged copy goes.
 *
 *   staging_timeline [MiB] [launches] [OUT_DIR]      defaults: 64 12 .
 *
 * One executable per direction (host->device, device->host) and mode
 * (streams, graph) copies one pageable buffer through pinned staging
 * (SG_STAGING_STAGE, the default geometry), traced; each launch is timed
 * from sg_exec_launch to the end of sg_exec_wait, beside the same copy from
 * pinned memory. It prints the times and writes each executable's Chrome
 * trace (OUT_DIR/timeline-DIR-MODE.json): one slice per launch of the copy
 * node, and one per part of a chunk that a copy thread moved, so that the
 * gaps between the host copies, and between them and the copy node, can be
 * read off (Perfetto, or any JSON reader).
 *
 * Then the direct route (SG_STAGING_NONE: the driver's own pageable path
 * inside an executable) against cudaMemcpyAsync on an idle stream, with the
 * copy's kind given and with cudaMemcpyDefault, at 256 KiB to 16 MiB: where
 * the direct route loses to the driver's own call, which of the two
 * differences (the kind, the executable's stream) costs it.
 *
 * A diagnostic, not a benchmark with targets: staging_bench holds those. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "streamgraph/streamgraph.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int check(sg_status st, const char *what) {
  if (st == SG_OK) return 1;
  fprintf(stderr, "staging_timeline: %s: %s\n", what, sg_last_error());
  return 0;
}

/* Times `launches` launches of a one-copy executable into `ms`; writes its
 * trace to `trace_path` when not NULL. 1 on success. */
static int time_copy(void *dst, const void *src, size_t bytes, int to_device, sg_exec_mode mode,
                     unsigned launches, const char *trace_path, double *ms) {
  sg_graph *g = NULL;
  sg_exec *e = NULL;
  int ok = check(sg_graph_create(&g), "sg_graph_create");
  sg_copy_desc c = {dst, src, bytes, to_device ? SG_COPY_HOST_TO_DEVICE : SG_COPY_DEVICE_TO_HOST,
                    to_device ? "h2d" : "d2h"};
  ok = ok && check(sg_graph_add_copy(g, &c, NULL, 0, NULL), "sg_graph_add_copy");
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = mode;
  o.staging.policy = SG_STAGING_STAGE;
  o.trace = trace_path != NULL;
  o.trace_launches = launches;
  ok = ok && check(sg_exec_create(g, &o, &e), "sg_exec_create");
  for (unsigned i = 0; ok && i < launches; i++) {
    const double t0 = now_ms();
    ok = check(sg_exec_launch(e, NULL), "sg_exec_launch") && check(sg_exec_wait(e), "sg_exec_wait");
    ms[i] = now_ms() - t0;
  }
  if (ok && trace_path) ok = check(sg_exec_write_trace(e, trace_path), "sg_exec_write_trace");
  if (e) ok &= check(sg_exec_destroy(e), "sg_exec_destroy");
  if (g) sg_graph_destroy(g);
  return ok;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_after_first(const double *ms, unsigned n) {
  double sorted[256];
  unsigned m = 0;
  for (unsigned i = 1; i < n; i++) sorted[m++] = ms[i];
  qsort(sorted, m, sizeof *sorted, by_value);
  return m ? sorted[m / 2] : ms[0];
}

static int cuda_ok(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return 1;
  fprintf(stderr, "staging_timeline: %s: %s\n", what, cudaGetErrorString(err));
  return 0;
}

/* Medians (ms) over interleaved rounds of: cudaMemcpyAsync with the copy's
 * kind, the same with cudaMemcpyDefault (each on an idle stream, then
 * synchronised), and a SG_STAGING_NONE executable's launch and wait. */
static int direct_rows(unsigned char *pageable, void *dev) {
  cudaStream_t stream;
  if (!cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"))
    return 0;
  printf("\ndirect route, GB/s (medians of 21 interleaved rounds): driver = cudaMemcpyAsync with "
         "the kind, default = with cudaMemcpyDefault, exec = SG_STAGING_NONE executable\n");
  printf("%-14s %9s %9s %9s %8s %8s\n", "case", "driver", "default", "exec", "exec/drv",
         "dflt/drv");
  int ok = 1;
  for (int to_device = 1; ok && to_device >= 0; to_device--) {
    for (size_t bytes = (size_t)256 << 10; ok && bytes <= ((size_t)16 << 20); bytes *= 4) {
      void *dst = to_device ? dev : (void *)pageable;
      const void *src = to_device ? (const void *)pageable : dev;
      const enum cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
      sg_graph *g = NULL;
      sg_exec *e = NULL;
      ok = check(sg_graph_create(&g), "sg_graph_create");
      sg_copy_desc c = {dst, src, bytes, to_device ? SG_COPY_HOST_TO_DEVICE
                                                   : SG_COPY_DEVICE_TO_HOST, "direct"};
      ok = ok && check(sg_graph_add_copy(g, &c, NULL, 0, NULL), "sg_graph_add_copy");
      sg_exec_options o;
      sg_exec_options_init(&o);
      o.backend = SG_BACKEND_CUDA;
      o.mode = SG_MODE_STREAMS;
      o.staging.policy = SG_STAGING_NONE;
      ok = ok && check(sg_exec_create(g, &o, &e), "sg_exec_create");
      enum { ROUNDS = 21 };
      double t[3][ROUNDS];
      for (int r = 0; ok && r < ROUNDS; r++) {
        for (int way = 0; ok && way < 3; way++) {
          const double t0 = now_ms();
          if (way < 2) {
            ok = cuda_ok(cudaMemcpyAsync(dst, src, bytes, way ? cudaMemcpyDefault : kind, stream),
                         "cudaMemcpyAsync") &&
                 cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
          } else {
            ok = check(sg_exec_launch(e, NULL), "sg_exec_launch") &&
                 check(sg_exec_wait(e), "sg_exec_wait");
          }
          t[way][r] = now_ms() - t0;
        }
      }
      if (e) ok &= check(sg_exec_destroy(e), "sg_exec_destroy");
      if (g) sg_graph_destroy(g);
      if (!ok) break;
      double rate[3];
      for (int way = 0; way < 3; way++) {
        qsort(t[way], ROUNDS, sizeof t[way][0], by_value);
        rate[way] = (double)bytes / (t[way][ROUNDS / 2] * 1e6);
      }
      char name[32];
      snprintf(name, sizeof name, "%s %zu KiB", to_device ? "H2D" : "D2H", bytes >> 10);
      printf("%-14s %9.3f %9.3f %9.3f %8.3f %8.3f\n", name, rate[0], rate[1], rate[2],
             rate[2] / rate[0], rate[1] / rate[0]);
    }
  }
  cudaStreamDestroy(stream);
  return ok;
}

int main(int argc, char **argv) {
  const unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
  const unsigned launches = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 12;
  const char *out = argc > 3 ? argv[3] : ".";
  if (mib == 0 || mib > 4096 || launches < 2 || launches > 256) {
    fprintf(stderr, "usage: staging_timeline [MiB 1-4096] [launches 2-256] [OUT_DIR]\n");
    return 2;
  }
  if (sg_cuda_device_count() == 0) {
    printf("staging_timeline: no CUDA device, nothing to time\n");
    return 0;
  }
  const size_t bytes = (size_t)mib << 20;
  unsigned char *pageable = malloc(bytes);
  void *pinned = NULL, *dev = NULL;
  int ok = pageable != NULL;
  if (!ok) fprintf(stderr, "staging_timeline: out of memory for %lu MiB\n", mib);
  ok = ok && check(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, 0, bytes, &pinned),
                   "sg_mem_alloc (pinned)");
  ok = ok && check(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, bytes, &dev),
                   "sg_mem_alloc (device)");
  if (ok) {
    for (size_t i = 0; i < bytes; i++) pageable[i] = (unsigned char)(i * 131u + 7u);
    memcpy(pinned, pageable, bytes);
  }
  printf("staging_timeline: %lu MiB, %u launches each, ms per launch (launch + wait); "
         "x pin = pinned / staged, medians after the first launch\n", mib, launches);
  for (int to_device = 1; ok && to_device >= 0; to_device--) {
    for (int m = 0; ok && m < 2; m++) {
      const sg_exec_mode mode = m ? SG_MODE_GRAPH : SG_MODE_STREAMS;
      const char *dir = to_device ? "h2d" : "d2h", *mname = m ? "graph" : "streams";
      char path[4096];
      snprintf(path, sizeof path, "%s/timeline-%s-%s.json", out, dir, mname);
      double staged[256], pin[256];
      void *dst = to_device ? dev : (void *)pageable, *src = to_device ? (void *)pageable : dev;
      ok = time_copy(dst, src, bytes, to_device, mode, launches, path, staged);
      void *pdst = to_device ? dev : pinned, *psrc = to_device ? pinned : dev;
      ok = ok && time_copy(pdst, psrc, bytes, to_device, mode, launches, NULL, pin);
      if (!ok) break;
      printf("%s %-7s staged:", dir, mname);
      for (unsigned i = 0; i < launches; i++) printf(" %.2f", staged[i]);
      const double s = median_after_first(staged, launches), p = median_after_first(pin, launches);
      printf("\n%s %-7s pinned median %.3f, staged median %.3f, x pin %.3f; trace %s\n", dir,
             mname, p, s, p / s, path);
    }
  }
  ok = ok && direct_rows(pageable, dev);
  /* The device->host copies wrote back what the host->device ones carried. */
  if (ok && memcmp(pageable, pinned, bytes) != 0) {
    fprintf(stderr, "staging_timeline: WRONG: the bytes that came back differ\n");
    ok = 0;
  } else if (ok) {
    printf("data exact\n");
  }
  if (dev) sg_mem_free(dev);
  if (pinned) sg_mem_free(pinned);
  free(pageable);
  return ok ? 0 : 1;
}
