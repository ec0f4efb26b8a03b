/* Declared buffer access: the edges the declarations imply.
 *
 * Two accesses conflict when their ranges overlap, at least one writes, and
 * they are not both commutative writes; the node created first then runs
 * first. Emitting an edge for every conflicting pair would cost the square
 * of a buffer's accesses (an accumulator written by every layer), so each
 * connected group of overlapping ranges is cut into elementary segments
 * (between consecutive range ends), and each segment is walked in creation
 * order keeping the last plain write, the reads since it and the
 * commutative writes since it. An access then depends on exactly these,
 * which implies every conflicting pair by transitivity: whatever came
 * before the last plain write was ordered before that write when it was
 * added. tests/core/access_infer_test.cpp compares the result's
 * reachability with the all-pairs definition on random graphs. */
#include "core/access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/node.h"
#include "core/sys.h"

void sg__access_table_free(sg__access_table *t) {
  for (uint32_t i = 0; i < t->temp_count; i++) sg__free(t->temps[i].name);
  sg__free(t->temps);
  sg__free(t->acc);
  sg__free(t->binds);
  memset(t, 0, sizeof *t);
}

sg_status sg__access_table_clone(const sg__access_table *src, sg__access_table *dst) {
  memset(dst, 0, sizeof *dst);
  if (src->temp_count) {
    if (!(dst->temps = sg__calloc(src->temp_count, sizeof *dst->temps))) goto oom;
    dst->temp_cap = src->temp_count;
    for (uint32_t i = 0; i < src->temp_count; i++) {
      dst->temps[i] = src->temps[i];
      dst->temps[i].name = NULL;
      dst->temp_count = i + 1;
      if (src->temps[i].name && !(dst->temps[i].name = sg__strdup(src->temps[i].name)))
        goto oom;
    }
  }
  if (src->count) {
    if (!(dst->acc = sg__realloc_array(NULL, src->count, sizeof *dst->acc))) goto oom;
    memcpy(dst->acc, src->acc, (size_t)src->count * sizeof *dst->acc);
    dst->count = dst->cap = src->count;
  }
  if (src->bind_count) {
    if (!(dst->binds = sg__realloc_array(NULL, src->bind_count, sizeof *dst->binds))) goto oom;
    memcpy(dst->binds, src->binds, (size_t)src->bind_count * sizeof *dst->binds);
    dst->bind_count = dst->bind_cap = src->bind_count;
  }
  return SG_OK;
oom:
  sg__access_table_free(dst);
  return SG_ERR_OUT_OF_MEMORY;
}

int sg__access_same_temps(const sg__access_table *a, const sg__access_table *b) {
  if (a->temp_count != b->temp_count || a->bind_count != b->bind_count) return 0;
  for (uint32_t i = 0; i < a->temp_count; i++)
    if (a->temps[i].bytes != b->temps[i].bytes ||
        a->temps[i].alignment != b->temps[i].alignment)
      return 0;
  for (uint32_t i = 0; i < a->bind_count; i++) {
    const sg__temp_bind *x = &a->binds[i], *y = &b->binds[i];
    if (x->node != y->node || x->arg != y->arg || x->temp != y->temp || x->offset != y->offset)
      return 0;
  }
  /* The temporaries' accesses, in declaration order (the caller's memory
   * matters only through the edges, which are compared apart). */
  uint32_t i = 0, j = 0;
  for (;;) {
    while (i < a->count && a->acc[i].temp == SG__NO_TEMP) i++;
    while (j < b->count && b->acc[j].temp == SG__NO_TEMP) j++;
    if (i == a->count || j == b->count) return i == a->count && j == b->count;
    const sg__access *x = &a->acc[i++], *y = &b->acc[j++];
    if (x->node != y->node || x->temp != y->temp || x->start != y->start || x->end != y->end)
      return 0;
  }
}

/* ---- inference ------------------------------------------------------------ */

typedef struct item {
  uint64_t space;            /* 0, or temp + 1 */
  uint64_t start, end;
  uint32_t node;
  int kind;
} item;

static int by_space_start(const void *pa, const void *pb) {
  const item *a = pa, *b = pb;
  if (a->space != b->space) return a->space < b->space ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->node < b->node ? -1 : a->node > b->node;
}

static int by_node(const void *pa, const void *pb) {
  const item *a = pa, *b = pb;
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

static int by_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

typedef struct u64vec {
  uint64_t *v;
  size_t n, cap;
} u64vec;

static int push64(u64vec *x, uint64_t value) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? x->cap * 2 : 64;
    uint64_t *v = sg__realloc_array(x->v, cap, sizeof *v);
    if (!v) return -1;
    x->v = v;
    x->cap = cap;
  }
  x->v[x->n++] = value;
  return 0;
}

