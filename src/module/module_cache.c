/* The compile cache: keys, the folder, and entries on disk.
 *
 * An entry file, in the machine's byte order (a cache is machine-local):
 *   "SGMCACHE" | u32 format | u32 is_ptx | u64 key size | key
 *   | u32 name count | (u32 size | name) per lowered name
 *   | u64 log size | log | u64 image size | image | u64 checksum
 * The checksum (FNV-1a of everything before it) catches a file cut short
 * or damaged; the key is compared whole. Writers create a file of their
 * own (O_EXCL) and rename it over the entry: rename is atomic, so a reader
 * sees the old entry, the new one or none, never a mix. */
#define _POSIX_C_SOURCE 200809L
#include "module/module_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sys.h"

#define FORMAT 1u
#define MAGIC "SGMCACHE"
#define MAX_ENTRY_BYTES ((uint64_t)1 << 30)

/* ---- hashing -------------------------------------------------------------- */

static uint64_t fnv1a(const unsigned char *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* A second, independent 64 bits: FNV-1a from another basis, then a
 * finaliser (splitmix64's) so that the two halves do not move together. */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* ---- keys ----------------------------------------------------------------- */

typedef struct buf {
  unsigned char *p;
  size_t size, cap;
  int failed;
} buf;

static void put(buf *b, const void *data, size_t n) {
  if (b->failed) return;
  if (n > SIZE_MAX - b->size) {
    b->failed = 1;
    return;
  }
  if (b->size + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->size + n) cap = cap > SIZE_MAX / 2 ? b->size + n : cap * 2;
    unsigned char *p = sg__realloc(b->p, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->size, data, n);
  b->size += n;
}

static void put_u32(buf *b, uint32_t v) { put(b, &v, sizeof v); }
static void put_u64(buf *b, uint64_t v) { put(b, &v, sizeof v); }

/* A field: its size, then its bytes, so that no two different inputs lay
 * out the same ("ab" + "c" is not "a" + "bc"). NULL and "" differ. */
static void put_field(buf *b, const char *s) {
  if (!s) {
    put_u64(b, UINT64_MAX);
    return;
  }
  size_t n = strlen(s);
  put_u64(b, n);
  put(b, s, n);
}

sg_status sg__cache_key_make(const sg__compile_request *req, const char *arch, int nvrtc_major,
                             int nvrtc_minor, sg__cache_key *out, const char *fn) {
  buf b = {0};
  put_field(&b, "streamgraph module cache key 1");
  put_u32(&b, (uint32_t)nvrtc_major);
  put_u32(&b, (uint32_t)nvrtc_minor);
  put_field(&b, arch);
  put_field(&b, req->arch_option);
  put_field(&b, req->name);
  put_field(&b, req->source);
  put_u32(&b, req->option_count);
  for (unsigned i = 0; i < req->option_count; i++) put_field(&b, req->options[i]);
  put_u32(&b, req->name_expression_count);
  for (unsigned i = 0; i < req->name_expression_count; i++)
    put_field(&b, req->name_expressions[i]);
  put_u32(&b, req->header_count);
  for (unsigned i = 0; i < req->header_count; i++) {
    put_field(&b, req->headers[i].name);
    put_field(&b, req->headers[i].source);
  }
  if (b.failed) {
    sg__free(b.p);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for the cache key", fn);
  }
  out->bytes = b.p;
  out->size = b.size;
  out->hash[0] = fnv1a(b.p, b.size, 0xcbf29ce484222325ull);
  out->hash[1] = mix64(fnv1a(b.p, b.size, 0x84222325cbf29ce4ull) ^ b.size);
  return SG_OK;
}

void sg__cache_key_free(sg__cache_key *key) {
  sg__free(key->bytes);
  key->bytes = NULL;
  key->size = 0;
}

/* ---- the folder ----------------------------------------------------------- */

static int cache_disabled_by_env(void) {
  const char *v = getenv("SG_MODULE_CACHE");
  return v && (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "OFF") || !strcmp(v, "no"));
}

/* mkdir -p, each missing folder with mode 0700. */
static int make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    int rc = mkdir(path, 0700);
    *p = '/';
    if (rc != 0 && errno != EEXIST) return -1;
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int sg__cache_dir(const sg_module_options *opts, char *dir, size_t cap) {
  if (!opts->cache || cache_disabled_by_env()) return 0;
  const char *env;
  int n;
  if (opts->cache_dir && opts->cache_dir[0]) {
    n = snprintf(dir, cap, "%s", opts->cache_dir);
  } else if ((env = getenv("SG_MODULE_CACHE_DIR")) && env[0]) {
    n = snprintf(dir, cap, "%s", env);
  } else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/') {
    n = snprintf(dir, cap, "%s/streamgraph/modules", env);
  } else if ((env = getenv("HOME")) && env[0] == '/') {
    n = snprintf(dir, cap, "%s/.cache/streamgraph/modules", env);
  } else {
    return -1;
  }
  if (n <= 0 || (size_t)n >= cap) return -1;
  while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
  if (sg__fault_point(SG_FAULT_SYSTEM, "mkdir")) return -1;
  return make_dirs(dir) == 0 ? 1 : -1;
}

