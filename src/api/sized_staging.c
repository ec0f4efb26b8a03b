/* The exported entry points of staging.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include "core/abi.h"
#include "streamgraph/staging.h"

void sg_pinned_pool_options_init_sized(sg_pinned_pool_options *opts, size_t opts_size) {
  if (!opts) return;
  if (opts_size == sizeof *opts) {
    sg_pinned_pool_options_init(opts);
    return;
  }
  /* Smaller than any layout: nothing can be filled in right. */
  if (opts_size < SG__ABI_FIRST(sg_pinned_pool_options, max_copy_threads)) return;
  sg_pinned_pool_options local;
  sg_pinned_pool_options_init(&local);
  sg__abi_out(opts, opts_size, &local, sizeof local);
}

sg_status sg_pinned_pool_create_sized(const sg_pinned_pool_options *opts, size_t opts_size,
                                      sg_pinned_pool **out) {
  sg_pinned_pool_options local;
  const void *p;
  sg_status st =
      sg__abi_in(opts, opts_size, SG__ABI_FIRST(sg_pinned_pool_options, max_copy_threads), &local,
                 sizeof local, "sg_pinned_pool_create", "opts", &p);
  return st ? st : sg_pinned_pool_create(p, out);
}

sg_status sg_pinned_pool_get_stats_sized(const sg_pinned_pool *pool, sg_pinned_pool_stats *stats,
                                         size_t stats_size) {
  if (!stats || stats_size == sizeof *stats) return sg_pinned_pool_get_stats(pool, stats);
  sg_status st = sg__abi_out_check(stats_size, SG__ABI_FIRST(sg_pinned_pool_stats, on_cuda),
                                   "sg_pinned_pool_get_stats", "stats");
  if (st) return st;
  sg_pinned_pool_stats local;
  st = sg_pinned_pool_get_stats(pool, &local);
  if (!st) sg__abi_out(stats, stats_size, &local, sizeof local);
  return st;
}

sg_status sg_registration_get_stats_sized(sg_backend backend, sg_registration_stats *stats,
                                          size_t stats_size) {
  if (!stats || stats_size == sizeof *stats) return sg_registration_get_stats(backend, stats);
  sg_status st = sg__abi_out_check(stats_size, SG__ABI_FIRST(sg_registration_stats, refusals),
                                   "sg_registration_get_stats", "stats");
  if (st) return st;
  sg_registration_stats local;
  st = sg_registration_get_stats(backend, &local);
  if (!st) sg__abi_out(stats, stats_size, &local, sizeof local);
  return st;
}
