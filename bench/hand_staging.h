// hand_staging.h: staging_bench's hand-written baseline for a staged copy,
// what a strong engineer would write for one copy at a time in one process:
// a ring of pinned slots; copy threads that spin while a copy runs and claim
// its parts from one atomic counter (no lock, no sleep); the calling thread
// as the conductor, polling the device's `done` flag and helping with the
// parts; and on the device the program the library's memop protocol runs
// (wait for a slot's `ready`, DMA, write `done`). It knows nothing of
// graphs, launches queued ahead, faults or other copies sharing the
// threads: its rate is what the library's general engine should match at
// the same chunk size, ring depth and thread count.
//
// Also here: the DMA's own rate while host threads copy other memory, which
// is what bounds any staged copy on a host whose memory the two share.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "stream_copy.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hand {

inline void fail(const char *what, int code) {
  std::fprintf(stderr, "hand_staging: %s failed (%d)\n", what, code);
  std::exit(2);
}
#define HAND_CK(x)                                   \
  do {                                               \
    cudaError_t e_ = (x);                            \
    if (e_ != cudaSuccess) hand::fail(#x, (int)e_); \
  } while (0)

inline void pause_cpu() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

typedef CUresult (*wait_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
typedef CUresult (*write_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

inline void *driver_entry(const char *name) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  HAND_CK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess) fail(name, (int)found);
  return p;
}

class Stager {
 public:
  // `threads` copy threads (besides the caller), slots for up to
  // `ring_bytes` of ring.
  Stager(unsigned threads, size_t ring_bytes) : threads_(threads) {
    void *p = driver_entry("cuStreamWaitValue32");
    std::memcpy(&wait_, &p, sizeof p);
    p = driver_entry("cuStreamWriteValue32");
    std::memcpy(&write_, &p, sizeof p);
    HAND_CK(cudaHostAlloc(reinterpret_cast<void **>(&ring_), ring_bytes, cudaHostAllocPortable));
    std::memset(ring_, 0, ring_bytes);
    ring_bytes_ = ring_bytes;
    void *flags = nullptr;
    HAND_CK(cudaHostAlloc(&flags, 8192, cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(flags, 0, 8192);
    flags_ = static_cast<volatile uint32_t *>(flags);
    for (unsigned t = 0; t < threads_; t++) pool_.emplace_back([this] { thread_main(); });
  }
  ~Stager() {
    {
      std::lock_guard<std::mutex> l(lock_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto &t : pool_) t.join();
    cudaFreeHost(ring_);
    cudaFreeHost(const_cast<uint32_t *>(flags_));
  }

  // One staged copy of `bytes` between `host` (pageable) and `dev`, in
  // chunks of `chunk` through `ring` slots, each chunk split over the
  // threads; returns once the copy has landed.
  void copy(bool h2d, uint8_t *host, uint8_t *dev, size_t bytes, size_t chunk, unsigned ring,
            bool nontemporal, cudaStream_t stream) {
    if (chunk * ring > ring_bytes_ || ring > 64) fail("ring too large", 0);
    job_.h2d = h2d;
    job_.host = host;
    job_.bytes = bytes;
    job_.chunk = chunk;
    job_.ring = ring;
    job_.nontemporal = nontemporal;
    job_.parts = threads_ + 1;
    const uint32_t n = static_cast<uint32_t>((bytes + chunk - 1) / chunk);
    job_.chunks = n;
    gen_ += 1u << 16;
    job_.gen = gen_;
    finished_.reset(new std::atomic<unsigned>[n]);
    for (uint32_t k = 0; k < n; k++) finished_[k].store(0, std::memory_order_relaxed);
    claimed_.store(0, std::memory_order_relaxed);
    posted_.store(0, std::memory_order_relaxed);
    active_.store(true, std::memory_order_release);
    {
      std::lock_guard<std::mutex> l(lock_);
      epoch_++;
    }
    wake_.notify_all();
    const uint64_t parts = job_.parts;
    uint32_t k = 0;
    // Host->device, the first fills need no slot freed: they start while
    // the program is being queued.
    for (; h2d && k < std::min(n, ring); k++) posted_.fetch_add(parts, std::memory_order_release);
    enqueue_program(h2d, dev, stream);
    for (; k < n; k++) {
      if (h2d) wait_flag(done_flag(), gen_ + k - ring + 1);  // the slot's last DMA is done
      else wait_flag(done_flag(), gen_ + k + 1);              // chunk k has landed
      posted_.fetch_add(parts, std::memory_order_release);
    }
    while (claimed_.load(std::memory_order_relaxed) < posted_.load(std::memory_order_relaxed))
      help();
    for (uint32_t k = 0; k < n; k++)
      while (finished_[k].load(std::memory_order_acquire) < parts) pause_cpu();
    active_.store(false, std::memory_order_release);
    HAND_CK(cudaStreamSynchronize(stream));
  }

  // The device side alone: `bytes` between the ring's first slot and `dev`
  // in chunks of `chunk`, each behind its wait (already satisfied) and
  // followed by its flag write, as the program runs them when the host
  // side is never late. With `memops` false, the same chunks as plain
  // copies. Returns once they have run.
  void device_side(bool h2d, uint8_t *dev, size_t bytes, size_t chunk, bool memops,
                   cudaStream_t stream) {
    if (chunk > ring_bytes_) fail("chunk too large", 0);
    CUstream s = reinterpret_cast<CUstream>(stream);
    const uint32_t ready0 = *ready_flag(0), done = *done_flag();
    *ready_flag(0) = 0x7fffffffu;  // every wait below accepts it
    for (size_t off = 0, k = 0; off < bytes; off += chunk, k++) {
      const size_t len = std::min(chunk, bytes - off);
      CUresult r = CUDA_SUCCESS;
      if (memops) r = wait_(s, device_ptr(ready_flag(0)), 1, CU_STREAM_WAIT_VALUE_GEQ);
      if (r != CUDA_SUCCESS) fail("cuStreamWaitValue32", (int)r);
      HAND_CK(cudaMemcpyAsync(h2d ? dev + off : ring_, h2d ? ring_ : dev + off, len,
                              h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
      if (memops)
        r = write_(s, device_ptr(done_flag()), (cuuint32_t)k, CU_STREAM_WRITE_VALUE_DEFAULT);
      if (r != CUDA_SUCCESS) fail("cuStreamWriteValue32", (int)r);
    }
    HAND_CK(cudaStreamSynchronize(stream));
    *ready_flag(0) = ready0;  // copies' waits go on from the values they left
    *done_flag() = done;
  }

 private:
  struct Job {
    bool h2d, nontemporal;
    uint8_t *host;
    size_t bytes, chunk;
    unsigned ring, parts;
    uint32_t chunks, gen;
  };

  volatile uint32_t *ready_flag(unsigned slot) { return flags_ + 16 * slot; }
  volatile uint32_t *done_flag() { return flags_ + 16 * 64; }
  CUdeviceptr device_ptr(volatile uint32_t *f) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(f));
  }

  void enqueue_program(bool h2d, uint8_t *dev, cudaStream_t stream) {
    CUstream s = reinterpret_cast<CUstream>(stream);
    const Job &j = job_;
    for (uint32_t k = 0; k < j.chunks; k++) {
      const size_t off = (size_t)k * j.chunk, len = std::min(j.chunk, j.bytes - off);
      uint8_t *slot = ring_ + (size_t)(k % j.ring) * j.chunk;
      CUresult r = CUDA_SUCCESS;
      if (h2d)
        r = wait_(s, device_ptr(ready_flag(k % j.ring)), j.gen + k + 1, CU_STREAM_WAIT_VALUE_GEQ);
      else if (k >= j.ring)
        r = wait_(s, device_ptr(ready_flag(k % j.ring)), j.gen + k - j.ring + 1,
                  CU_STREAM_WAIT_VALUE_GEQ);
      if (r != CUDA_SUCCESS) fail("cuStreamWaitValue32", (int)r);
      HAND_CK(cudaMemcpyAsync(h2d ? dev + off : slot, h2d ? slot : dev + off, len,
                              h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
      r = write_(s, device_ptr(done_flag()), j.gen + k + 1, CU_STREAM_WRITE_VALUE_DEFAULT);
      if (r != CUDA_SUCCESS) fail("cuStreamWriteValue32", (int)r);
    }
  }

  void wait_flag(volatile uint32_t *f, uint32_t value) {
    while (static_cast<int32_t>(*f - value) < 0) help();
  }

  // Claims and copies one posted part if there is one.
  void help() {
    uint64_t p = claimed_.load(std::memory_order_relaxed);
    if (p >= posted_.load(std::memory_order_acquire) ||
        !claimed_.compare_exchange_weak(p, p + 1, std::memory_order_acq_rel)) {
      pause_cpu();
      return;
    }
    const Job &j = job_;
    const uint32_t k = static_cast<uint32_t>(p / j.parts), i = static_cast<uint32_t>(p % j.parts);
    const size_t off = (size_t)k * j.chunk, len = std::min(j.chunk, j.bytes - off);
    size_t part = (len / j.parts) & ~(size_t)4095;
    if (part == 0) part = len;
    const size_t begin = std::min(len, (size_t)i * part);
    const size_t end = i + 1 == j.parts ? len : std::min(len, begin + part);
    uint8_t *slot = ring_ + (size_t)(k % j.ring) * j.chunk;
    if (end > begin) {
      uint8_t *host = j.host + off + begin;
      if (j.h2d) bench::stream_copy(slot + begin, host, end - begin, j.nontemporal);
      else bench::stream_copy(host, slot + begin, end - begin, j.nontemporal);
    }
    if (finished_[k].fetch_add(1, std::memory_order_acq_rel) + 1 == j.parts) {
      // Every part's stores come before its count (non-temporal ones are
      // fenced, the locked add orders the rest): visible first.
      *ready_flag(k % j.ring) = j.gen + k + 1;
    }
  }

  void thread_main() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(lock_);
        wake_.wait(l, [&] { return stop_ || epoch_ != seen; });
        if (stop_) return;
        seen = epoch_;
      }
      while (active_.load(std::memory_order_acquire)) help();
    }
  }

  unsigned threads_;
  uint8_t *ring_ = nullptr;
  size_t ring_bytes_ = 0;
  volatile uint32_t *flags_ = nullptr;  // ready[s] at 16 * s, done at 16 * 64
  wait_fn wait_ = nullptr;
  write_fn write_ = nullptr;
  Job job_{};
  uint32_t gen_ = 0;
  std::unique_ptr<std::atomic<unsigned>[]> finished_;
  std::atomic<uint64_t> claimed_{0}, posted_{0};
  std::atomic<bool> active_{false};
  std::mutex lock_;
  std::condition_variable wake_;
  uint64_t epoch_ = 0;
  bool stop_ = false;
  std::vector<std::thread> pool_;
};

// The median rate (GB/s) of `reps` pinned DMAs of `bytes` between `pinned`
// and `dev` while `threads` host threads copy `load_src` into `load_dst`
// (pageable -> pinned, non-temporal stores) again and again.
inline double dma_rate_under_load(bool h2d, uint8_t *pinned, uint8_t *dev, size_t bytes,
                                  unsigned threads, const uint8_t *load_src, uint8_t *load_dst,
                                  size_t load_bytes, int reps, cudaStream_t stream,
                                  const std::function<double()> &now_s) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  const size_t part = (load_bytes / std::max(1u, threads)) & ~(size_t)4095;
  for (unsigned t = 0; t < threads; t++)
    load.emplace_back([&, t] {
      while (!stop.load(std::memory_order_relaxed))
        bench::stream_copy(load_dst + t * part, load_src + t * part, part, true);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::vector<double> gbps;
  for (int r = 0; r < reps; r++) {
    const double t0 = now_s();
    HAND_CK(cudaMemcpyAsync(h2d ? dev : pinned, h2d ? pinned : dev, bytes,
                            h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
    HAND_CK(cudaStreamSynchronize(stream));
    gbps.push_back(bytes / (now_s() - t0) / 1e9);
  }
  stop = true;
  for (auto &t : load) t.join();
  std::sort(gbps.begin(), gbps.end());
  return gbps[gbps.size() / 2];
}

}  // namespace hand
