// The machine's host-copy ceiling for staging, measured in the staging
// bench's own run: pageable <-> pinned copies (the host side of a staged
// copy) with 1 to 16 threads, plain memcpy and non-temporal stores, the
// buffers cold (flushed from the CPU caches before each copy, untimed) and
// warm, alone and while the GPU reads (host->device) or writes
// (device->host) another pinned buffer at full rate, as the DMA of a staged
// copy does. The best rate over thread counts and store kinds, for each
// size, direction, cache state and link state, is the ceiling a staged copy
// is judged against: it cannot move data faster than its host copies.
#ifndef SG_BENCH_HOST_COPY_CEILING_H
#define SG_BENCH_HOST_COPY_CEILING_H

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_check.h"
#include "stream_copy.h"

namespace ceiling {

// From this size on a copy streams through the caches whatever was there.
constexpr size_t kNoCacheBytes = size_t(512) << 20;

// A fixed set of threads that copy one range together, each its share.
class CopyTeam {
 public:
  explicit CopyTeam(unsigned threads) {
    for (unsigned i = 0; i < threads; i++) pool_.emplace_back([this, i] { loop(i); });
  }
  ~CopyTeam() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    go_.notify_all();
    for (auto &t : pool_) t.join();
  }
  CopyTeam(const CopyTeam &) = delete;
  CopyTeam &operator=(const CopyTeam &) = delete;

  // Copies [src, src + n) to dst on every thread of the team; returns once
  // all are done.
  void copy(void *dst, const void *src, size_t n, bool nontemporal) {
    std::unique_lock<std::mutex> l(m_);
    dst_ = static_cast<uint8_t *>(dst);
    src_ = static_cast<const uint8_t *>(src);
    n_ = n;
    nontemporal_ = nontemporal;
    left_ = static_cast<unsigned>(pool_.size());
    generation_++;
    go_.notify_all();
    done_.wait(l, [this] { return left_ == 0; });
  }

 private:
  void loop(unsigned index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      go_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      // Shares of whole 64-byte lines; the last takes the rest.
      const size_t threads = pool_.size(), lines = n_ / 64;
      const size_t first = lines * index / threads * 64;
      const size_t last = index + 1 == threads ? n_ : lines * (index + 1) / threads * 64;
      uint8_t *dst = dst_ + first;
      const uint8_t *src = src_ + first;
      const bool nt = nontemporal_;
      l.unlock();
      bench::stream_copy(dst, src, last - first, nt);
      l.lock();
      if (--left_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> pool_;
  std::mutex m_;
  std::condition_variable go_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false, nontemporal_ = false;
  uint8_t *dst_ = nullptr;
  const uint8_t *src_ = nullptr;
  size_t n_ = 0;
  unsigned left_ = 0;
};

// Keeps the link busy in one direction while it lives: back-to-back
// copies between `pinned` and `dev` (`bytes` each) on a stream of its own.
class BusyLink {
 public:
  BusyLink(bool to_device, void *pinned, void *dev, size_t bytes)
      : thread_([=] {
          cudaStream_t s;
          CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
          while (!stop_.load()) {
            CK(cudaMemcpyAsync(to_device ? dev : pinned, to_device ? pinned : dev, bytes,
                               to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
          }
          CK(cudaStreamDestroy(s));
        }) {}
  ~BusyLink() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct Point {
  size_t bytes;
  bool fill;        // pageable -> pinned (the host side of host->device)
  bool cold, busy;  // caches flushed before each copy; the link busy meanwhile
  unsigned threads;
  bool nontemporal;
  double gbps;
};

struct Ceiling {
  std::vector<Point> points;
  // The best rate over thread counts and store kinds, or 0 if none.
  double best(size_t bytes, bool fill, bool cold, bool busy) const {
    double b = 0;
    for (const Point &p : points)
      if (p.bytes == bytes && p.fill == fill && p.cold == cold && p.busy == busy)
        b = std::max(b, p.gbps);
    return b;
  }
  const Point *best_point(size_t bytes, bool fill, bool cold, bool busy) const {
    const Point *b = nullptr;
    for (const Point &p : points)
      if (p.bytes == bytes && p.fill == fill && p.cold == cold && p.busy == busy &&
          (!b || p.gbps > b->gbps))
        b = &p;
    return b;
  }
};

// Measures every point for `sizes` (each at most the buffers' size): host
// copies between `pageable` and `slot` (pinned), with `other` (pinned) and
// `dev` the busy link's ends. `flush` evicts a range from the CPU caches;
// `rate` times one run of a function over `rounds` interleaved rounds.
inline Ceiling measure(const std::vector<size_t> &sizes, uint8_t *pageable, uint8_t *slot,
                       uint8_t *other, uint8_t *dev, size_t busy_bytes, int rounds,
                       const std::function<void(const void *, size_t)> &flush,
                       const std::function<double()> &now) {
  Ceiling out;
  const unsigned thread_counts[] = {1, 4, 8, 12, 16};
  for (bool busy : {false, true})
    for (bool fill : {true, false}) {
      std::unique_ptr<BusyLink> link;
      if (busy) link.reset(new BusyLink(fill, other, dev, busy_bytes));
      for (unsigned threads : thread_counts) {
        CopyTeam team(threads);
        for (size_t bytes : sizes)
          for (bool cold : {false, true})
            for (bool nt : {false, true}) {
              // A copy this large cannot stay in any CPU cache: it is cold
              // already, and flushing it would only cost time.
              if (cold && bytes >= kNoCacheBytes) {
                Point p = out.points[out.points.size() - 2];  // the warm one, same stores
                p.cold = true;
                out.points.push_back(p);
                continue;
              }
              void *dst = fill ? static_cast<void *>(slot) : static_cast<void *>(pageable);
              const void *src = fill ? static_cast<const void *>(pageable)
                                     : static_cast<const void *>(slot);
              team.copy(dst, src, bytes, nt);  // untimed warm-up
              std::vector<double> got;
              for (int r = 0; r < rounds; r++) {
                if (cold) {
                  flush(src, bytes);
                  flush(dst, bytes);
                }
                const double t0 = now();
                team.copy(dst, src, bytes, nt);
                got.push_back(bytes / (now() - t0) / 1e9);
              }
              std::sort(got.begin(), got.end());
              out.points.push_back({bytes, fill, cold, busy, threads, nt, got[got.size() / 2]});
            }
      }
    }
  return out;
}

}  // namespace ceiling

#endif
