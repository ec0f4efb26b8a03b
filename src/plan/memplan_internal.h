/* Internal: what the memory planner's files share (plan/memplan.c builds
 * it, plan/memplan_bound.c bounds it): vector clocks over chains of nodes,
 * and each temporary's uses summarised against them. */
#ifndef SG_PLAN_MEMPLAN_INTERNAL_H
#define SG_PLAN_MEMPLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/access.h"
#include "plan/schedule.h"

typedef struct sg__mp_clocks {
  uint32_t n, width;         /* nodes, columns per row */
  uint32_t chains;           /* chains in use (<= width) */
  uint32_t *chain_of;        /* node -> chain, UINT32_MAX when untracked */
  uint32_t *pos;             /* node -> position on its chain */
  uint32_t *known;           /* n x width: nodes of chain c finished before the node starts */
  uint32_t *rank;            /* node -> place in the issue order */
} sg__mp_clocks;

typedef struct sg__mp_tinfo {
  size_t size, align;
  uint32_t first, last;      /* ranks of the first and last use in the issue order */
  uint32_t need_start, need_count; /* (chain, count) pairs: must be known finished */
  int untracked;             /* a use on no chain: the temporary precedes nothing */
  int used;
} sg__mp_tinfo;

typedef struct sg__mp_temps {
  uint32_t count;
  sg__mp_tinfo *t;
  uint32_t *need_chain, *need;   /* the pairs */
  uint32_t *min_known;           /* count x width: over the uses, the least known */
  uint32_t width;
  uint32_t *use_start, *use;     /* each temporary's distinct using nodes (sg__mp_temps_uses) */
} sg__mp_temps;

/* Happens-before of the schedule (its streams and events when planned,
 * else the graph's edges `succ_start`/`succ`, over as many chains as fit
 * the cell budget for the nodes and `temps` temporaries). -1 when out of
 * memory (what was allocated stays for sg__mp_clocks_free). */
int sg__mp_clocks_build(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                        uint32_t temps, sg__mp_clocks *c);
/* Happens-before as reachability over the edges, on at most `max_chains`
 * chains of the path cover: past them, the nodes of the shorter chains are
 * untracked (chain_of UINT32_MAX). sg__mp_clocks_build's way when the
 * streams are not planned; -1 when out of memory. */
int sg__mp_clocks_build_edges(const sg__schedule *s, const uint32_t *succ_start,
                              const uint32_t *succ, uint32_t max_chains, sg__mp_clocks *c);
void sg__mp_clocks_free(sg__mp_clocks *c);
/* Each temporary's uses against the clocks (no use lists); -1 when out of
 * memory. */
int sg__mp_temps_build(const sg__access_table *t, const sg__mp_clocks *c, sg__mp_temps *x);
/* Adds each temporary's distinct using nodes (use_start, use) to a record
 * sg__mp_temps_build made: the planner needs none, the bound does. */
int sg__mp_temps_uses(const sg__access_table *t, uint32_t node_count, sg__mp_temps *x);
void sg__mp_temps_free(sg__mp_temps *x);
/* Every use of a finishes before any use of b starts. */
int sg__mp_precedes(const sg__mp_temps *x, uint32_t a, uint32_t b);
/* Neither precedes the other: they may be live at once. */
int sg__mp_conflict(const sg__mp_temps *x, uint32_t a, uint32_t b);
/* The temporaries with uses, sorted by sg__mp_cmp_size (largest first)
 * or sg__mp_cmp_first (first use first); *n of them, allocated. */
int sg__mp_cmp_size(const void *a, const void *b);
int sg__mp_cmp_first(const void *a, const void *b);
uint32_t *sg__mp_ordered(const sg__mp_temps *x, int (*cmp)(const void *, const void *),
                         uint32_t *n);

#endif
