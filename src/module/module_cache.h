/* Internal: the compile cache on disk (streamgraph/module.h says what it
 * promises). A key is every input that decides the compiled code, laid out
 * as length-prefixed fields; an entry's file is named by a 128-bit hash of
 * the key and holds the key itself, so a hit is verified byte for byte and
 * a hash collision is only a miss. */
#ifndef SG_MODULE_MODULE_CACHE_H
#define SG_MODULE_MODULE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "module/module_port.h"

typedef struct sg__cache_key {
  unsigned char *bytes;  /* owned */
  size_t size;
  uint64_t hash[2];
} sg__cache_key;

/* The key of `req` compiled for `arch` ("" when the request's options name
 * it) by NVRTC major.minor. SG_ERR_OUT_OF_MEMORY with a message. */
sg_status sg__cache_key_make(const sg__compile_request *req, const char *arch, int nvrtc_major,
                             int nvrtc_minor, sg__cache_key *out, const char *fn);
void sg__cache_key_free(sg__cache_key *key);

/* The cache folder for these options into `dir` (made if missing).
 * 1: a folder to use; 0: the cache is off (options or SG_MODULE_CACHE);
 * -1: no folder could be had (no HOME, or mkdir failed). */
int sg__cache_dir(const sg_module_options *opts, char *dir, size_t cap);

/* 1: a valid entry for `key` was read into `out` (with `names` lowered
 * names); 0: none; -1: an entry exists but could not be read or did not
 * verify. */
int sg__cache_load(const char *dir, const sg__cache_key *key, unsigned names, sg__compiled *out);

/* Writes the entry (temporary file, then rename). 0 or -1. */
int sg__cache_store(const char *dir, const sg__cache_key *key, const sg__compiled *c);

/* The entry's path: "<dir>/<32 hex digits>.sgm". 0, or -1 when it does not fit. */
int sg__cache_entry_path(const char *dir, const sg__cache_key *key, char *path, size_t cap);

#endif
