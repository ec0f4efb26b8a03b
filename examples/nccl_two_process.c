/* nccl_two_process: the same graph in two processes, one GPU each, sharing
 * an NCCL communicator - the path to several hosts.
 *
 * Rank 0 makes the communicator's unique id (ncclGetUniqueId) and passes it
 * to rank 1; each rank creates its end (ncclCommInitRank) and hands it to
 * the graph's NCCL nodes. The library never bootstraps ranks itself.
 *
 * Each rank runs, on its own GPU: upload -> work kernel (rounds = rank + 1)
 * -> all-reduce (sum of both ranks' data) -> send/recv exchange (each rank
 * gets the other's data) -> downloads, in streams mode and in graph mode
 * (built explicitly and by capture), several launches each, and checks
 * every element against a CPU computation of both ranks' data.
 *
 *   nccl_two_process                          fork: rank 0 is this process, rank 1
 *                                             its child; the id goes through a pipe
 *   nccl_two_process --rank R --id-file PATH  one rank per process (start both);
 *                                             the id goes through a file rank 0 writes
 *   options: --device D (default: the rank), --elements N
 *
 * Exit status 0 when every check passed, 1 on a failure, 77 when it cannot
 * run here (fewer than two GPUs, or the library without NCCL). Each process
 * gives up after two minutes (alarm) rather than wait for a peer that died. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

#define SKIP 77

static int rank_id = -1;

#define FAIL(...)                                          \
  do {                                                     \
    fprintf(stderr, "rank %d: ", rank_id);                 \
    fprintf(stderr, __VA_ARGS__);                          \
    fprintf(stderr, "\n");                                 \
    return 1;                                              \
  } while (0)

#define CHECK(call)                                                                    \
  do {                                                                                 \
    sg_status st_ = (call);                                                            \
    if (st_ != SG_OK)                                                                  \
      FAIL("%s:%d: %s: %s: %s", __FILE__, __LINE__, #call, sg_status_name(st_),        \
           sg_last_error());                                                           \
  } while (0)

static uint32_t input(int rank, size_t i) { return (uint32_t)(i * 2654435761u) ^ (0x5bd1e995u * (uint32_t)(rank + 1)); }

static uint32_t worked(int rank, size_t i) {
  uint32_t v = input(rank, i);
  for (uint32_t r = 0; r < (uint32_t)rank + 1; r++) v = sg_kernels_mix(v, (uint32_t)i, r);
  return v;
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* The id through a file: written whole under another name, then renamed, so
 * that rank 1 never reads half of it. */
static int put_id_file(const char *path, const ncclUniqueId *id) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write_all(fd, id, sizeof *id) || close(fd) || rename(tmp, path)) return -1;
  return 0;
}

