// batch_serving: one executable serves every batch size. Requests arrive in
// batches of 1..256 rows, in random order; a two-layer model (integer
// mixing, so that the CPU reference is exact) runs on each batch. The graph
// is built and instantiated once: an `admit` kernel reads the batch header
// and writes the grid of the two layers (sg_graph_kernel_bind_grid), whose
// declared grid of 256 blocks is only the bound. No graph per size, no
// re-instantiation: stats.rebuilds stays 0. Every batch's output is checked
// against the CPU, and rows past the batch must stay untouched.
//
//   usage: sg_batch_serving [batches] [host|streams|graph]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "streamgraph/grid_device.h"
#include "streamgraph/streamgraph.h"

#define H 256u        // features per row: one block of H threads per row
#define MAX_ROWS 256u // the largest batch: the layers' declared grid
#define UNTOUCHED 0xdeadbeefu

// ---- kernels and their host twins ---------------------------------------

__host__ __device__ static unsigned mix(unsigned a, unsigned b, unsigned salt) {
  unsigned x = a * 0x9e3779b1u ^ (b + salt + (a << 6) + (a >> 2));
  x ^= x >> 15;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

// The batch header holds the number of rows; the grid is {rows, 1, 1}.
__host__ __device__ static void admit_run(const unsigned *header, unsigned *grid) {
  const unsigned rows = header[0];
  grid[0] = rows < MAX_ROWS ? rows : MAX_ROWS;
  grid[1] = 1;
  grid[2] = 1;
}

__global__ void admit_kernel(const unsigned *header, unsigned *grid) {
  if (threadIdx.x == 0 && blockIdx.x == 0) admit_run(header, grid);
}

static void admit_twin(const sg_kernel_launch *, void *const *args) {
  admit_run(*static_cast<const unsigned *const *>(args[0]),
            *static_cast<unsigned *const *>(args[1]));
}

// One output of a layer: row `r`, feature `c`.
__host__ __device__ static void layer_one(const unsigned *x, unsigned *y, const unsigned *w,
                                          unsigned shift, unsigned r, unsigned c) {
  const unsigned *row = x + (size_t)r * H;
  y[(size_t)r * H + c] = mix(row[c], row[(c * shift + 1) % H], w[c]);
}

// A layer over the live rows: blocks past the batch return at once (graph
// mode launches the bound), and the row count comes from sg_grid_live.
__global__ void layer_kernel(const unsigned *x, unsigned *y, const unsigned *w, unsigned shift,
                             sg_grid_ref g) {
  if (!sg_grid_has_block(g, blockIdx.x, blockIdx.y, blockIdx.z)) return;
  layer_one(x, y, w, shift, blockIdx.x, threadIdx.x);
}

static void layer_twin(const sg_kernel_launch *launch, void *const *args) {
  const unsigned *x = *static_cast<const unsigned *const *>(args[0]);
  unsigned *y = *static_cast<unsigned *const *>(args[1]);
  const unsigned *w = *static_cast<const unsigned *const *>(args[2]);
  const unsigned shift = *static_cast<const unsigned *>(args[3]);
  const sg_grid_ref g = *static_cast<const sg_grid_ref *>(args[4]);
  for (unsigned r = 0; r < launch->grid.x; r++)
    if (sg_grid_has_block(g, r, 0, 0))
      for (unsigned c = 0; c < launch->block.x; c++) layer_one(x, y, w, shift, r, c);
}

// ---- the program ----------------------------------------------------------

#define CHECK(call)                                                                 \
  do {                                                                              \
    sg_status st_ = (call);                                                         \
    if (st_ != SG_OK) {                                                             \
      std::fprintf(stderr, "%s: %s\n", sg_status_name(st_), sg_last_error());       \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

struct Buffers {
  unsigned *header, *grid, *in, *mid, *out, *w1, *w2;
};

// Adds a layer y = f(x) bound to the grid `admit` writes.
static sg_status add_layer(sg_graph *g, const Buffers &b, const unsigned *x, unsigned *y,
                           const unsigned *w, unsigned shift, const sg_node *dep,
                           const char *name, sg_node *out) {
  sg_grid_ref placeholder = {nullptr, 0, 0, 0, 0};  // each launch gets its own
  void *args[5] = {&x, &y, &w, &shift, &placeholder};
  size_t sizes[5] = {sizeof x, sizeof y, sizeof w, sizeof shift, sizeof placeholder};
  sg_kernel_desc k = {};
  k.func = (const void *)layer_kernel;
  k.host_twin = layer_twin;
  k.grid = {MAX_ROWS, 1, 1};  // the bound: the largest batch
  k.block = {H, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 5;
  k.name = name;
  sg_status st = sg_graph_add_kernel(g, &k, dep, 1, out);
  return st ? st : sg_graph_kernel_bind_grid(g, *out, 4, b.grid);
}

int main(int argc, char **argv) {
  const unsigned batches = argc > 1 ? (unsigned)std::strtoul(argv[1], nullptr, 10) : 512u;
  const char *way = argc > 2 ? argv[2] : (sg_cuda_device_count() > 0 ? "graph" : "host");
  const bool on_gpu = std::strcmp(way, "host") != 0;

  // Memory both the GPU and the host twins (and the checks below) can use.
  const size_t rows_words = (size_t)MAX_ROWS * H;
  const size_t words = 8 + 3 * rows_words + 2 * H;
  void *mem = nullptr;
  if (on_gpu ? cudaMallocManaged(&mem, words * sizeof(unsigned)) != cudaSuccess
             : !(mem = std::malloc(words * sizeof(unsigned))))
    return std::fprintf(stderr, "cannot allocate %zu bytes\n", words * sizeof(unsigned)), 1;
  unsigned *p = static_cast<unsigned *>(mem);
  Buffers b = {p, p + 4, p + 8, p + 8 + rows_words, p + 8 + 2 * rows_words,
               p + 8 + 3 * rows_words, p + 8 + 3 * rows_words + H};
  const uint32_t seed = static_cast<uint32_t>(std::random_device{}());
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (unsigned c = 0; c < H; c++) b.w1[c] = rng(), b.w2[c] = rng();

  // admit -> layer 1 -> layer 2, built and instantiated once.
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  CHECK(sg_graph_set_name(g, "batch-serving"));
  void *admit_args[2] = {&b.header, &b.grid};
  size_t admit_sizes[2] = {sizeof b.header, sizeof b.grid};
  sg_kernel_desc admit = {};
  admit.func = (const void *)admit_kernel;
  admit.host_twin = admit_twin;
  admit.grid = {1, 1, 1};
  admit.block = {32, 1, 1};
  admit.args = admit_args;
  admit.arg_sizes = admit_sizes;
  admit.arg_count = 2;
  admit.name = "admit";
  sg_node a, l1, l2;
  CHECK(sg_graph_add_kernel(g, &admit, nullptr, 0, &a));
  CHECK(add_layer(g, b, b.in, b.mid, b.w1, 3, &a, "layer 1", &l1));
  CHECK(add_layer(g, b, b.mid, b.out, b.w2, 7, &l1, "layer 2", &l2));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = on_gpu ? SG_BACKEND_CUDA : SG_BACKEND_HOST;
  o.mode = std::strcmp(way, "streams") == 0 ? SG_MODE_STREAMS : SG_MODE_GRAPH;
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  CHECK(sg_graph_destroy(g));

  std::vector<unsigned> mid(rows_words), want(H);
  unsigned wrong = 0, smallest = MAX_ROWS, largest = 0;
  for (unsigned k = 0; k < batches; k++) {
    const unsigned rows = 1 + rng() % MAX_ROWS;
    smallest = rows < smallest ? rows : smallest;
    largest = rows > largest ? rows : largest;
    // The batch: its rows, its header; the outputs marked to see what is written.
    for (size_t i = 0; i < (size_t)rows * H; i++) b.in[i] = rng();
    for (size_t i = 0; i < rows_words; i++) b.out[i] = UNTOUCHED;
    b.header[0] = rows;
    CHECK(sg_exec_launch(e, nullptr));
    CHECK(sg_exec_wait(e));
    if (on_gpu && cudaDeviceSynchronize() != cudaSuccess) return 1;
    for (unsigned r = 0; r < rows; r++)
      for (unsigned c = 0; c < H; c++) layer_one(b.in, mid.data(), b.w1, 3, r, c);
    for (unsigned r = 0; r < MAX_ROWS; r++) {
      if (r < rows)
        for (unsigned c = 0; c < H; c++) {
          const unsigned *row = mid.data() + (size_t)r * H;
          want[c] = mix(row[c], row[(c * 7 + 1) % H], b.w2[c]);  // layer_one, layer 2
        }
      for (unsigned c = 0; c < H; c++) {
        const unsigned expect = r < rows ? want[c] : UNTOUCHED;
        if (b.out[(size_t)r * H + c] != expect && wrong++ < 5)
          std::fprintf(stderr, "batch %u (%u rows): out[%u][%u] = %#x, expected %#x\n", k, rows,
                       r, c, b.out[(size_t)r * H + c], expect);
      }
    }
  }
  sg_exec_stats stats;
  CHECK(sg_exec_get_stats(e, &stats));
  std::printf("%s: served %u batches of %u..%u rows with one executable: %llu launches, "
              "%llu rebuilds, %s\n", way, batches, smallest, largest,
              (unsigned long long)stats.launches, (unsigned long long)stats.rebuilds,
              wrong ? "outputs DIFFER from the CPU reference" : "every output matches the CPU "
              "reference");
  CHECK(sg_exec_destroy(e));
  if (on_gpu) cudaFree(mem); else std::free(mem);
  return wrong || stats.rebuilds ? 1 : 0;
}
