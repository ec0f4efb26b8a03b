# Sources of src/plan (paths relative to src/).
list(APPEND SG_C_SOURCES
  plan/limits.c
  plan/csr.c
  plan/topo.c
  plan/cover_greedy.c
  plan/cover_paths.c
  plan/cover_augment.c
  plan/reduce_search.c
  plan/reduce_index.c
  plan/reduce.c
  plan/merge.c
  plan/merge_intervals.c
  plan/layout.c
  plan/knowledge.c
  plan/events.c
  plan/work.c
  plan/schedule_build.c
  plan/schedule_check.c
  plan/memplan.c
  plan/memplan_bound.c
  plan/memplan_check.c
  plan/collective_order.c
  plan/plan.c
  plan/programmatic.c
  plan/plan_dot.c
  plan/plan_svg.c)
