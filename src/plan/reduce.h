/* Internal: the two ways reduce.c finds redundant edges. Each clears keep[e]
 * for redundant edges e (indices into the input's successor lists) and never
 * for a needed one. */
#ifndef SG_PLAN_REDUCE_H
#define SG_PLAN_REDUCE_H

#include "plan/work.h"

/* Exact; O((n + E) x chains). */
sg_status sg__reduce_index(sg__work *w, unsigned char *keep);
/* Level-pruned searches of at most budget / n edge visits each; *exact = 0
 * if one was cut short. */
sg_status sg__reduce_search(sg__work *w, unsigned char *keep, uint64_t budget, int *exact);

#endif
