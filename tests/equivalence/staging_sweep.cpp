// The staging sweep's watchdog and the conductor's state (staging_sweep.h).
#include "staging_sweep.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

extern "C" {
#include "staging/pool.h"
#include "staging/stage_conductor.h"
#include "staging/stage_flags.h"
#include "staging/stage_run.h"
}

namespace sgsweep {

namespace {

// The conductor's lock, or false if it stays held (a conductor stuck with
// its lock held is itself what the report must say).
bool lock_for_a_while(pthread_mutex_t *m) {
  for (int i = 0; i < 2000; i++) {
    if (pthread_mutex_trylock(m) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace

std::string conductor_state(sg_pinned_pool *pool) {
  sg__conductor *c = sg__pool_conductor(pool);
  std::ostringstream out;
  if (!lock_for_a_while(&c->lock)) return "conductor: its lock stays held (the conductor is stuck)";
  out << "conductor: running " << c->running << ", freeing " << c->freeing << "\n";
  unsigned listed = 0;
  for (sg__stage_run *r = c->head; r; r = r->act.next, listed++) {
    const sg__stage_activation &a = r->act;
    out << "  run node #" << r->node << " " << (r->dir == SG__STAGE_H2D ? "H2D" : "D2H")
        << (r->persistent ? " persistent" : " transient") << " bytes " << r->g.bytes
        << " chunk " << r->g.chunk << " chunks " << r->g.chunks << " ring " << r->g.ring
        << " parts " << r->g.parts << " | armed " << a.armed << " started " << a.started
        << " issued " << a.issued << " released " << a.released << " end " << a.end;
    if (r->flags) {
      out << " | go " << sg__flag_load(&r->flags->go) << " done "
          << sg__flag_load(&r->flags->done) << " ready";
      for (unsigned s = 0; s < r->g.ring; s++) out << " " << sg__flag_load(&r->flags->ready[s]);
    }
    out << "\n";
  }
  out << "  " << listed << " armed run(s)";
  pthread_mutex_unlock(&c->lock);
  return out.str();
}

void release_all(sg_pinned_pool *pool) {
  sg__conductor *c = sg__pool_conductor(pool);
  const bool locked = lock_for_a_while(&c->lock);
  for (sg__stage_run *r = c->head; r; r = r->act.next)
    if (r->flags)
      for (unsigned s = 0; s < r->g.ring; s++) sg__flag_raise(&r->flags->ready[s], SG__FLAG_RELEASE);
  if (locked) pthread_mutex_unlock(&c->lock);
}

std::string run_watched(const sgeq::Config &cfg, uint64_t seed, const sgeq::Limits &limits,
                        double seconds) {
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  std::string hang;
  // Not sgtest::Watchdog: after releasing it must also be able to give up
  // on a hang that releasing does not end (a lock held forever, say).
  std::thread watch([&] {
    std::unique_lock<std::mutex> l(m);
    if (cv.wait_for(l, std::chrono::duration<double>(seconds), [&] { return finished; })) return;
    l.unlock();
    std::string state = conductor_state(cfg.pool);
    std::fprintf(stderr, "staging sweep: %s seed %llu did not finish within %.0f s\n%s\n",
                 sgeq::describe(cfg).c_str(), (unsigned long long)seed, seconds, state.c_str());
    release_all(cfg.pool);
    l.lock();
    hang = "hung (released by the watchdog): " + state;
    if (cv.wait_for(l, std::chrono::seconds(20), [&] { return finished; })) return;
    std::fprintf(stderr, "staging sweep: still hung 20 s after every armed copy was released\n%s\n",
                 conductor_state(cfg.pool).c_str());
    std::fflush(stderr);
    std::_Exit(3);
  });
  sgeq::SeededChooser choose(seed);
  std::string error = sgeq::run_scenario(cfg, choose, limits);
  {
    std::lock_guard<std::mutex> l(m);
    finished = true;
  }
  cv.notify_all();
  watch.join();
  if (!hang.empty()) return hang + (error.empty() ? "" : "\nthen: " + error);
  return error;
}

}  // namespace sgsweep
