/* The exported entry points of module.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include "core/abi.h"
#include "streamgraph/module.h"

void sg_module_options_init_sized(sg_module_options *opts, size_t opts_size) {
  if (!opts) return;
  if (opts_size == sizeof *opts) {
    sg_module_options_init(opts);
    return;
  }
  /* Smaller than any layout: nothing can be filled in right. */
  if (opts_size < SG__ABI_FIRST(sg_module_options, log_bytes)) return;
  sg_module_options local;
  sg_module_options_init(&local);
  sg__abi_out(opts, opts_size, &local, sizeof local);
}

sg_status sg_module_create_from_source_sized(const char *source, const sg_module_options *opts,
                                             size_t opts_size, sg_module **out) {
  sg_module_options local;
  const void *p;
  sg_status st = sg__abi_in(opts, opts_size, SG__ABI_FIRST(sg_module_options, log_bytes), &local,
                            sizeof local, "sg_module_create_from_source", "opts", &p);
  return st ? st : sg_module_create_from_source(source, p, out);
}

sg_status sg_module_create_from_image_sized(const void *image, size_t bytes,
                                            const sg_module_options *opts, size_t opts_size,
                                            sg_module **out) {
  sg_module_options local;
  const void *p;
  sg_status st = sg__abi_in(opts, opts_size, SG__ABI_FIRST(sg_module_options, log_bytes), &local,
                            sizeof local, "sg_module_create_from_image", "opts", &p);
  return st ? st : sg_module_create_from_image(image, bytes, p, out);
}

sg_status sg_module_create_from_file_sized(const char *path, const sg_module_options *opts,
                                           size_t opts_size, sg_module **out) {
  sg_module_options local;
  const void *p;
  sg_status st = sg__abi_in(opts, opts_size, SG__ABI_FIRST(sg_module_options, log_bytes), &local,
                            sizeof local, "sg_module_create_from_file", "opts", &p);
  return st ? st : sg_module_create_from_file(path, p, out);
}

sg_status sg_module_get_stats_sized(sg_module_stats *stats, size_t stats_size) {
  if (!stats || stats_size == sizeof *stats) return sg_module_get_stats(stats);
  sg_status st = sg__abi_out_check(stats_size, SG__ABI_FIRST(sg_module_stats, live_modules),
                                   "sg_module_get_stats", "stats");
  if (st) return st;
  sg_module_stats local;
  st = sg_module_get_stats(&local);
  if (!st) sg__abi_out(stats, stats_size, &local, sizeof local);
  return st;
}