static int get_id_file(const char *path, ncclUniqueId *id) {
  for (int tries = 0; tries < 1200; tries++) { /* up to a minute */
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
      int rc = read_all(fd, id, sizeof *id);
      close(fd);
      return rc;
    }
    struct timespec t = {0, 50 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  return -1;
}

/* One rank's whole run. `id_fd` (fork mode) or `id_path` passes the id. */
static int run_rank(int rank, int device, size_t n, int id_fd, const char *id_path) {
  rank_id = rank;
  alarm(120);
  setenv("NCCL_NVLS_ENABLE", "0", 1); /* NVLink multicast stays off */
  int gpus = sg_cuda_device_count();
  if (gpus < 2) {
    printf("rank %d: needs two GPUs (one per process), %d present: skipped\n", rank, gpus);
    return SKIP;
  }
  int version = 0;
  if (sg_nccl_version(&version) != SG_OK) {
    printf("rank %d: %s: skipped\n", rank, sg_last_error());
    return SKIP;
  }
  if (cudaSetDevice(device) != cudaSuccess) FAIL("cudaSetDevice(%d) failed", device);

  ncclUniqueId id;
  if (rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) FAIL("ncclGetUniqueId: %s", ncclGetErrorString(r));
    if (id_fd >= 0 ? write_all(id_fd, &id, sizeof id) : put_id_file(id_path, &id))
      FAIL("cannot pass the unique id on: %s", strerror(errno));
  } else if (id_fd >= 0 ? read_all(id_fd, &id, sizeof id) : get_id_file(id_path, &id)) {
    FAIL("no unique id from rank 0 (it failed or was not started)");
  }
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, 2, id, rank);
  if (r != ncclSuccess) FAIL("ncclCommInitRank: %s", ncclGetErrorString(r));
  printf("rank %d: GPU %d, NCCL %d, communicator ready\n", rank, device, version);

  size_t bytes = n * sizeof(uint32_t);
  uint32_t *in, *sum_out, *peer_out;
  void *x, *sum, *peer;
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, device, bytes, (void **)&in));
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, device, bytes, (void **)&sum_out));
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, device, bytes, (void **)&peer_out));
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, device, bytes, &x));
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, device, bytes, &sum));
  CHECK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, device, bytes, &peer));
  for (size_t i = 0; i < n; i++) in[i] = input(rank, i);

  /* The same graph on both ranks: NCCL calls match in order. */
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node up, work, reduce, exchange, down_sum, down_peer;
  sg_copy_desc c = {x, in, bytes, SG_COPY_HOST_TO_DEVICE, "upload"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, x, n, (uint32_t)rank + 1);
  k.desc.name = "work";
  CHECK(sg_graph_add_kernel(g, &k.desc, &up, 1, &work));
  sg_nccl_call ar;
  memset(&ar, 0, sizeof ar);
  ar.op = SG_NCCL_ALL_REDUCE;
  ar.comm = comm;
  ar.send = x;
  ar.recv = sum;
  ar.count = n;
  ar.type = SG_NCCL_UINT32;
  ar.reduce = SG_NCCL_SUM;
  sg_nccl_desc ard = {&ar, 1, "all-reduce"};
  CHECK(sg_graph_add_nccl(g, &ard, &work, 1, &reduce));
  sg_nccl_call xc[2];
  memset(xc, 0, sizeof xc);
  xc[0].op = SG_NCCL_SEND;
  xc[0].comm = comm;
  xc[0].send = x;
  xc[0].count = n;
  xc[0].type = SG_NCCL_UINT32;
  xc[0].peer = 1 - rank;
  xc[1] = xc[0];
  xc[1].op = SG_NCCL_RECV;
  xc[1].send = NULL;
  xc[1].recv = peer;
  sg_nccl_desc xd = {xc, 2, "exchange"};
  CHECK(sg_graph_add_nccl(g, &xd, &reduce, 1, &exchange));
  c = (sg_copy_desc){sum_out, sum, bytes, SG_COPY_DEVICE_TO_HOST, "download sum"};
  CHECK(sg_graph_add_copy(g, &c, &exchange, 1, &down_sum));
  c = (sg_copy_desc){peer_out, peer, bytes, SG_COPY_DEVICE_TO_HOST, "download peer"};
  CHECK(sg_graph_add_copy(g, &c, &exchange, 1, &down_peer));

  struct way {
    const char *name;
    sg_exec_mode mode;
    sg_graph_build build;
  } ways[] = {{"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
              {"graph (explicit)", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
              {"graph (capture)", SG_MODE_GRAPH, SG_BUILD_CAPTURE}};
  unsigned wrong = 0;
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = SG_BACKEND_CUDA;
    o.mode = ways[w].mode;
    o.build = ways[w].build;
    o.device = device;
    sg_exec *e;
    CHECK(sg_exec_create(g, &o, &e));
    for (int launch = 0; launch < 5; launch++) {
      memset(sum_out, 0xA5, bytes);
      memset(peer_out, 0xA5, bytes);
      CHECK(sg_exec_launch(e, NULL));
      CHECK(sg_exec_wait(e));
      for (size_t i = 0; i < n; i++) {
        uint32_t mine = worked(rank, i), theirs = worked(1 - rank, i);
        if (sum_out[i] != mine + theirs || peer_out[i] != theirs) {
          if (wrong++ < 5)
            fprintf(stderr, "rank %d: %s, launch %d, element %zu: sum %u (want %u), peer %u "
                            "(want %u)\n",
                    rank, ways[w].name, launch, i, sum_out[i], mine + theirs, peer_out[i], theirs);
          break;
        }
      }
    }
    CHECK(sg_exec_destroy(e));
    printf("rank %d: %s: 5 launches %s\n", rank, ways[w].name, wrong ? "WRONG" : "right");
  }
  CHECK(sg_graph_destroy(g));
  sg_mem_free(in);
  sg_mem_free(sum_out);
  sg_mem_free(peer_out);
  sg_mem_free(x);
  sg_mem_free(sum);
  sg_mem_free(peer);
  ncclCommDestroy(comm);
  return wrong ? 1 : 0;
}

int main(int argc, char **argv) {
  int rank = -1, device = -1;
  size_t n = (size_t)1 << 20;
  const char *id_path = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--rank")) rank = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--id-file")) id_path = argv[i + 1];
    else if (!strcmp(argv[i], "--device")) device = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--elements")) n = (size_t)atoll(argv[i + 1]);
    else {
      fprintf(stderr, "usage: %s [--rank R --id-file PATH] [--device D] [--elements N]\n", argv[0]);
      return 1;
    }
  }
  if (n == 0) n = 1;
  if (rank >= 0) {
    if (rank > 1 || !id_path) {
      fprintf(stderr, "--rank must be 0 or 1, with --id-file\n");
      return 1;
    }
    return run_rank(rank, device >= 0 ? device : rank, n, -1, id_path);
  }
  /* Fork first: CUDA must not be initialised in a process that forks. */
  int fds[2];
  if (pipe(fds)) {
    perror("pipe");
    return 1;
  }
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    close(fds[1]);
    int rc = run_rank(1, 1, n, fds[0], NULL);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  close(fds[0]);
  int rc0 = run_rank(0, 0, n, fds[1], NULL);
  close(fds[1]); /* rank 1 sees the end of the pipe if rank 0 gave up before writing */
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int rc1 = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (!WIFEXITED(status)) fprintf(stderr, "rank 1 ended by signal %d\n", WTERMSIG(status));
  if (rc0 == SKIP && rc1 == SKIP) return SKIP;
  if (rc0 || rc1) {
    fprintf(stderr, "two processes: rank 0 exit %d, rank 1 exit %d\n", rc0, rc1);
    return 1;
  }
  printf("two processes, one GPU each: every check passed\n");
  return 0;
}
