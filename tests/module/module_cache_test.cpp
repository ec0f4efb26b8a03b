// The compile cache without a compiler: keys, the folder, entries on disk
// (round trip, damage, collisions) and writers racing on one entry.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"

extern "C" {
#include "module/module_cache.h"
}

namespace {

// A fresh folder under the test's temporary directory, removed afterwards.
struct TempDir {
  std::string path;
  TempDir() {
    const char *base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/sg_cache_test_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    path = mkdtemp(buf.data());
  }
  ~TempDir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

struct Request {
  std::string source = "extern \"C\" __global__ void k() {}";
  std::string name = "k.cu";
  std::vector<std::string> options = {"-std=c++17", "-DX=1"};
  std::vector<std::string> exprs = {};
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::string arch_option = "--gpu-architecture=sm_90";
  bool has_arch_option = true;
  // Storage for the pointers of the request.
  std::vector<const char *> opt_ptrs, expr_ptrs;
  std::vector<sg_module_header> hdrs;

  sg__compile_request make() {
    opt_ptrs.clear();
    for (auto &o : options) opt_ptrs.push_back(o.c_str());
    expr_ptrs.clear();
    for (auto &e : exprs) expr_ptrs.push_back(e.c_str());
    hdrs.clear();
    for (auto &h : headers) hdrs.push_back({h.first.c_str(), h.second.c_str()});
    return {source.c_str(), name.c_str(), opt_ptrs.data(), (unsigned)opt_ptrs.size(),
            has_arch_option ? arch_option.c_str() : nullptr, expr_ptrs.data(),
            (unsigned)expr_ptrs.size(), hdrs.data(), (unsigned)hdrs.size()};
  }
};

std::string key_of(Request r, const char *arch = "sm_90", int major = 13, int minor = 0) {
  sg__compile_request req = r.make();
  sg__cache_key key;
  EXPECT_EQ(sg__cache_key_make(&req, arch, major, minor, &key, "test"), SG_OK);
  std::string bytes(reinterpret_cast<char *>(key.bytes), key.size);
  char hash[40];
  snprintf(hash, sizeof hash, "%016llx%016llx", (unsigned long long)key.hash[0],
           (unsigned long long)key.hash[1]);
  sg__cache_key_free(&key);
  return std::string(hash) + "|" + bytes;
}

TEST(ModuleCacheKey, EveryInputChangesTheKey) {
  sgtest::LeakCheck leaks;
  Request base;
  std::string k0 = key_of(base);
  EXPECT_EQ(k0, key_of(base)) << "the key is not a function of its inputs";
  std::vector<std::pair<std::string, std::string>> variants;
  auto differs = [&](const char *what, const std::string &k) {
    EXPECT_NE(k.substr(0, 32), k0.substr(0, 32)) << what << ": same hash";
    EXPECT_NE(k, k0) << what;
    for (auto &v : variants) EXPECT_NE(v.second, k) << what << " collides with " << v.first;
    variants.emplace_back(what, k);
  };
  Request r = base;
  r.source += " ";
  differs("source", key_of(r));
  r = base;
  r.name = "l.cu";
  differs("program name", key_of(r));
  r = base;
  r.options = {"-DX=1", "-std=c++17"};
  differs("option order", key_of(r));
  r = base;
  r.options = {"-std=c++17", "-DX=", "1"};
  differs("option split differently", key_of(r));
  r = base;
  r.options = {};
  differs("no options", key_of(r));
  r = base;
  r.exprs = {"k<int>"};
  differs("a name expression", key_of(r));
  r = base;
  r.headers = {{"h.cuh", "#define Y 2"}};
  differs("a header", key_of(r));
  r = base;
  r.headers = {{"h.cuh", "#define Y 3"}};
  differs("a header's source", key_of(r));
  r = base;
  r.has_arch_option = false;
  differs("no arch option", key_of(r));
  differs("architecture", key_of(base, "sm_100"));
  differs("NVRTC major", key_of(base, "sm_90", 12, 0));
  differs("NVRTC minor", key_of(base, "sm_90", 13, 1));
}

sg__compiled make_entry(const std::string &image, const std::string &log,
                        std::vector<std::string> lowered, bool ptx) {
  sg__compiled c = {};
  c.image_bytes = image.size() + (ptx ? 1 : 0);
  c.image = static_cast<unsigned char *>(malloc(c.image_bytes));
  memcpy(c.image, image.c_str(), c.image_bytes);
  c.is_ptx = ptx;
  c.log = strdup(log.c_str());
  c.lowered_count = (unsigned)lowered.size();
  c.lowered = static_cast<char **>(calloc(lowered.size() + 1, sizeof(char *)));
  for (size_t i = 0; i < lowered.size(); i++) c.lowered[i] = strdup(lowered[i].c_str());
  return c;
}

void free_entry(sg__compiled *c) {  // made with malloc above, not the library's wrapper
  free(c->image);
  free(c->log);
  for (unsigned i = 0; i < c->lowered_count; i++) free(c->lowered[i]);
  free(c->lowered);
}

struct Key {
  sg__cache_key key = {};
  explicit Key(Request r = Request()) {
    sg__compile_request req = r.make();
    EXPECT_EQ(sg__cache_key_make(&req, "sm_90", 13, 0, &key, "test"), SG_OK);
  }
  ~Key() { sg__cache_key_free(&key); }
};

std::string entry_path(const std::string &dir, const sg__cache_key &key) {
  char path[4096];
  EXPECT_EQ(sg__cache_entry_path(dir.c_str(), &key, path, sizeof path), 0);
  return path;
}

TEST(ModuleCacheEntry, RoundTripKeepsImageLogAndNames) {
  sgtest::LeakCheck leaks;
  TempDir dir;
  Request r;
  r.exprs = {"k<int>", "ns::f"};
  Key key(r);
  sg__compiled out;
  EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 2, &out), 0) << "an empty cache hit";
  sg__compiled in = make_entry("\x7f" "ELF binary \x01\x02", "warning: x", {"_Z1kIiEvv", "_ZN2ns1fEv"},
                               false);
  ASSERT_EQ(sg__cache_store(dir.path.c_str(), &key.key, &in), 0);
  ASSERT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 2, &out), 1);
  EXPECT_EQ(std::string(reinterpret_cast<char *>(out.image), out.image_bytes),
            std::string(reinterpret_cast<char *>(in.image), in.image_bytes));
  EXPECT_EQ(out.is_ptx, 0);
  EXPECT_STREQ(out.log, "warning: x");
  ASSERT_EQ(out.lowered_count, 2u);
  EXPECT_STREQ(out.lowered[0], "_Z1kIiEvv");
  EXPECT_STREQ(out.lowered[1], "_ZN2ns1fEv");
  sg__compiled_free(&out);
  // Asking for another number of names is a different request: no hit.
  EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 1, &out), -1);
  free_entry(&in);

  sg__compiled ptx = make_entry(".version 8.0\n", "", {}, true);
  Key other;
  ASSERT_EQ(sg__cache_store(dir.path.c_str(), &other.key, &ptx), 0);
  ASSERT_EQ(sg__cache_load(dir.path.c_str(), &other.key, 0, &out), 1);
  EXPECT_EQ(out.is_ptx, 1);
  EXPECT_EQ(out.image[out.image_bytes - 1], '\0');
  EXPECT_STREQ(out.log, "");
  sg__compiled_free(&out);
  free_entry(&ptx);
}

