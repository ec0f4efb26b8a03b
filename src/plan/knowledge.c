/* What each stream knows has finished: vector clocks, or direct knowledge
 * (see knowledge.h). Positions are stored plus one, so 0 means "nothing". */
#include "plan/knowledge.h"

#include <string.h>

#include "core/sys.h"

sg_status sg__knowledge_init(sg__knowledge *k, int dense, uint32_t streams, uint32_t *slot,
                             size_t saved_count, size_t capacity) {
  memset(k, 0, sizeof *k);
  k->dense = dense;
  k->streams = streams;
  if (dense) {
    k->slot = slot;
    k->clock = sg__calloc((size_t)streams * streams, sizeof *k->clock);
    k->saved = sg__malloc((saved_count ? saved_count : 1) * streams * sizeof *k->saved);
    if (!k->clock || !k->saved) goto oom;
    return SG_OK;
  }
  size_t cap = 16;
  while (cap < 2 * capacity) cap *= 2;
  k->keys = sg__malloc(cap * sizeof *k->keys);
  k->values = sg__malloc(cap * sizeof *k->values);
  if (!k->keys || !k->values) goto oom;
  memset(k->keys, 0xff, cap * sizeof *k->keys);
  k->mask = cap - 1;
  return SG_OK;
oom:
  sg__knowledge_free(k);
  return SG_ERR_OUT_OF_MEMORY;
}

void sg__knowledge_free(sg__knowledge *k) {
  sg__free(k->clock);
  sg__free(k->saved);
  sg__free(k->slot);
  sg__free(k->keys);
  sg__free(k->values);
  memset(k, 0, sizeof *k);
}

/* The map's slot for key, empty or holding it (linear probing; the map is
 * sized at twice the entries it can ever hold, so a free slot exists). */
static size_t find(const sg__knowledge *k, uint64_t key) {
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  size_t i = (size_t)(h >> 32) & k->mask;
  while (k->keys[i] != key && k->keys[i] != UINT64_MAX) i = (i + 1) & k->mask;
  return i;
}

uint32_t sg__knowledge_get(const sg__knowledge *k, uint32_t s, uint32_t a) {
  if (k->dense) return k->clock[(size_t)s * k->streams + a];
  size_t i = find(k, ((uint64_t)s << 32) | a);
  return k->keys[i] == UINT64_MAX ? 0 : k->values[i];
}

void sg__knowledge_wait(sg__knowledge *k, uint32_t s, uint32_t u, uint32_t a, uint32_t pos) {
  if (k->dense) {
    uint32_t *c = k->clock + (size_t)s * k->streams;
    const uint32_t *from = k->saved + (size_t)k->slot[u] * k->streams;
    for (uint32_t t = 0; t < k->streams; t++)
      if (from[t] > c[t]) c[t] = from[t];
    return;
  }
  uint64_t key = ((uint64_t)s << 32) | a;
  size_t i = find(k, key);
  if (k->keys[i] == UINT64_MAX) {
    k->keys[i] = key;
    k->values[i] = pos + 1;
  } else if (k->values[i] < pos + 1) {
    k->values[i] = pos + 1;
  }
}

void sg__knowledge_run(sg__knowledge *k, uint32_t s, uint32_t v, uint32_t pos) {
  if (!k->dense) return; /* a stream's own position is known without being stored */
  uint32_t *c = k->clock + (size_t)s * k->streams;
  c[s] = pos + 1;
  if (k->slot[v] != UINT32_MAX)
    memcpy(k->saved + (size_t)k->slot[v] * k->streams, c, k->streams * sizeof *c);
}
