/* Distinct edges; a hash index (linear probing; edges are never removed)
 * only once an edge between existing nodes asks for it. */
#include "core/edge_set.h"

#include <stdlib.h>

#include "core/sys.h"

static uint64_t key_of(uint32_t from, uint32_t to) {
  return ((uint64_t)from + 1) << 32 | to;
}

static uint32_t slot_of(uint64_t key, uint32_t cap) {
  key ^= key >> 31;
  key *= 0x9e3779b97f4a7c15ull;
  key ^= key >> 29;
  return (uint32_t)key & (cap - 1);
}

static int index_contains_or_insert(uint64_t *index, uint32_t cap, uint64_t key, int insert) {
  for (uint32_t i = slot_of(key, cap);; i = (i + 1) & (cap - 1)) {
    if (index[i] == key) return 1;
    if (index[i] == 0) {
      if (insert) index[i] = key;
      return 0;
    }
  }
}

static int grow_index(sg__edge_set *set, uint32_t cap) {
  uint64_t *index = sg__calloc(cap, sizeof *index);
  if (!index) return 0;
  for (uint32_t i = 0; i < set->count; i++)
    index_contains_or_insert(index, cap, key_of(set->from[i], set->to[i]), 1);
  sg__free(set->index);
  set->index = index;
  set->index_capacity = cap;
  return 1;
}

static int grow_arrays(sg__edge_set *set, uint32_t cap) {
  uint32_t *from = sg__realloc_array(set->from, cap, sizeof *from);
  if (!from) return 0;
  set->from = from;
  uint32_t *to = sg__realloc_array(set->to, cap, sizeof *to);
  if (!to) return 0;
  set->to = to;
  set->capacity = cap;
  return 1;
}

/* Room for `extra` more edges (and in the index, when `indexed`), so that
 * the next `extra` appends cannot fail. On failure the set is still usable.
 * The index stays at most half full and its capacity is a 32-bit power of
 * two, so a set holds at most 2^30 edges. */
static sg_status reserve(sg__edge_set *set, uint32_t extra, int indexed) {
  uint64_t need = (uint64_t)set->count + extra;
  if (need > SG__MAX_EDGES) return SG_ERR_OUT_OF_MEMORY;
  if (indexed) {
    uint64_t index_cap = set->index_capacity ? set->index_capacity : 64;
    while (need * 2 > index_cap) index_cap *= 2;
    if (index_cap != set->index_capacity && !grow_index(set, (uint32_t)index_cap))
      return SG_ERR_OUT_OF_MEMORY;
  }
  uint64_t cap = set->capacity ? set->capacity : 16;
  while (need > cap) cap *= 2;
  if (cap != set->capacity && !grow_arrays(set, (uint32_t)cap)) return SG_ERR_OUT_OF_MEMORY;
  return SG_OK;
}

sg_status sg__edge_set_reserve(sg__edge_set *set, uint32_t extra) {
  return reserve(set, extra, 1);
}

static void append(sg__edge_set *set, uint32_t from, uint32_t to) {
  if (set->index) index_contains_or_insert(set->index, set->index_capacity, key_of(from, to), 1);
  set->from[set->count] = from;
  set->to[set->count] = to;
  set->count++;
}

sg_status sg__edge_set_add(sg__edge_set *set, uint32_t from, uint32_t to, int *added) {
  *added = 0;
  /* The first such edge builds the index over every edge so far. */
  if (reserve(set, 1, 1)) return SG_ERR_OUT_OF_MEMORY;
  if (index_contains_or_insert(set->index, set->index_capacity, key_of(from, to), 0))
    return SG_OK;
  append(set, from, to);
  *added = 1;
  return SG_OK;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Dependency lists up to this long are checked for duplicates by comparing
 * pairs (cheaper than sorting a copy, which needs an allocation). */
#define PAIRWISE_MAX 32

sg_status sg__edge_set_add_into_new(sg__edge_set *set, const uint32_t *from, uint32_t count,
                                    uint32_t to) {
  if (count == 0) return SG_OK;
  if (reserve(set, count, set->index != NULL)) return SG_ERR_OUT_OF_MEMORY;
  if (count <= PAIRWISE_MAX) {
    for (uint32_t i = 0; i < count; i++) {
      uint32_t j = 0;
      while (j < i && from[j] != from[i]) j++;
      if (j == i) append(set, from[i], to);
    }
    return SG_OK;
  }
  uint32_t *sorted = sg__realloc_array(NULL, count, sizeof *sorted);
  if (!sorted) return SG_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < count; i++) sorted[i] = from[i];
  qsort(sorted, count, sizeof *sorted, cmp_u32);
  for (uint32_t i = 0; i < count; i++)
    if (i == 0 || sorted[i] != sorted[i - 1]) append(set, sorted[i], to);
  sg__free(sorted);
  return SG_OK;
}

void sg__edge_set_free(sg__edge_set *set) {
  sg__free(set->from);
  sg__free(set->to);
  sg__free(set->index);
  *set = (sg__edge_set){0};
}