typedef struct u32vec {
  uint32_t *v;
  size_t n, cap;
} u32vec;

static int push32(u32vec *x, uint32_t value) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? x->cap * 2 : 16;
    uint32_t *v = sg__realloc_array(x->v, cap, sizeof *v);
    if (!v) return -1;
    x->v = v;
    x->cap = cap;
  }
  x->v[x->n++] = value;
  return 0;
}

static uint64_t edge_key(uint32_t from, uint32_t to) { return (uint64_t)from << 32 | to; }

/* Scratch shared by the components. */
typedef struct infer_work {
  u64vec edges;
  u64vec bounds;             /* a component's range ends */
  u32vec seg_count;          /* per segment: how many items cover it, then fill cursors */
  u32vec seg_items;          /* per segment, the items covering it, in creation order */
  u32vec reads, commutes;    /* a segment's reads / commutative writes since its last write */
} infer_work;

static size_t bound_index(const uint64_t *b, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* One segment's items (creation order, one per node, kinds merged). */
static int walk_segment(infer_work *w, const item *items, const uint32_t *list, size_t n) {
  uint32_t last_write = UINT32_MAX;
  w->reads.n = w->commutes.n = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t node = items[list[k]].node;
    int kind = items[list[k]].kind;
    /* Several accesses of one node to this segment: the strongest counts
     * (a node never mixes a commutative write with a plain access of the
     * same memory: refused when declared). */
    while (k + 1 < n && items[list[k + 1]].node == node) {
      int other = items[list[++k]].kind;
      if (other == SG__ACC_WRITE || (other == SG__ACC_COMMUTE && kind == SG__ACC_READ))
        kind = other;
    }
    if (last_write != UINT32_MAX && push64(&w->edges, edge_key(last_write, node))) return -1;
    if (kind != SG__ACC_COMMUTE)
      for (size_t c = 0; c < w->commutes.n; c++)
        if (push64(&w->edges, edge_key(w->commutes.v[c], node))) return -1;
    if (kind != SG__ACC_READ)
      for (size_t r = 0; r < w->reads.n; r++)
        if (push64(&w->edges, edge_key(w->reads.v[r], node))) return -1;
    if (kind == SG__ACC_READ) {
      if (push32(&w->reads, node)) return -1;
    } else if (kind == SG__ACC_COMMUTE) {
      if (push32(&w->commutes, node)) return -1;
    } else {
      last_write = node;
      w->reads.n = w->commutes.n = 0;
    }
  }
  return 0;
}

/* One connected group of overlapping ranges, items[0..n). */
static int infer_component(infer_work *w, item *items, size_t n) {
  int writes = 0;
  for (size_t i = 0; i < n; i++) writes |= items[i].kind != SG__ACC_READ;
  if (!writes) return 0;
  w->bounds.n = 0;
  for (size_t i = 0; i < n; i++)
    if (push64(&w->bounds, items[i].start) || push64(&w->bounds, items[i].end)) return -1;
  qsort(w->bounds.v, w->bounds.n, sizeof *w->bounds.v, by_u64);
  size_t nb = 0;
  for (size_t i = 0; i < w->bounds.n; i++)
    if (!nb || w->bounds.v[nb - 1] != w->bounds.v[i]) w->bounds.v[nb++] = w->bounds.v[i];
  size_t segs = nb - 1;
  qsort(items, n, sizeof *items, by_node);
  /* Counting pass, then fill: per segment, the items in creation order. */
  w->seg_count.n = 0;
  for (size_t s = 0; s <= segs; s++)
    if (push32(&w->seg_count, 0)) return -1;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    size_t lo = bound_index(w->bounds.v, nb, items[i].start);
    size_t hi = bound_index(w->bounds.v, nb, items[i].end);
    for (size_t s = lo; s < hi; s++) w->seg_count.v[s + 1]++;
    total += hi - lo;
  }
  for (size_t s = 0; s < segs; s++) w->seg_count.v[s + 1] += w->seg_count.v[s];
  w->seg_items.n = 0;
  for (size_t k = 0; k < total; k++)
    if (push32(&w->seg_items, 0)) return -1;
  for (size_t i = 0; i < n; i++) {
    size_t lo = bound_index(w->bounds.v, nb, items[i].start);
    size_t hi = bound_index(w->bounds.v, nb, items[i].end);
    for (size_t s = lo; s < hi; s++) w->seg_items.v[w->seg_count.v[s]++] = (uint32_t)i;
  }
  /* The cursors now stand at each segment's end. */
  for (size_t s = 0; s < segs; s++) {
    uint32_t begin = s ? w->seg_count.v[s - 1] : 0, end = w->seg_count.v[s];
    if (walk_segment(w, items, w->seg_items.v + begin, end - begin)) return -1;
  }
  return 0;
}

