/* Distinct edges with a hash index (linear probing; edges are never removed). */
#include "core/edge_set.h"

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

sg_status sg__edge_set_add(sg__edge_set *set, uint32_t from, uint32_t to, int *added) {
  *added = 0;
  uint64_t key = key_of(from, to);
  if (set->index_capacity && index_contains_or_insert(set->index, set->index_capacity, key, 0))
    return SG_OK;
  if (sg__edge_set_reserve(set, 1)) return SG_ERR_OUT_OF_MEMORY;
  index_contains_or_insert(set->index, set->index_capacity, key, 1);
  set->from[set->count] = from;
  set->to[set->count] = to;
  set->count++;
  *added = 1;
  return SG_OK;
}

sg_status sg__edge_set_reserve(sg__edge_set *set, uint32_t extra) {
  uint64_t need = (uint64_t)set->count + extra;
  if (need > UINT32_MAX / 2) return SG_ERR_OUT_OF_MEMORY;
  /* The index stays at most half full. */
  uint32_t index_cap = set->index_capacity ? set->index_capacity : 64;
  while (need * 2 > index_cap) index_cap *= 2;
  if (index_cap != set->index_capacity && !grow_index(set, index_cap)) return SG_ERR_OUT_OF_MEMORY;
  uint32_t cap = set->capacity ? set->capacity : 16;
  while (need > cap) cap *= 2;
  if (cap != set->capacity && !grow_arrays(set, cap)) return SG_ERR_OUT_OF_MEMORY;
  return SG_OK;
}

void sg__edge_set_free(sg__edge_set *set) {
  sg__free(set->from);
  sg__free(set->to);
  sg__free(set->index);
  *set = (sg__edge_set){0};
}
