/* Modules: the public calls. A module is a loaded library (cudaLibrary_t),
 * the owner of the kernels looked up in it (core/kernel_owner.h), and what
 * lookups need: the name expressions and their mangled names. The handle
 * goes at sg_module_destroy; the module itself when its last reference
 * (the handle's, and one per node naming one of its kernels) is gone. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamgraph/graph.h" /* SG_MAX_NAME_BYTES */

#include "core/error.h"
#include "core/handles.h"
#include "core/kernel_owner.h"
#include "core/sys.h"
#include "module/module_compile.h"
#include "module/module_port.h"

#define MAX_FILE_BYTES ((size_t)1 << 30)

struct sg_module {
  sg__kernel_owner owner; /* first: the release callback is given its address */
  void *library;
  int device;
  char *name;
  char *log;
  unsigned expr_count;
  char **exprs;   /* name expressions as written */
  char **lowered; /* their mangled names, in the same order */
};

static void free_strings(char **list, unsigned n) {
  for (unsigned i = 0; list && i < n; i++) sg__free(list[i]);
  sg__free(list);
}

static void module_free(sg_module *m) {
  free_strings(m->exprs, m->expr_count);
  free_strings(m->lowered, m->expr_count);
  sg__free(m->log);
  sg__free(m->name);
  sg__free(m);
}

/* The last reference is gone: nothing can launch the kernels any more. */
static void module_release(sg__kernel_owner *owner) {
  sg_module *m = (sg_module *)owner;
  sg__library_unload(m->library, m->device);
  module_free(m);
  sg__module_count(SG__COUNT_LIVE, -1);
}

void sg_module_options_init(sg_module_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->device = -1;
  opts->cache = 1;
}

static const sg_module_options *options_or_default(const sg_module_options *opts,
                                                   sg_module_options *def) {
  if (opts) return opts;
  sg_module_options_init(def);
  return def;
}

/* Loads `image` and wraps it in a registered module that takes over `c`'s
 * log and lowered names (c may be NULL for an image). */
static sg_status make_module(const void *image, const char *name, int device,
                             const sg_module_options *opts, sg__compiled *c, sg_module **out,
                             const char *fn) {
  sg_module *m = sg__calloc(1, sizeof *m);
  if (!m) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  m->device = device;
  m->name = sg__strdup(name);
  m->log = sg__strdup(c && c->log ? c->log : "");
  unsigned n = c ? c->lowered_count : 0;
  if (n) {
    m->exprs = sg__calloc(n, sizeof *m->exprs);
    if (m->exprs) {
      m->expr_count = n;
      for (unsigned i = 0; i < n; i++)
        if (!(m->exprs[i] = sg__strdup(opts->name_expressions[i]))) break;
      m->lowered = c->lowered; /* taken over */
      c->lowered = NULL;
      c->lowered_count = 0;
    }
  }
  int complete = m->name && m->log && (!n || (m->exprs && m->exprs[n - 1]));
  if (!complete) {
    module_free(m);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  sg_status st = sg__library_load(image, &m->library, fn);
  if (st) {
    module_free(m);
    return st;
  }
  st = sg__handle_register(m, SG__HANDLE_MODULE, fn);
  if (st) {
    sg__library_unload(m->library, m->device);
    module_free(m);
    return sg__fail(st, "%s: out of memory", fn);
  }
  sg__kernel_owner_init(&m->owner, module_release);
  sg__module_count(SG__COUNT_LOADS, 1);
  sg__module_count(SG__COUNT_LIVE, 1);
  *out = m;
  return SG_OK;
}

sg_status sg_module_create_from_source(const char *source, const sg_module_options *opts,
                                       sg_module **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  sg_module_options def;
  opts = options_or_default(opts, &def);
  sg_status st = sg__module_check_source(source, opts, __func__);
  if (st) return st;
  int device;
  st = sg__module_device(opts->device, &device, __func__);
  if (st) return st;
  sg__compiled c;
  st = sg__module_compile(source, opts, device, &c, __func__);
  if (st) return st;
  st = make_module(c.image, opts->name ? opts->name : "module.cu", device, opts, &c, out,
                   __func__);
  sg__compiled_free(&c);
  return st;
}

/* What an image is, from its first bytes. */
typedef enum image_kind { IMAGE_UNKNOWN, IMAGE_CUBIN, IMAGE_FATBIN, IMAGE_PTX } image_kind;

static image_kind classify(const unsigned char *p, size_t n) {
  if (n >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') return IMAGE_CUBIN;
  if (n >= 4 && p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba) return IMAGE_FATBIN;
  /* PTX is text: no NUL but an optional last one, and a .version directive. */
  size_t text = n && p[n - 1] == '\0' ? n - 1 : n;
  if (text && !memchr(p, '\0', text)) {
    const char *needle = ".version";
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= text; i++)
      if (!memcmp(p + i, needle, k)) return IMAGE_PTX;
  }
  return IMAGE_UNKNOWN;
}

static sg_status load_image(const unsigned char *image, size_t bytes, const char *name,
                            const sg_module_options *opts, sg_module **out, const char *fn) {
  image_kind kind = classify(image, bytes);
  if (kind == IMAGE_UNKNOWN)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: '%s' is neither a cubin (ELF), a fatbin nor PTX text (%zu bytes)", fn,
                    name, bytes);
  int device;
  sg_status st = sg__module_device(opts->device, &device, fn);
  if (st) return st;
  /* A private copy: PTX gets its terminating NUL, and the driver may read
   * the image after the caller has freed theirs. */
  unsigned char *copy = sg__malloc(bytes + 1);
  if (!copy) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for the image", fn);
  memcpy(copy, image, bytes);
  copy[bytes] = '\0';
  st = make_module(copy, name, device, opts, NULL, out, fn);
  sg__free(copy);
  return st;
}