TEST(ModuleCacheEntry, DamagedOrForeignEntriesDoNotVerify) {
  sgtest::LeakCheck leaks;
  TempDir dir;
  Key key;
  sg__compiled in = make_entry("\x7f" "ELF some code", "log", {}, false);
  ASSERT_EQ(sg__cache_store(dir.path.c_str(), &key.key, &in), 0);
  std::string path = entry_path(dir.path, key.key);
  std::string whole;
  {
    std::ifstream f(path, std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(f), {});
  }
  sg__compiled out;
  for (size_t at : {size_t(0), size_t(9), whole.size() / 2, whole.size() - 12, whole.size() - 1}) {
    std::string bad = whole;
    bad[at] ^= 0x40;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 0, &out), -1) << "byte " << at;
  }
  for (size_t len : {size_t(0), size_t(7), whole.size() - 1}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << whole.substr(0, len);
    EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 0, &out), -1) << "cut at " << len;
  }
  // Another key's entry under this key's name (a hash collision) is no hit.
  Request r;
  r.source = "something else";
  Key other(r);
  ASSERT_EQ(sg__cache_store(dir.path.c_str(), &other.key, &in), 0);
  ASSERT_EQ(rename(entry_path(dir.path, other.key).c_str(), path.c_str()), 0);
  EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 0, &out), -1);
  // A good entry written again replaces the damaged one.
  ASSERT_EQ(sg__cache_store(dir.path.c_str(), &key.key, &in), 0);
  EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 0, &out), 1);
  sg__compiled_free(&out);
  free_entry(&in);
}

// Writers racing on one entry (each with its own content) while readers
// load it: a reader sees no entry or a whole one, never a torn one, and no
// temporary file is left behind.
void race(const std::string &dir, const sg__cache_key &key, int writers, int rounds,
          std::atomic<int> *torn, std::atomic<int> *hits) {
  std::vector<std::thread> threads;
  std::atomic<int> writers_left{writers};
  for (int w = 0; w < writers; w++)
    threads.emplace_back([&, w] {
      for (int i = 0; i < rounds; i++) {
        std::string image = "\x7f" "ELF" + std::string(1000 + 37 * w + i, char('a' + w));
        sg__compiled c = make_entry(image, "writer " + std::to_string(w), {}, false);
        EXPECT_EQ(sg__cache_store(dir.c_str(), &key, &c), 0);
        free_entry(&c);
      }
      writers_left--;
    });
  // Readers go on until every writer is done, so each also reads once after
  // an entry surely exists, however the threads are scheduled (a slow
  // sanitizer build may run the readers before any writer has stored).
  for (int rd = 0; rd < 2; rd++)
    threads.emplace_back([&] {
      for (int i = 0;; i++) {
        const bool writers_done = writers_left.load() == 0;  // before this read
        sg__compiled out;
        int rc = sg__cache_load(dir.c_str(), &key, 0, &out);
        if (rc < 0) (*torn)++;
        if (rc == 1) {
          (*hits)++;
          // The content is one writer's whole image.
          char w = char(out.image[4]);
          for (size_t j = 4; j < out.image_bytes; j++)
            if (char(out.image[j]) != w) {
              (*torn)++;
              break;
            }
          sg__compiled_free(&out);
        }
        if (writers_done && i + 1 >= rounds * 2) break;
      }
    });
  for (auto &t : threads) t.join();
}

