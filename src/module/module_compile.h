/* Internal: source to image, through the compile cache, and the process's
 * module counters (sg_module_get_stats). */
#ifndef SG_MODULE_MODULE_COMPILE_H
#define SG_MODULE_MODULE_COMPILE_H

#include "module/module_port.h"

/* The process's counters, each a field of sg_module_stats. */
typedef enum sg__module_counter {
  SG__COUNT_COMPILES,
  SG__COUNT_CACHE_HITS,
  SG__COUNT_CACHE_MISSES,
  SG__COUNT_CACHE_STORES,
  SG__COUNT_CACHE_ERRORS,
  SG__COUNT_LOADS,
  SG__COUNT_LIVE,
  SG__COUNT_KINDS
} sg__module_counter;

void sg__module_count(sg__module_counter which, long delta);
void sg__module_counts_read(sg_module_stats *out);

/* 1 if `options` name a target architecture ("-arch", "--gpu-architecture"). */
int sg__options_name_arch(const char *const *options, unsigned count);

/* Checks the source and options (NULL entries, counts without arrays,
 * names too long); SG_ERR_INVALID_ARGUMENT naming `fn`. */
sg_status sg__module_check_source(const char *source, const sg_module_options *opts,
                                  const char *fn);

/* Compiles `source` for `device` (or for the architecture its options
 * name), through the cache. On SG_OK `out` holds the image, the log and the
 * lowered names; on SG_ERR_COMPILE the message and opts->log carry the
 * log. */
sg_status sg__module_compile(const char *source, const sg_module_options *opts, int device,
                             sg__compiled *out, const char *fn);

#endif