sg_status sg__access_infer(const sg__access_table *t, uint32_t node_count, uint64_t **keys,
                           size_t *count) {
  *keys = NULL;
  *count = 0;
  if (t->count < 2) return SG_OK;
  item *items = sg__realloc_array(NULL, t->count, sizeof *items);
  if (!items) return SG_ERR_OUT_OF_MEMORY;
  size_t n = 0;
  for (uint32_t i = 0; i < t->count; i++) {
    const sg__access *a = &t->acc[i];
    if (a->node >= node_count) continue;
    items[n++] = (item){a->temp == SG__NO_TEMP ? 0 : (uint64_t)a->temp + 1, a->start, a->end,
                        a->node, sg__access_kind(a)};
  }
  qsort(items, n, sizeof *items, by_space_start);
  infer_work w = {0};
  int failed = 0;
  for (size_t i = 0; i < n && !failed;) {
    size_t j = i + 1;
    uint64_t reach = items[i].end;
    while (j < n && items[j].space == items[i].space && items[j].start < reach) {
      if (items[j].end > reach) reach = items[j].end;
      j++;
    }
    if (j - i > 1) failed = infer_component(&w, items + i, j - i) != 0;
    i = j;
  }
  sg__free(items);
  sg__free(w.bounds.v);
  sg__free(w.seg_count.v);
  sg__free(w.seg_items.v);
  sg__free(w.reads.v);
  sg__free(w.commutes.v);
  if (failed) {
    sg__free(w.edges.v);
    return SG_ERR_OUT_OF_MEMORY;
  }
  if (w.edges.n) qsort(w.edges.v, w.edges.n, sizeof *w.edges.v, by_u64);
  size_t m = 0;
  for (size_t i = 0; i < w.edges.n; i++)
    if (!m || w.edges.v[m - 1] != w.edges.v[i]) w.edges.v[m++] = w.edges.v[i];
  if (!m) {
    sg__free(w.edges.v);
    return SG_OK;
  }
  *keys = w.edges.v;
  *count = m;
  return SG_OK;
}

/* ---- joining explicit and inferred edges ---------------------------------- */

sg_status sg__access_merge_csr(const uint32_t *from, const uint32_t *to, uint32_t explicit_count,
                               const uint64_t *keys, size_t key_count, uint32_t node_count,
                               uint32_t **succ_start, uint32_t **succ, uint8_t **inferred,
                               uint32_t *edge_count) {
  *succ_start = NULL;
  *succ = NULL;
  *inferred = NULL;
  size_t total = (size_t)explicit_count + key_count;
  if (total >= ((size_t)1 << 31)) return SG_ERR_OUT_OF_MEMORY;
  /* Key with the lowest bit 1 for an inferred edge: after sorting, an
   * explicit duplicate comes first. Node indices are below 2^30. */
  uint64_t *all = sg__realloc_array(NULL, total ? total : 1, sizeof *all);
  uint32_t *start = sg__calloc((size_t)node_count + 1, sizeof *start);
  if (!all || !start) {
    sg__free(all);
    sg__free(start);
    return SG_ERR_OUT_OF_MEMORY;
  }
  for (uint32_t e = 0; e < explicit_count; e++)
    all[e] = ((uint64_t)from[e] << 33) | ((uint64_t)to[e] << 1);
  for (size_t k = 0; k < key_count; k++)
    all[explicit_count + k] = ((keys[k] >> 32) << 33) | ((keys[k] & 0xffffffffu) << 1) | 1;
  qsort(all, total, sizeof *all, by_u64);
  size_t m = 0, inferred_only = 0;
  for (size_t i = 0; i < total; i++) {
    if (m && (all[m - 1] >> 1) == (all[i] >> 1)) continue;
    all[m++] = all[i];
    inferred_only += all[i] & 1;
  }
  uint32_t *s = sg__realloc_array(NULL, m ? m : 1, sizeof *s);
  uint8_t *flag = inferred_only ? sg__malloc(m) : NULL;
  if (!s || (inferred_only && !flag)) {
    sg__free(all);
    sg__free(start);
    sg__free(s);
    sg__free(flag);
    return SG_ERR_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < m; i++) {
    start[(all[i] >> 33) + 1]++;
    s[i] = (uint32_t)((all[i] >> 1) & 0xffffffffu);
    if (flag) flag[i] = (uint8_t)(all[i] & 1);
  }
  for (uint32_t v = 0; v < node_count; v++) start[v + 1] += start[v];
  sg__free(all);
  *succ_start = start;
  *succ = s;
  *inferred = flag;
  *edge_count = (uint32_t)m;
  return SG_OK;
}

