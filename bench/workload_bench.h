// Shared by the workload benchmarks (inference_bench, signal_bench): timing
// in interleaved rounds, the physical bounds measured in the same run (PCIe
// both ways and at once, the host's pageable -> pinned copy rate), a pool of
// host threads that the hand-written baselines copy with, and launching a
// ready-made kernel on a stream by hand.
#ifndef SG_WORKLOAD_BENCH_H
#define SG_WORKLOAD_BENCH_H

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench_check.h"
#include "streamgraph/kernels.h"

namespace wb {

inline double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median seconds of each of `fns`, run in `reps` interleaved rounds (one run
// of each per round, after one untimed warm-up each), so that drift in the
// machine's state hits them alike.
inline std::vector<double> interleaved_medians(int reps,
                                               const std::vector<std::function<void()>> &fns) {
  for (const auto &f : fns) f();
  std::vector<std::vector<double>> t(fns.size());
  for (int r = 0; r < reps; r++)
    for (size_t i = 0; i < fns.size(); i++) {
      double t0 = now_s();
      fns[i]();
      t[i].push_back(now_s() - t0);
    }
  std::vector<double> out;
  for (auto &v : t) out.push_back(median(v));
  return out;
}

// The number of host threads the library's staging copies with by default
// (three quarters of the CPUs, at most 12): the hand-written baselines get
// as many, so the two move pageable memory with the same CPU power.
inline unsigned staging_like_threads() {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned t = cpus > 0 ? static_cast<unsigned>(cpus) * 3 / 4 : 1;
  return std::max(1u, std::min(12u, t));
}

// A pool of threads that split one memcpy between them (the calling thread
// takes a share too), as a strong engineer's hand-written staging would.
class ParallelCopier {
 public:
  explicit ParallelCopier(unsigned threads) : threads_(std::max(1u, threads)) {
    for (unsigned i = 1; i < threads_; i++) workers_.emplace_back([this, i] { work(i); });
  }
  ~ParallelCopier() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto &w : workers_) w.join();
  }
  ParallelCopier(const ParallelCopier &) = delete;
  ParallelCopier &operator=(const ParallelCopier &) = delete;
  unsigned threads() const { return threads_; }

  void copy(void *dst, const void *src, size_t bytes) {
    if (bytes < (size_t(1) << 20) || threads_ == 1) {
      std::memcpy(dst, src, bytes);
      return;
    }
    {
      std::lock_guard<std::mutex> g(m_);
      dst_ = static_cast<char *>(dst);
      src_ = static_cast<const char *>(src);
      bytes_ = bytes;
      pending_ = threads_ - 1;
      generation_++;
    }
    cv_.notify_all();
    part(0);
    std::unique_lock<std::mutex> g(m_);
    done_.wait(g, [this] { return pending_ == 0; });
  }

 private:
  void part(unsigned i) {
    size_t per = (bytes_ / threads_ + 63) & ~size_t(63);
    size_t begin = std::min(bytes_, per * i), end = std::min(bytes_, begin + per);
    if (i + 1 == threads_) end = bytes_;
    if (end > begin) std::memcpy(dst_ + begin, src_ + begin, end - begin);
  }
  void work(unsigned i) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      part(i);
      std::lock_guard<std::mutex> g(m_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
  unsigned threads_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  unsigned pending_ = 0;
  char *dst_ = nullptr;
  const char *src_ = nullptr;
  size_t bytes_ = 0;
};

// A ready-made kernel's call, launched by hand on a stream.
inline void launch(const sg_kernel_call &call, cudaStream_t s) {
  const sg_kernel_desc &d = call.desc;
  CK(cudaLaunchKernel(d.func, dim3(d.grid.x, d.grid.y, d.grid.z),
                      dim3(d.block.x, d.block.y, d.block.z), const_cast<void **>(d.args),
                      d.shared_bytes, s));
}

// PCIe in this run: `count` copies of `bytes` between pinned host memory and
// the device, each direction alone and both at once (two streams), GB/s.
struct Link {
  double h2d = 0, d2h = 0, duplex = 0;
};

inline Link measure_link(size_t bytes, int count, int reps) {
  void *host_in, *host_out, *dev_in, *dev_out;
  CK(cudaHostAlloc(&host_in, bytes, cudaHostAllocDefault));
  CK(cudaHostAlloc(&host_out, bytes, cudaHostAllocDefault));
  CK(cudaMalloc(&dev_in, bytes));
  CK(cudaMalloc(&dev_out, bytes));
  std::memset(host_in, 1, bytes);
  cudaStream_t a, b;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  auto up = [&] {
    for (int i = 0; i < count; i++)
      CK(cudaMemcpyAsync(dev_in, host_in, bytes, cudaMemcpyHostToDevice, a));
    CK(cudaStreamSynchronize(a));
  };
  auto down = [&] {
    for (int i = 0; i < count; i++)
      CK(cudaMemcpyAsync(host_out, dev_out, bytes, cudaMemcpyDeviceToHost, b));
    CK(cudaStreamSynchronize(b));
  };
  auto both = [&] {
    for (int i = 0; i < count; i++) {
      CK(cudaMemcpyAsync(dev_in, host_in, bytes, cudaMemcpyHostToDevice, a));
      CK(cudaMemcpyAsync(host_out, dev_out, bytes, cudaMemcpyDeviceToHost, b));
    }
    CK(cudaStreamSynchronize(a));
    CK(cudaStreamSynchronize(b));
  };
  std::vector<double> t = interleaved_medians(reps, {up, down, both});
  Link l;
  l.h2d = double(bytes) * count / t[0] * 1e-9;
  l.d2h = double(bytes) * count / t[1] * 1e-9;
  l.duplex = 2.0 * double(bytes) * count / t[2] * 1e-9;
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  CK(cudaFreeHost(host_in));
  CK(cudaFreeHost(host_out));
  CK(cudaFree(dev_in));
  CK(cudaFree(dev_out));
  return l;
}

// The host's pageable -> pinned copy rate, GB/s, measured honestly: every
// copy reads a window of a buffer far larger than any CPU cache that no
// copy read before it in this measurement (cold, as fresh input arriving in
// memory is), and the rate is the best of 4, 8, 12 and 16 threads (the
// thread count this machine does best with, not the copier's). What moving
// pageable data costs the CPU, whoever stages it. *threads_out: the count
// that gave it.
inline double measure_host_copy(size_t bytes, int reps, unsigned *threads_out = nullptr) {
  const size_t span = std::max<size_t>(size_t(1) << 30, bytes * size_t(reps + 1) * 4);
  std::vector<char> src(span, 3);  // every page touched
  void *pinned;
  CK(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
  double best = 0;
  unsigned best_threads = 0;
  size_t next = 0;
  for (unsigned threads : {4u, 8u, 12u, 16u}) {
    ParallelCopier copier(threads);
    copier.copy(pinned, src.data(), bytes);  // untimed: starts the threads
    std::vector<double> rates;
    for (int r = 0; r < reps; r++) {
      next += bytes;
      if (next + bytes > span) next = bytes;  // window 0 was the warm-up's
      const auto t0 = std::chrono::steady_clock::now();
      copier.copy(pinned, src.data() + next, bytes);
      const std::chrono::duration<double> t = std::chrono::steady_clock::now() - t0;
      rates.push_back(double(bytes) / t.count() * 1e-9);
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    if (median > best) {
      best = median;
      best_threads = threads;
    }
  }
  CK(cudaFreeHost(pinned));
  if (threads_out) *threads_out = best_threads;
  return best;
}

inline std::string json_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace wb

#endif