TEST(ModuleCacheEntry, ConcurrentWritersNeverTearAnEntry) {
  TempDir dir;
  Key key;
  std::atomic<int> torn{0}, hits{0};
  race(dir.path, key.key, 4, 40, &torn, &hits);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(hits.load(), 0);
  std::string listing;
  FILE *ls = popen(("ls '" + dir.path + "'").c_str(), "r");
  char line[512];
  while (fgets(line, sizeof line, ls)) listing += line;
  pclose(ls);
  EXPECT_EQ(listing.find(".tmp"), std::string::npos) << listing;
}

TEST(ModuleCacheEntry, TwoProcessesWritingAtOnce) {
  TempDir dir;
  Key key;
  fflush(nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  std::atomic<int> torn{0}, hits{0};
  race(dir.path, key.key, 2, 40, &torn, &hits);
  if (child == 0) _exit(torn.load() == 0 ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the other process saw a torn entry";
  EXPECT_EQ(torn.load(), 0);
}

struct EnvGuard {
  std::string name;
  std::string old;
  bool had;
  EnvGuard(const char *n, const char *value) : name(n) {
    const char *v = getenv(n);
    had = v != nullptr;
    if (had) old = v;
    if (value) setenv(n, value, 1); else unsetenv(n);
  }
  ~EnvGuard() {
    if (had) setenv(name.c_str(), old.c_str(), 1); else unsetenv(name.c_str());
  }
};

TEST(ModuleCacheDir, OptionsThenEnvironmentThenHome) {
  TempDir tmp;
  char dir[4096];
  sg_module_options o;
  sg_module_options_init(&o);
  EnvGuard off("SG_MODULE_CACHE", nullptr), env_dir("SG_MODULE_CACHE_DIR", nullptr);
  EnvGuard xdg("XDG_CACHE_HOME", nullptr), home("HOME", tmp.path.c_str());

  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 1);
  EXPECT_EQ(std::string(dir), tmp.path + "/.cache/streamgraph/modules");
  struct stat st;
  ASSERT_EQ(stat(dir, &st), 0) << "the folder was not made";
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  setenv("XDG_CACHE_HOME", (tmp.path + "/xdg").c_str(), 1);
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 1);
  EXPECT_EQ(std::string(dir), tmp.path + "/xdg/streamgraph/modules");

  setenv("SG_MODULE_CACHE_DIR", (tmp.path + "/env/").c_str(), 1);
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 1);
  EXPECT_EQ(std::string(dir), tmp.path + "/env");

  std::string mine = tmp.path + "/a/b/c";
  o.cache_dir = mine.c_str();
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 1);
  EXPECT_EQ(std::string(dir), mine);

  // A folder that cannot be made: the cache is unusable, not an error.
  std::ofstream(tmp.path + "/file") << "x";
  std::string under_file = tmp.path + "/file/sub";
  o.cache_dir = under_file.c_str();
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), -1);

  // Off switches.
  o.cache = 0;
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 0);
  o.cache = 1;
  o.cache_dir = nullptr;
  for (const char *v : {"0", "off", "OFF", "no"}) {
    setenv("SG_MODULE_CACHE", v, 1);
    EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 0) << v;
  }
  setenv("SG_MODULE_CACHE", "1", 1);
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), 1);

  unsetenv("SG_MODULE_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(sg__cache_dir(&o, dir, sizeof dir), -1) << "no HOME: no folder";
}

TEST(ModuleCacheFaults, FailedWritesLeakNothingAndLeaveNoFile) {
  TempDir dir;
  Key key;
  sg__compiled in = make_entry("\x7f" "ELF x", "", {}, false);
  long start = sg_live_allocations();
  for (unsigned long nth = 1; nth < 50; nth++) {
    sg_fault_arm(SG_FAULT_ALL, nth);
    int rc = sg__cache_store(dir.path.c_str(), &key.key, &in);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    EXPECT_EQ(sg_live_allocations(), start) << "fault " << nth;
    if (!fired) {
      EXPECT_EQ(rc, 0);
      break;
    }
    EXPECT_EQ(rc, -1) << "fault " << nth << " was swallowed";
    sg__compiled out;
    EXPECT_EQ(sg__cache_load(dir.path.c_str(), &key.key, 0, &out), 0) << "fault " << nth;
  }
  free_entry(&in);
}

}  // namespace
