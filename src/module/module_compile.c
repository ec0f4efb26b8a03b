/* Source to image: the key, a cache lookup, NVRTC on a miss, the entry
 * written back. The cache only ever saves time: a folder or entry that
 * cannot be used is counted (cache_errors) and compiling goes on. */
#include "module/module_compile.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "streamgraph/graph.h" /* SG_MAX_NAME_BYTES */

#include "core/error.h"
#include "core/sys.h"
#include "module/module_cache.h"

static atomic_ullong counts[SG__COUNT_KINDS];

void sg__module_count(sg__module_counter which, long delta) {
  atomic_fetch_add(&counts[which], (unsigned long long)delta);
}

void sg__module_counts_read(sg_module_stats *out) {
  out->compiles = atomic_load(&counts[SG__COUNT_COMPILES]);
  out->cache_hits = atomic_load(&counts[SG__COUNT_CACHE_HITS]);
  out->cache_misses = atomic_load(&counts[SG__COUNT_CACHE_MISSES]);
  out->cache_stores = atomic_load(&counts[SG__COUNT_CACHE_STORES]);
  out->cache_errors = atomic_load(&counts[SG__COUNT_CACHE_ERRORS]);
  out->loads = atomic_load(&counts[SG__COUNT_LOADS]);
  out->live_modules = atomic_load(&counts[SG__COUNT_LIVE]);
}

#define DEFAULT_NAME "module.cu"

void sg__compiled_free(sg__compiled *c) {
  sg__free(c->image);
  sg__free(c->log);
  for (unsigned i = 0; i < c->lowered_count; i++)
    if (c->lowered) sg__free(c->lowered[i]);
  sg__free(c->lowered);
  memset(c, 0, sizeof *c);
}

int sg__options_name_arch(const char *const *options, unsigned count) {
  for (unsigned i = 0; i < count; i++) {
    const char *o = options[i];
    if (!strncmp(o, "-arch", 5) || !strncmp(o, "--gpu-architecture", 18)) return 1;
  }
  return 0;
}

static sg_status check_strings(const char *const *list, unsigned count, const char *what,
                               const char *fn) {
  if (count && !list)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s_count is %u but %s is NULL", fn, what, count,
                    what);
  for (unsigned i = 0; i < count; i++)
    if (!list[i]) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s[%u] is NULL", fn, what, i);
  return SG_OK;
}

sg_status sg__module_check_source(const char *source, const sg_module_options *opts,
                                  const char *fn) {
  if (!source) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: source is NULL", fn);
  if (opts->name && strlen(opts->name) > SG_MAX_NAME_BYTES)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: name is longer than %u bytes", fn,
                    SG_MAX_NAME_BYTES);
  sg_status st = check_strings(opts->compile_options, opts->compile_option_count,
                               "compile_options", fn);
  if (!st) st = check_strings(opts->name_expressions, opts->name_expression_count,
                              "name_expressions", fn);
  if (st) return st;
  if (opts->header_count && !opts->headers)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: header_count is %u but headers is NULL", fn,
                    opts->header_count);
  for (unsigned i = 0; i < opts->header_count; i++)
    if (!opts->headers[i].name || !opts->headers[i].source)
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: headers[%u] has a NULL name or source", fn, i);
  if (opts->log_bytes && !opts->log)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: log_bytes is %zu but log is NULL", fn,
                    opts->log_bytes);
  if (opts->cache != 0 && opts->cache != 1)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: cache is %d; 1 uses the cache, 0 does not",
                    fn, opts->cache);
  return SG_OK;
}

static void copy_log(const sg_module_options *opts, const char *log) {
  if (!opts->log || !opts->log_bytes) return;
  snprintf(opts->log, opts->log_bytes, "%s", log ? log : "");
}

sg_status sg__module_compile(const char *source, const sg_module_options *opts, int device,
                             sg__compiled *out, const char *fn) {
  memset(out, 0, sizeof *out);
  int major = 0, minor = 0;
  sg_status st = sg__nvrtc_version(&major, &minor, fn);
  if (st) return st;

  char arch[32] = "", arch_option[64];
  sg__compile_request req = {
      source, opts->name ? opts->name : DEFAULT_NAME, opts->compile_options,
      opts->compile_option_count, NULL, opts->name_expressions, opts->name_expression_count,
      opts->headers, opts->header_count};
  if (!sg__options_name_arch(opts->compile_options, opts->compile_option_count)) {
    st = sg__nvrtc_arch(device, arch, sizeof arch, fn);
    if (st) return st;
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", arch);
    req.arch_option = arch_option;
  }

  sg__cache_key key;
  st = sg__cache_key_make(&req, arch, major, minor, &key, fn);
  if (st) return st;
  char dir[4096];
  int use_cache = sg__cache_dir(opts, dir, sizeof dir);
  if (use_cache < 0) sg__module_count(SG__COUNT_CACHE_ERRORS, 1);
  if (use_cache > 0) {
    int rc = sg__cache_load(dir, &key, req.name_expression_count, out);
    if (rc == 1) {
      sg__module_count(SG__COUNT_CACHE_HITS, 1);
      sg__cache_key_free(&key);
      copy_log(opts, out->log);
      return SG_OK;
    }
    sg__module_count(SG__COUNT_CACHE_MISSES, 1);
    if (rc < 0) sg__module_count(SG__COUNT_CACHE_ERRORS, 1);
  }

  sg__module_count(SG__COUNT_COMPILES, 1);
  st = sg__nvrtc_compile(&req, out, fn);
  if (st == SG_OK || st == SG_ERR_COMPILE) copy_log(opts, out->log);
  if (st == SG_OK && use_cache > 0) {
    if (sg__cache_store(dir, &key, out) == 0)
      sg__module_count(SG__COUNT_CACHE_STORES, 1);
    else
      sg__module_count(SG__COUNT_CACHE_ERRORS, 1);
  }
  sg__cache_key_free(&key);
  if (st) sg__compiled_free(out);
  return st;
}