/* ---- messages -------------------------------------------------------------- */

static const char *mode_word(int kind) {
  return kind == SG__ACC_READ ? "reads" : kind == SG__ACC_WRITE ? "writes" : "writes (commutative)";
}

static void put_range(const sg__access_table *t, const sg__access *a, uint64_t lo, uint64_t hi,
                      char *buf, size_t cap) {
  if (a->temp == SG__NO_TEMP) {
    snprintf(buf, cap, "[%#llx, %#llx)", (unsigned long long)lo, (unsigned long long)hi);
  } else {
    const char *name = t->temps[a->temp].name;
    if (name)
      snprintf(buf, cap, "bytes [%llu, %llu) of temporary '%.64s' (t%u)", (unsigned long long)lo,
               (unsigned long long)hi, name, a->temp);
    else
      snprintf(buf, cap, "bytes [%llu, %llu) of temporary t%u", (unsigned long long)lo,
               (unsigned long long)hi, a->temp);
  }
}

void sg__access_explain(const sg__access_table *t, uint32_t from, uint32_t to, char *buf,
                        size_t cap) {
  if (cap) buf[0] = 0;
  for (uint32_t i = 0; i < t->count; i++) {
    const sg__access *a = &t->acc[i];
    if (a->node != from) continue;
    for (uint32_t j = 0; j < t->count; j++) {
      const sg__access *b = &t->acc[j];
      if (b->node != to || b->temp != a->temp || b->start >= a->end || a->start >= b->end)
        continue;
      int ka = sg__access_kind(a), kb = sg__access_kind(b);
      if (ka == SG__ACC_READ && kb == SG__ACC_READ) continue;
      if (ka == SG__ACC_COMMUTE && kb == SG__ACC_COMMUTE) continue;
      char range[160];
      put_range(t, a, a->start > b->start ? a->start : b->start, a->end < b->end ? a->end : b->end,
                range, sizeof range);
      snprintf(buf, cap, "#%u %s and #%u %s %s", from, mode_word(ka), to, mode_word(kb), range);
      return;
    }
  }
}

static sg_status check_mix(const sg__access_table *t, const sg__node *nodes,
                           uint32_t node_count, const char *fn);

sg_status sg__access_check(const sg__access_table *t, const sg__node *nodes,
                           uint32_t node_count, const char *fn) {
  sg_status st = check_mix(t, nodes, node_count, fn);
  if (st || !t->bind_count) return st;
  /* (node, temp) of every access to a temporary, sorted, to look each
   * binding up. */
  uint64_t *have = sg__realloc_array(NULL, t->count ? t->count : 1, sizeof *have);
  if (!have) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  size_t n = 0;
  for (uint32_t i = 0; i < t->count; i++)
    if (t->acc[i].temp != SG__NO_TEMP) have[n++] = edge_key(t->acc[i].node, t->acc[i].temp);
  qsort(have, n, sizeof *have, by_u64);
  for (uint32_t b = 0; b < t->bind_count && !st; b++) {
    const sg__temp_bind *bind = &t->binds[b];
    if (bind->node >= node_count) continue;
    const sg__node *node = &nodes[bind->node];
    char label[SG__LABEL_BYTES];
    uint64_t key = edge_key(bind->node, bind->temp);
    size_t at = bound_index(have, n, key);
    int slot_ok = bind->arg == SG__BIND_MEMSET_DST ? node->kind == SG__NODE_MEMSET
                  : bind->arg >= SG__BIND_COPY_DST ? node->kind == SG__NODE_COPY
                                                   : 1;
    if (bind->arg >= SG__BIND_COPY_DST && slot_ok) {
      /* a copy's or memset's side: its size was checked when set */
    } else if (!slot_ok || node->kind != SG__NODE_KERNEL || bind->arg >= node->u.kernel.arg_count ||
               node->u.kernel.arg_sizes[bind->arg] != sizeof(void *))
      st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: node %s binds temporary t%u to kernel argument %u, which it does not "
                    "have as a pointer-sized argument",
                    fn, sg__node_label(node, bind->node, label), bind->temp, bind->arg);
    else if (at == n || have[at] != key)
      st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: node %s binds temporary t%u to argument %u but declares no access to "
                    "it; declare the access (sg_graph_declare_access), from which its lifetime "
                    "and order are planned",
                    fn, sg__node_label(node, bind->node, label), bind->temp, bind->arg);
  }
  sg__free(have);
  return st;
}