int sg__cache_entry_path(const char *dir, const sg__cache_key *key, char *path, size_t cap) {
  int n = snprintf(path, cap, "%s/%016llx%016llx.sgm", dir, (unsigned long long)key->hash[0],
                   (unsigned long long)key->hash[1]);
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* ---- reading -------------------------------------------------------------- */

typedef struct reader {
  const unsigned char *p;
  size_t size, at;
  int failed;
} reader;

static const unsigned char *take(reader *r, uint64_t n) {
  if (r->failed || n > r->size - r->at) {
    r->failed = 1;
    return NULL;
  }
  const unsigned char *p = r->p + r->at;
  r->at += (size_t)n;
  return p;
}

static uint32_t take_u32(reader *r) {
  uint32_t v = 0;
  const unsigned char *p = take(r, sizeof v);
  if (p) memcpy(&v, p, sizeof v);
  return v;
}

static uint64_t take_u64(reader *r) {
  uint64_t v = 0;
  const unsigned char *p = take(r, sizeof v);
  if (p) memcpy(&v, p, sizeof v);
  return v;
}

/* A NUL-terminated, owned copy of n bytes (NULL on failure). */
static char *take_string(reader *r, uint64_t n) {
  const unsigned char *p = take(r, n);
  if (!p || n >= SIZE_MAX) return NULL;
  char *s = sg__malloc((size_t)n + 1);
  if (!s) return NULL;
  memcpy(s, p, (size_t)n);
  s[n] = '\0';
  return s;
}

/* The whole file, or NULL (missing: *missing = 1). */
static unsigned char *read_file(const char *path, size_t *size, int *missing) {
  *missing = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *missing = errno == ENOENT;
    return NULL;
  }
  struct stat st;
  unsigned char *data = NULL;
  if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size <= MAX_ENTRY_BYTES &&
      (data = sg__malloc((size_t)st.st_size))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (got != (size_t)st.st_size) {
      sg__free(data);
      data = NULL;
    }
    *size = got;
  }
  close(fd);
  return data;
}

static int parse_entry(reader *r, const sg__cache_key *key, unsigned names, sg__compiled *out) {
  const unsigned char *magic = take(r, 8);
  if (!magic || memcmp(magic, MAGIC, 8) || take_u32(r) != FORMAT) return -1;
  uint32_t is_ptx = take_u32(r);
  uint64_t key_size = take_u64(r);
  const unsigned char *k = take(r, key_size);
  if (!k || key_size != key->size || memcmp(k, key->bytes, key->size)) return -1;
  if (take_u32(r) != names) return -1;
  if (names) {
    out->lowered = sg__calloc(names, sizeof *out->lowered);
    if (!out->lowered) return -1;
    out->lowered_count = names;
    for (unsigned i = 0; i < names; i++)
      if (!(out->lowered[i] = take_string(r, take_u32(r)))) return -1;
  }
  if (!(out->log = take_string(r, take_u64(r)))) return -1;
  uint64_t image_size = take_u64(r);
  const unsigned char *image = take(r, image_size);
  if (!image || image_size == 0) return -1;
  out->image = sg__malloc((size_t)image_size);
  if (!out->image) return -1;
  memcpy(out->image, image, (size_t)image_size);
  out->image_bytes = (size_t)image_size;
  out->is_ptx = is_ptx != 0;
  if (out->is_ptx && out->image[out->image_bytes - 1] != '\0') return -1;
  size_t checked = r->at;
  uint64_t sum = take_u64(r);
  if (r->failed || r->at != r->size) return -1;
  return fnv1a(r->p, checked, 0xcbf29ce484222325ull) == sum ? 1 : -1;
}

int sg__cache_load(const char *dir, const sg__cache_key *key, unsigned names, sg__compiled *out) {
  char path[4096];
  if (sg__cache_entry_path(dir, key, path, sizeof path)) return -1;
  size_t size = 0;
  int missing;
  unsigned char *data = read_file(path, &size, &missing);
  if (!data) return missing ? 0 : -1;
  reader r = {data, size, 0, 0};
  memset(out, 0, sizeof *out);
  int rc = parse_entry(&r, key, names, out);
  sg__free(data);
  if (rc != 1) sg__compiled_free(out);
  return rc;
}

/* ---- writing -------------------------------------------------------------- */

static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int sg__cache_store(const char *dir, const sg__cache_key *key, const sg__compiled *c) {
  static atomic_ulong serial;
  char path[4096], tmp[4200];
  if (sg__cache_entry_path(dir, key, path, sizeof path)) return -1;
  int n = snprintf(tmp, sizeof tmp, "%s.%ld.%lu.tmp", path, (long)getpid(),
                   (unsigned long)atomic_fetch_add(&serial, 1));
  if (n <= 0 || (size_t)n >= sizeof tmp) return -1;

  buf b = {0};
  put(&b, MAGIC, 8);
  put_u32(&b, FORMAT);
  put_u32(&b, c->is_ptx ? 1u : 0u);
  put_u64(&b, key->size);
  put(&b, key->bytes, key->size);
  put_u32(&b, c->lowered_count);
  for (unsigned i = 0; i < c->lowered_count; i++) {
    size_t len = strlen(c->lowered[i]);
    put_u32(&b, (uint32_t)len);
    put(&b, c->lowered[i], len);
  }
  size_t log_len = c->log ? strlen(c->log) : 0;
  put_u64(&b, log_len);
  put(&b, c->log, log_len);
  put_u64(&b, c->image_bytes);
  put(&b, c->image, c->image_bytes);
  if (!b.failed) put_u64(&b, fnv1a(b.p, b.size, 0xcbf29ce484222325ull));
  if (b.failed || sg__fault_point(SG_FAULT_SYSTEM, "write")) {
    sg__free(b.p);
    return -1;
  }
  int rc = -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    int ok = write_all(fd, b.p, b.size) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0) rc = 0;
    else unlink(tmp);
  }
  sg__free(b.p);
  return rc;
}