static sg_status check_image_args(const void *image, const sg_module_options *opts,
                                  sg_module **out, const char *fn) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  if (!image) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the image is NULL", fn);
  if (opts->name && strlen(opts->name) > SG_MAX_NAME_BYTES)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: name is longer than %u bytes", fn,
                    SG_MAX_NAME_BYTES);
  return SG_OK;
}

sg_status sg_module_create_from_image(const void *image, size_t bytes,
                                      const sg_module_options *opts, sg_module **out) {
  sg_module_options def;
  opts = options_or_default(opts, &def);
  sg_status st = check_image_args(image, opts, out, __func__);
  if (st) return st;
  if (bytes == 0) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bytes is 0", __func__);
  return load_image(image, bytes, opts->name ? opts->name : "image", opts, out, __func__);
}

sg_status sg_module_create_from_file(const char *path, const sg_module_options *opts,
                                     sg_module **out) {
  sg_module_options def;
  opts = options_or_default(opts, &def);
  sg_status st = check_image_args(path, opts, out, __func__);
  if (st) return st;
  FILE *f = sg__fault_point(SG_FAULT_SYSTEM, "fopen") ? NULL : fopen(path, "rb");
  if (!f)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: cannot open '%s'", __func__, path);
  unsigned char *data = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      size_t grown = cap ? cap * 2 : 1 << 16;
      unsigned char *p = grown <= MAX_FILE_BYTES ? sg__realloc(data, grown) : NULL;
      if (!p) {
        fclose(f);
        sg__free(data);
        return grown <= MAX_FILE_BYTES
                   ? sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory reading '%s'", __func__, path)
                   : sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: '%s' is larger than %zu bytes",
                              __func__, path, MAX_FILE_BYTES);
      }
      data = p;
      cap = grown;
    }
    size_t n = fread(data + size, 1, cap - size, f);
    size += n;
    if (n == 0) break;
  }
  int failed = ferror(f);
  fclose(f);
  if (failed || size == 0) {
    sg__free(data);
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: '%s' %s", __func__, path,
                    failed ? "could not be read" : "is empty");
  }
  st = load_image(data, size, opts->name ? opts->name : path, opts, out, __func__);
  sg__free(data);
  return st;
}

sg_status sg_module_destroy(sg_module *module) {
  sg_status st = sg__handle_check(module, SG__HANDLE_MODULE, __func__, "module");
  if (st) return st;
  sg__handle_unregister(module);
  sg__kernel_owner_release(&module->owner);
  return SG_OK;
}

sg_status sg_module_get_kernel(sg_module *module, const char *name, const void **kernel) {
  sg_status st = sg__handle_check(module, SG__HANDLE_MODULE, __func__, "module");
  if (st) return st;
  if (!name || !kernel)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, name ? "kernel" : "name");
  const char *symbol = name;
  for (unsigned i = 0; i < module->expr_count; i++)
    if (!strcmp(module->exprs[i], name)) symbol = module->lowered[i];
  char fn[SG_MAX_NAME_BYTES + 64];
  snprintf(fn, sizeof fn, "%s: module '%s'", __func__, module->name);
  const void *k;
  st = sg__library_get_kernel(module->library, symbol, &k, fn);
  if (st) return st;
  st = sg__kernel_owner_add(&module->owner, k, __func__);
  if (st) return st;
  *kernel = k;
  return SG_OK;
}

sg_status sg_module_get_log(const sg_module *module, const char **log) {
  sg_status st = sg__handle_check(module, SG__HANDLE_MODULE, __func__, "module");
  if (st) return st;
  if (!log) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: log is NULL", __func__);
  *log = module->log;
  return SG_OK;
}

sg_status sg_module_get_stats(sg_module_stats *stats) {
  if (!stats) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stats is NULL", __func__);
  sg__module_counts_read(stats);
  return SG_OK;
}