static int by_node_space_start(const void *pa, const void *pb) {
  const sg__access *a = *(const sg__access *const *)pa, *b = *(const sg__access *const *)pb;
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  if (a->temp != b->temp) return a->temp < b->temp ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

/* Per node, its accesses by address: a commutative and a plain one that
 * overlap are refused. */
static sg_status check_mix(const sg__access_table *t, const sg__node *nodes,
                           uint32_t node_count, const char *fn) {
  int any = 0;
  for (uint32_t i = 0; i < t->count && !any; i++) any = t->acc[i].commutative;
  if (!any) return SG_OK;
  const sg__access **v = sg__realloc_array(NULL, t->count, sizeof *v);
  if (!v) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  for (uint32_t i = 0; i < t->count; i++) v[i] = &t->acc[i];
  qsort(v, t->count, sizeof *v, by_node_space_start);
  sg_status st = SG_OK;
  for (uint32_t i = 0; i < t->count && !st; i++) {
    for (uint32_t j = i + 1; j < t->count && !st; j++) {
      const sg__access *a = v[i], *b = v[j];
      if (b->node != a->node || b->temp != a->temp || b->start >= a->end) break;
      if (a->commutative == b->commutative || a->node >= node_count) continue;
      char label[SG__LABEL_BYTES], ra[160], rb[160];
      put_range(t, a, a->start, a->end, ra, sizeof ra);
      put_range(t, b, b->start, b->end, rb, sizeof rb);
      st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: node %s declares a commutative write and a plain access of overlapping "
                    "memory (%s and %s); declare one kind of access for these bytes",
                    fn, sg__node_label(&nodes[a->node], a->node, label), ra, rb);
    }
  }
  sg__free(v);
  return st;
}

/* ---- copies and memsets with temporaries -------------------------------------- */

/* `bytes` from the bound offset must stay inside the temporary. */
static sg_status check_fit(const sg__access_table *t, const sg__temp_bind *b, size_t bytes,
                           const char *fn) {
  size_t end;
  if (!sg__add_overflows(b->offset, bytes, &end) && end <= t->temps[b->temp].bytes) return SG_OK;
  return sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: node #%u: %zu bytes from offset %zu run past the end of temporary t%u "
                  "(%zu bytes)",
                  fn, b->node, bytes, b->offset, b->temp, t->temps[b->temp].bytes);
}

sg_status sg__access_temp_sides(const sg__access_table *t, uint32_t node,
                                const sg_copy_desc *desc, const char *fn, unsigned *sides) {
  *sides = 0;
  for (uint32_t i = 0; i < t->bind_count; i++) {
    const sg__temp_bind *b = &t->binds[i];
    if (b->node != node || (b->arg != SG__BIND_COPY_DST && b->arg != SG__BIND_COPY_SRC)) continue;
    *sides |= b->arg == SG__BIND_COPY_DST ? SG__TEMP_DST : SG__TEMP_SRC;
    sg_status st = desc ? check_fit(t, b, desc->bytes, fn) : SG_OK;
    if (st) return st;
  }
  return SG_OK;
}

sg_status sg__access_memset_temp(const sg__access_table *t, uint32_t node,
                                 const sg_memset_desc *desc, const char *fn, unsigned *sides) {
  *sides = 0;
  for (uint32_t i = 0; i < t->bind_count; i++) {
    const sg__temp_bind *b = &t->binds[i];
    if (b->node != node || b->arg != SG__BIND_MEMSET_DST) continue;
    *sides = SG__TEMP_DST;
    size_t bytes;
    if (!desc) return SG_OK;
    if (desc->element_size && b->offset % desc->element_size)
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: node #%u: offset %zu in temporary t%u is not aligned to element_size "
                      "%u", fn, node, b->offset, b->temp, desc->element_size);
    if (sg__mul_overflows(desc->count, desc->element_size, &bytes)) bytes = SIZE_MAX;
    return check_fit(t, b, bytes, fn);
  }
  return SG_OK;
}
