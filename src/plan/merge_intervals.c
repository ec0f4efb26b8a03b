/* Merging chains by intervals of levels, for stream limits too large for the
 * level table of merge.c.
 *
 * Each chain spans the levels from its first node to its last. Taken in
 * order of their first level, chains go to the stream that fell free
 * earliest (a min-heap keyed by the level after the stream's last chain):
 * interval partitioning, which never puts two overlapping intervals on one
 * stream when the streams allow it, and otherwise overlaps the chain with
 * the stream that frees soonest. Empty streams (free at 0) are taken first,
 * so every stream is used. O(n + chains log streams). */
#include "core/sys.h"
#include "plan/merge.h"

/* A binary min-heap of streams keyed by (free_at, stream). */
static int heap_less(const uint32_t *free_at, uint32_t a, uint32_t b) {
  return free_at[a] != free_at[b] ? free_at[a] < free_at[b] : a < b;
}

static void sift_down(uint32_t *heap, uint32_t size, const uint32_t *free_at, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < size && heap_less(free_at, heap[l], heap[m])) m = l;
    if (r < size && heap_less(free_at, heap[r], heap[m])) m = r;
    if (m == i) return;
    uint32_t t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
}

sg_status sg__merge_by_intervals(sg__work *w, const sg__chain_list *c, uint32_t base,
                                 uint32_t limit) {
  uint32_t *heap = sg__malloc((size_t)limit * sizeof *heap);
  uint32_t *free_at = sg__calloc(limit, sizeof *free_at); /* 1 + last level used; 0: empty */
  if (!heap || !free_at) {
    sg__free(heap);
    sg__free(free_at);
    return sg__oom(w, "merging chains");
  }
  for (uint32_t s = 0; s < limit; s++) heap[s] = s; /* all keys 0: already a heap */
  for (uint32_t k = 0; k < c->count; k++) {
    uint32_t ch = c->sorted[k], s = heap[0], last = 0;
    for (uint32_t x = c->head[ch]; x != SG__NONE; x = w->next[x]) {
      w->out->stream_of[x] = base + s;
      last = w->level[x];
    }
    if (last + 1 > free_at[s]) free_at[s] = last + 1;
    sift_down(heap, limit, free_at, 0);
  }
  sg__free(heap);
  sg__free(free_at);
  return SG_OK;
}

