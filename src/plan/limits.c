/* The planner's default budgets. */
#include "plan/schedule_build.h"

/* Each budget bounds one exact method; the values keep a graph of 100,000
 * nodes and 300,000 edges within a second on a small machine (bench/RESULTS.md)
 * while every graph of a few thousand nodes gets the exact answers. */
void sg__plan_limits_default(sg__plan_limits *limits) {
  limits->cover_work = (uint64_t)1 << 25;
  limits->reduce_work = (uint64_t)1 << 26;
  limits->reduce_search_work = (uint64_t)1 << 26;
  limits->clock_work = (uint64_t)1 << 24;
  limits->merge_scan_streams = 64;
  limits->merge_scan_cells = (uint64_t)1 << 23;
}
