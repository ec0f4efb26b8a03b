/* Planned temporaries: happens-before by vector clocks, then offsets in one
 * arena (plan/memplan.h says when two temporaries may share bytes).
 *
 * Packing. Temporaries whose uses the plan orders may share bytes; the
 * others conflict. The offsets come from two heuristics:
 *  - greedy: temporaries one by one, each at the gap between the
 *    conflicting ones already placed that fits it with the least waste (or
 *    the lowest), in several orders (by size; size times lifetime;
 *    lifetime), then "squeaky wheel" rounds (the temporary ending highest
 *    moves earlier) and orders by size with random noise, within a budget
 *    of pair checks; last, orders weighing each temporary by the total
 *    size of those it conflicts with, and squeaky-wheel rounds from the
 *    best of them. Quadratic in the temporaries (a conflict bit matrix).
 *  - a sweep in issue order over the arena's regions (pack_sweep below),
 *    near-linear: free regions wait in lists by size class, so a placement
 *    looks at few of them.
 * Up to GREEDY_MAX temporaries both run and the smaller arena wins; above,
 * the sweep alone, so that planning 10,000 temporaries stays a small part
 * of creating the executable (bench/memplan_bench.c measures both). */
#include "plan/memplan.h"
#include "plan/memplan_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/sys.h"

#define NONE UINT32_MAX
#define GREEDY_MAX 1024u
/* Rounds of squeaky-wheel improvement after the greedy passes. */
#define SQUEAKY_ROUNDS 64
#define SQUEAKY_WORK ((uint64_t)2 << 20)
/* Randomised restarts after it: rounds, and pair checks in all. */
#define RESTART_ROUNDS 256
#define RESTART_WORK ((uint64_t)2 << 20)
/* The most cells (chains x nodes, or chains x temporaries) a table spends
 * when happens-before is graph reachability; nodes past the chains tracked
 * are ordered only through what they pass on (so less reuse, never wrong). */
#define DAG_CELLS ((size_t)1 << 22)

/* ---- happens-before ------------------------------------------------------- */


void sg__mp_clocks_free(sg__mp_clocks *c) {
  sg__free(c->chain_of);
  sg__free(c->pos);
  sg__free(c->known);
  sg__free(c->rank);
  memset(c, 0, sizeof *c);
}

static int clocks_alloc(sg__mp_clocks *c, uint32_t n, uint32_t width) {
  size_t cells;
  c->n = n;
  c->width = width ? width : 1;
  if (sg__mul_overflows((size_t)n ? n : 1, c->width, &cells)) return -1;
  c->chain_of = sg__malloc(((size_t)n + 1) * sizeof *c->chain_of);
  c->pos = sg__calloc((size_t)n + 1, sizeof *c->pos);
  c->known = sg__calloc(cells, sizeof *c->known);
  c->rank = sg__malloc(((size_t)n + 1) * sizeof *c->rank);
  if (!c->chain_of || !c->pos || !c->known || !c->rank) return -1;
  return 0;
}

/* Streams and events: a node starts after the nodes before it on its
 * stream, and after each node whose event it waits for, with everything
 * those knew. One pass over the issue order, which enqueues every record
 * before the waits on it. */
static int clocks_schedule(const sg__schedule *s, sg__mp_clocks *c) {
  uint32_t n = s->node_count, w = s->stream_count;
  if (clocks_alloc(c, n, w)) return -1;
  c->chains = w;
  for (uint32_t v = 0; v < n; v++) {
    c->chain_of[v] = s->stream_of[v];
    c->pos[v] = s->position[v];
  }
  for (uint32_t k = 0; k < n; k++) {
    uint32_t v = s->order[k], st = s->stream_of[v], p = s->position[v];
    uint32_t *row = c->known + (size_t)v * c->width;
    c->rank[v] = k;
    if (p > 0) {
      uint32_t prev = s->stream_nodes[s->stream_start[st] + p - 1];
      memcpy(row, c->known + (size_t)prev * c->width, c->width * sizeof *row);
    }
    row[st] = p;
    for (uint32_t i = s->wait_start[v]; i < s->wait_start[v + 1]; i++) {
      uint32_t x = s->event_node[s->wait_event[i]];
      const uint32_t *xr = c->known + (size_t)x * c->width;
      for (uint32_t j = 0; j < w; j++) row[j] = xr[j] > row[j] ? xr[j] : row[j];
      if (s->position[x] + 1 > row[s->stream_of[x]]) row[s->stream_of[x]] = s->position[x] + 1;
    }
  }
  return 0;
}

/* Graph reachability: chains form a path cover built in issue order (a
 * node continues the chain of a predecessor that ends it), clocks flow
 * along every edge. The cover comes first, from the edges alone, so that
 * the clocks get one column per chain it needs; past `max_chains` the
 * longest chains keep theirs (they order the most nodes) and the nodes of
 * the others are ordered only through what they pass on. */
static void cover_dag(const sg__schedule *s, const uint32_t *pred_start, const uint32_t *pred,
                      uint32_t *chain_of, uint32_t *pos, uint32_t *tail, uint32_t *len,
                      uint32_t *chains) {
  uint32_t used = 0;
  for (uint32_t k = 0; k < s->node_count; k++) {
    uint32_t v = s->order[k], chain = NONE;
    for (uint32_t i = pred_start[v]; i < pred_start[v + 1] && chain == NONE; i++)
      if (tail[chain_of[pred[i]]] == pred[i]) chain = chain_of[pred[i]];
    if (chain == NONE) chain = used++;
    chain_of[v] = chain;
    pos[v] = len[chain]++;
    tail[chain] = v;
  }
  *chains = used;
}

static int by_length_desc(const void *a, const void *b) {
  const uint32_t *x = a, *y = b; /* (length, chain) pairs */
  if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Keeps the `width` longest of `chains` chains, numbered 0.. by length;
 * the nodes of the others get NONE. */
static int keep_longest(uint32_t n, uint32_t chains, uint32_t width, const uint32_t *len,
                        uint32_t *chain_of) {
  if (chains <= width) return 0;
  uint32_t *pairs = sg__malloc((size_t)chains * 2 * sizeof *pairs);
  uint32_t *renum = sg__malloc((size_t)chains * sizeof *renum);
  if (!pairs || !renum) {
    sg__free(pairs);
    sg__free(renum);
    return -1;
  }
  for (uint32_t c = 0; c < chains; c++) pairs[2 * c] = len[c], pairs[2 * c + 1] = c;
  qsort(pairs, chains, 2 * sizeof *pairs, by_length_desc);
  for (uint32_t r = 0; r < chains; r++) renum[pairs[2 * r + 1]] = r < width ? r : NONE;
  for (uint32_t v = 0; v < n; v++) chain_of[v] = renum[chain_of[v]];
  sg__free(pairs);
  sg__free(renum);
  return 0;
}

int sg__mp_clocks_build_edges(const sg__schedule *s, const uint32_t *succ_start,
                              const uint32_t *succ, uint32_t max_chains, sg__mp_clocks *c) {
  memset(c, 0, sizeof *c);
  uint32_t n = s->node_count, m = succ_start[n], chains = 0;
  uint32_t *pred_start = sg__calloc((size_t)n + 2, sizeof *pred_start);
  uint32_t *pred = sg__malloc(((size_t)m + 1) * sizeof *pred);
  uint32_t *chain_of = sg__malloc(((size_t)n + 1) * sizeof *chain_of);
  uint32_t *pos = sg__malloc(((size_t)n + 1) * sizeof *pos);
  uint32_t *tail = sg__malloc(((size_t)n + 1) * sizeof *tail);
  uint32_t *len = sg__calloc((size_t)n + 1, sizeof *len);
  int failed = !pred_start || !pred || !chain_of || !pos || !tail || !len;
  if (!failed) {
    for (uint32_t e = 0; e < m; e++) pred_start[succ[e] + 2]++;
    for (uint32_t v = 0; v < n; v++) pred_start[v + 2] += pred_start[v + 1];
    for (uint32_t u = 0; u < n; u++)
      for (uint32_t e = succ_start[u]; e < succ_start[u + 1]; e++)
        pred[pred_start[succ[e] + 1]++] = u;
    cover_dag(s, pred_start, pred, chain_of, pos, tail, len, &chains);
  }
  uint32_t width = chains < max_chains ? chains : max_chains;
  if (!width) width = 1;
  failed = failed || keep_longest(n, chains, width, len, chain_of) || clocks_alloc(c, n, width);
  if (!failed) {
    c->chains = chains < width ? chains : width;
    memcpy(c->chain_of, chain_of, (size_t)n * sizeof *chain_of);
    memcpy(c->pos, pos, (size_t)n * sizeof *pos);
    for (uint32_t k = 0; k < n; k++) {
      uint32_t v = s->order[k];
      uint32_t *row = c->known + (size_t)v * c->width;
      c->rank[v] = k;
      for (uint32_t i = pred_start[v]; i < pred_start[v + 1]; i++) {
        uint32_t p = pred[i], cp = c->chain_of[p];
        const uint32_t *pr = c->known + (size_t)p * c->width;
        for (uint32_t j = 0; j < c->chains; j++) row[j] = pr[j] > row[j] ? pr[j] : row[j];
        if (cp != NONE && c->pos[p] + 1 > row[cp]) row[cp] = c->pos[p] + 1;
      }
    }
  }
  sg__free(pred_start);
  sg__free(pred);
  sg__free(chain_of);
  sg__free(pos);
  sg__free(tail);
  sg__free(len);
  return failed ? -1 : 0;
}

int sg__mp_clocks_build(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                        uint32_t temps, sg__mp_clocks *c) {
  memset(c, 0, sizeof *c);
  if (s->streams_planned) return clocks_schedule(s, c);
  /* The clocks and the temporaries' per-chain rows each stay within DAG_CELLS. */
  const size_t rows = s->node_count > temps ? s->node_count : temps;
  const size_t most = rows ? DAG_CELLS / rows : DAG_CELLS;
  return sg__mp_clocks_build_edges(s, succ_start, succ,
                                   most > UINT32_MAX ? UINT32_MAX : most ? (uint32_t)most : 1, c);
}

/* ---- temporaries and their uses -------------------------------------------- */



void sg__mp_temps_free(sg__mp_temps *x) {
  sg__free(x->t);
  sg__free(x->need_chain);
  sg__free(x->need);
  sg__free(x->min_known);
  sg__free(x->use_start);
  sg__free(x->use);
  memset(x, 0, sizeof *x);
}


/* Each temporary's distinct uses, as compressed lists (a counting sort by
 * temporary; each list is short, and duplicates are dropped in place). */
int sg__mp_temps_uses(const sg__access_table *t, uint32_t node_count, sg__mp_temps *x) {
  uint32_t T = t->temp_count;
  x->use_start = sg__calloc((size_t)T + 2, sizeof *x->use_start);
  x->use = sg__malloc(((size_t)t->count + 1) * sizeof *x->use);
  if (!x->use_start || !x->use) return -1;
  for (uint32_t i = 0; i < t->count; i++)
    if (t->acc[i].temp != SG__NO_TEMP && t->acc[i].node < node_count)
      x->use_start[t->acc[i].temp + 2]++;
  for (uint32_t k = 0; k < T; k++) x->use_start[k + 2] += x->use_start[k + 1];
  for (uint32_t i = 0; i < t->count; i++)
    if (t->acc[i].temp != SG__NO_TEMP && t->acc[i].node < node_count)
      x->use[x->use_start[t->acc[i].temp + 1]++] = t->acc[i].node;
  /* use_start[k] .. use_start[k + 1] now bound temporary k's uses. */
  uint32_t out = 0;
  for (uint32_t k = 0; k < T; k++) {
    uint32_t begin = x->use_start[k], end = x->use_start[k + 1];
    x->use_start[k] = out;
    for (uint32_t i = begin; i < end; i++) {
      uint32_t u = x->use[i], j = x->use_start[k];
      while (j < out && x->use[j] != u) j++;
      if (j == out) x->use[out++] = u;
    }
  }
  x->use_start[T] = out;
  return 0;
}

/* One pass over the accesses (no grouping by temporary: each access folds
 * its node into its temporary's record and per-chain rows), then each
 * temporary's needs gathered from its row into (chain, count) pairs. */
int sg__mp_temps_build(const sg__access_table *t, const sg__mp_clocks *c, sg__mp_temps *x) {
  memset(x, 0, sizeof *x);
  uint32_t T = t->temp_count, w = c->width;
  size_t cells;
  if (sg__mul_overflows((size_t)T ? T : 1, w, &cells)) return -1;
  x->count = T;
  x->width = w;
  x->t = sg__calloc((size_t)T + 1, sizeof *x->t);
  x->need_chain = sg__malloc(((size_t)t->count + 1) * sizeof *x->need_chain);
  x->need = sg__malloc(((size_t)t->count + 1) * sizeof *x->need);
  x->min_known = sg__malloc(cells * sizeof *x->min_known);
  /* temp x chain: 1 + the last position on the chain among its uses (0: none) */
  uint32_t *need = sg__calloc(cells, sizeof *need);
  if (!x->t || !x->need_chain || !x->need || !x->min_known || !need) {
    sg__free(need);
    return -1;
  }
  memset(x->min_known, 0xff, cells * sizeof *x->min_known); /* NONE everywhere */
  for (uint32_t k = 0; k < T; k++) x->t[k].first = NONE;
  for (uint32_t i = 0; i < t->count; i++) {
    uint32_t k = t->acc[i].temp, u = t->acc[i].node;
    if (k == SG__NO_TEMP || u >= c->n) continue;
    sg__mp_tinfo *ti = &x->t[k];
    uint32_t r = c->rank[u], ch = c->chain_of[u];
    ti->used = 1;
    ti->first = r < ti->first ? r : ti->first;
    ti->last = r > ti->last ? r : ti->last;
    uint32_t *mk = x->min_known + (size_t)k * w;
    const uint32_t *row = c->known + (size_t)u * w;
    for (uint32_t j = 0; j < w; j++) mk[j] = row[j] < mk[j] ? row[j] : mk[j];
    if (ch == NONE) {
      ti->untracked = 1;
    } else {
      uint32_t *slot = need + (size_t)k * w + ch, p = c->pos[u] + 1;
      *slot = p > *slot ? p : *slot;
    }
  }
  uint32_t pairs = 0;
  for (uint32_t k = 0; k < T; k++) {
    sg__mp_tinfo *ti = &x->t[k];
    ti->size = t->temps[k].bytes;
    ti->align = t->temps[k].alignment;
    ti->need_start = pairs;
    const uint32_t *row = need + (size_t)k * w;
    /* Written always, kept when non-zero (no branch to mispredict: the
     * arrays have room for one more than the accesses). */
    for (uint32_t j = 0; j < w; j++) {
      x->need_chain[pairs] = j;
      x->need[pairs] = row[j];
      pairs += row[j] != 0;
    }
    ti->need_count = pairs - ti->need_start;
  }
  sg__free(need);
  return 0;
}

/* Every use of a finishes before any use of b starts. */
int sg__mp_precedes(const sg__mp_temps *x, uint32_t a, uint32_t b) {
  const sg__mp_tinfo *A = &x->t[a], *B = &x->t[b];
  if (A->untracked || A->last >= B->first) return 0;
  const uint32_t *mk = x->min_known + (size_t)b * x->width;
  for (uint32_t i = A->need_start; i < A->need_start + A->need_count; i++)
    if (mk[x->need_chain[i]] < x->need[i]) return 0;
  return 1;
}

int sg__mp_conflict(const sg__mp_temps *x, uint32_t a, uint32_t b) {
  return !sg__mp_precedes(x, a, b) && !sg__mp_precedes(x, b, a);
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* The lowest set bit's index (bits != 0). */
static unsigned ctz64(uint64_t bits) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctzll((unsigned long long)bits);
#else
  unsigned i = 0;
  while (!(bits & 1)) bits >>= 1, i++;
  return i;
#endif
}

/* ---- greedy by size ------------------------------------------------------- */

/* qsort's comparators read the table through this (set right before each
 * sort, on the sorting thread). */
static _Thread_local const sg__mp_tinfo *sort_t;

int sg__mp_cmp_size(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_t[a].size != sort_t[b].size) return sort_t[a].size > sort_t[b].size ? -1 : 1;
  if (sort_t[a].first != sort_t[b].first) return sort_t[a].first < sort_t[b].first ? -1 : 1;
  return a < b ? -1 : a > b;
}

int sg__mp_cmp_first(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_t[a].first != sort_t[b].first) return sort_t[a].first < sort_t[b].first ? -1 : 1;
  if (sort_t[a].size != sort_t[b].size) return sort_t[a].size > sort_t[b].size ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* The temporaries with uses, in the order `cmp` gives. */
uint32_t *sg__mp_ordered(const sg__mp_temps *x, int (*cmp)(const void *, const void *), uint32_t *n) {
  *n = 0;
  uint32_t *v = sg__malloc(((size_t)x->count + 1) * sizeof *v);
  if (!v) return NULL;
  for (uint32_t k = 0; k < x->count; k++)
    if (x->t[k].used) v[(*n)++] = k;
  sort_t = x->t;
  qsort(v, *n, sizeof *v, cmp);
  return v;
}

/* Conflicts among the temporaries with uses, as a bit matrix over their
 * places in `v` (computed once for every greedy pass). */
typedef struct conflicts {
  uint32_t n;
  size_t words;
  uint64_t *bits;
} conflicts;

static int conflicts_build(const sg__mp_temps *x, const uint32_t *v, uint32_t n, conflicts *c) {
  c->n = n;
  c->words = ((size_t)n + 63) / 64;
  c->bits = sg__calloc((size_t)n * c->words + 1, sizeof *c->bits);
  if (!c->bits) return -1;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++)
      if (sg__mp_conflict(x, v[i], v[j])) {
        c->bits[(size_t)i * c->words + j / 64] |= (uint64_t)1 << (j % 64);
        c->bits[(size_t)j * c->words + i / 64] |= (uint64_t)1 << (i % 64);
      }
  return 0;
}

static int conflicting(const conflicts *c, uint32_t i, uint32_t j) {
  return c->bits[(size_t)i * c->words + j / 64] >> (j % 64) & 1;
}

/* The orders greedy passes place temporaries in: by a key, largest first. */
static _Thread_local const uint64_t *sort_key;
static int by_key_desc(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_key[a] != sort_key[b]) return sort_key[a] > sort_key[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* One greedy pass: temporaries (places in `v`) in the order `seq`, each at
 * the gap between the conflicting ones already placed that fits it with
 * the least waste (best_fit) or at the lowest that fits. */
static size_t greedy_pass(const sg__mp_temps *x, const uint32_t *v, const conflicts *c,
                          const uint32_t *seq, int best_fit, uint32_t *placed, size_t *offset) {
  uint32_t n = c->n;
  size_t top = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t bi = seq[i];
    const sg__mp_tinfo *B = &x->t[v[bi]];
    size_t prev_end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (uint32_t j = 0; j < i; j++) {
      uint32_t ai = placed[j];
      if (!conflicting(c, ai, bi)) continue;
      size_t cand = align_up(prev_end, B->align), at = offset[v[ai]];
      if (at >= cand && at - cand >= B->size && at - cand - B->size < best_gap) {
        best = cand;
        best_gap = best_fit ? at - cand - B->size : 0;
        if (!best_fit) break;
      }
      size_t end = at + x->t[v[ai]].size;
      if (end > prev_end) prev_end = end;
    }
    if (best == SIZE_MAX) best = align_up(prev_end, B->align);
    offset[v[bi]] = best;
    if (best + B->size > top) top = best + B->size;
    uint32_t at = i;
    for (; at > 0 && offset[v[placed[at - 1]]] > best; at--) placed[at] = placed[at - 1];
    placed[at] = bi;
  }
  return top;
}

/* Squeaky wheel from order `seq`: each round the temporary that ends
 * highest is placed earlier next time; the best packing seen is kept in
 * offset and *peak. */
static void squeaky(const sg__mp_temps *x, const uint32_t *v, const conflicts *c, uint32_t *seq,
                    int best_fit, uint64_t rounds, uint32_t *placed, size_t *trial,
                    size_t *offset, size_t *peak) {
  uint32_t n = c->n;
  for (uint64_t round = 0; round < rounds; round++) {
    size_t top = greedy_pass(x, v, c, seq, best_fit, placed, trial);
    if (top < *peak) {
      *peak = top;
      memcpy(offset, trial, (size_t)x->count * sizeof *offset);
    }
    uint32_t worst = 0;
    for (uint32_t i = 1; i < n; i++)
      if (trial[v[seq[i]]] + x->t[v[seq[i]]].size > trial[v[seq[worst]]] + x->t[v[seq[worst]]].size)
        worst = i;
    uint32_t to = worst / 2, moved = seq[worst];
    memmove(seq + to + 1, seq + to, (size_t)(worst - to) * sizeof *seq);
    seq[to] = moved;
  }
}

/* Greedy packing under several orders (size; size times lifetime in issue
 * order; lifetime) and both fits, keeping the lowest peak: each pass is
 * cheap once the conflicts are known, and which order wins depends on the
 * graph. */
static int pack_greedy(const sg__mp_temps *x, size_t *offset, size_t *peak) {
  uint32_t n;
  uint32_t *v = sg__mp_ordered(x, sg__mp_cmp_size, &n);
  uint32_t *placed = sg__malloc(((size_t)n + 1) * sizeof *placed);
  uint32_t *seq = sg__malloc(((size_t)n + 1) * sizeof *seq);
  uint64_t *key = sg__malloc(((size_t)n + 1) * sizeof *key);
  size_t *trial = sg__calloc((size_t)x->count + 1, sizeof *trial);
  conflicts c = {0};
  int failed = !v || !placed || !seq || !key || !trial || conflicts_build(x, v, n, &c);
  *peak = SIZE_MAX;
  uint32_t *best_seq = failed ? NULL : sg__malloc(((size_t)n + 1) * sizeof *best_seq);
  int best_fit_of_best = 1;
  failed = failed || !best_seq;
  for (int order = 0; order < 3 && !failed; order++) {
    for (uint32_t i = 0; i < n; i++) {
      const sg__mp_tinfo *T = &x->t[v[i]];
      uint64_t life = (uint64_t)(T->last - T->first) + 1;
      key[i] = order == 0 ? T->size : order == 1 ? T->size * life : life << 32 | (T->size >> 16);
      seq[i] = i;
    }
    sort_key = key;
    qsort(seq, n, sizeof *seq, by_key_desc);
    for (int best_fit = 1; best_fit >= 0; best_fit--) {
      size_t top = greedy_pass(x, v, &c, seq, best_fit, placed, trial);
      if (top < *peak) {
        *peak = top;
        memcpy(offset, trial, (size_t)x->count * sizeof *offset);
        memcpy(best_seq, seq, (size_t)n * sizeof *seq);
        best_fit_of_best = best_fit;
      }
    }
  }
  /* Squeaky wheel: the temporary that ends highest is placed earlier
   * next time; the best packing seen is kept. */
  if (!failed && n > 1) memcpy(seq, best_seq, (size_t)n * sizeof *seq);
  /* As many rounds as fit a budget of pair checks (each round is n^2/2). */
  uint64_t pairs = (uint64_t)n * n / 2 + 1;
  uint64_t rounds = SQUEAKY_WORK / pairs < SQUEAKY_ROUNDS ? SQUEAKY_WORK / pairs : SQUEAKY_ROUNDS;
  if (!failed && n > 1)
    squeaky(x, v, &c, seq, best_fit_of_best, rounds, placed, trial, offset, peak);
  /* Then orders by size with random noise (a fixed sequence: the plan is
   * reproducible), while the budget lasts. */
  uint64_t lcg = 0x9e3779b97f4a7c15ull;
  uint64_t restarts = RESTART_WORK / pairs < RESTART_ROUNDS ? RESTART_WORK / pairs : RESTART_ROUNDS;
  for (uint64_t round = 0; round < restarts && !failed && n > 1; round++) {
    for (uint32_t i = 0; i < n; i++) {
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      const sg__mp_tinfo *T = &x->t[v[i]];
      uint64_t noise = 1024 + ((lcg >> 33) % 1024); /* 1x to 2x */
      uint64_t life = (uint64_t)(T->last - T->first) + 1;
      key[i] = (round & 1 ? T->size * life : (uint64_t)T->size) / 1024 * noise;
      seq[i] = i;
    }
    sort_key = key;
    qsort(seq, n, sizeof *seq, by_key_desc);
    size_t top = greedy_pass(x, v, &c, seq, (int)(round >> 1 & 1), placed, trial);
    if (top < *peak) {
      *peak = top;
      memcpy(offset, trial, (size_t)x->count * sizeof *offset);
    }
  }
  /* Last, orders that weigh each temporary by what it may be live with:
   * the total size of the temporaries it conflicts with (a large one beside
   * much else is the hardest to fit late). They come after the passes
   * above, so they only ever lower the peak those reach. */
  double *weight = failed ? NULL : sg__calloc((size_t)n + 1, sizeof *weight);
  failed = failed || !weight;
  for (uint32_t i = 0; i < n && !failed; i++) {
    const uint64_t *row = c.bits + (size_t)i * c.words;
    for (size_t wd = 0; wd < c.words; wd++)
      for (uint64_t bits = row[wd]; bits; bits &= bits - 1) {
        uint32_t j = (uint32_t)(wd * 64 + (uint32_t)ctz64(bits));
        weight[i] += (double)x->t[v[j]].size;
      }
  }
  size_t weighed_peak = SIZE_MAX;
  for (int order = 0; order < 3 && !failed && n > 1; order++) {
    for (uint32_t i = 0; i < n; i++) {
      double size = (double)x->t[v[i]].size, k;
      if (order == 0) k = size * (weight[i] + size);
      else if (order == 1) k = size * size * (weight[i] / 262144.0 + 1);
      else k = size * 1048576.0 + weight[i] / 64; /* by size, the heavier first */
      key[i] = k < 1.8e19 ? (uint64_t)k : UINT64_MAX;
      seq[i] = i;
    }
    sort_key = key;
    qsort(seq, n, sizeof *seq, by_key_desc);
    for (int best_fit = 1; best_fit >= 0; best_fit--) {
      size_t top = greedy_pass(x, v, &c, seq, best_fit, placed, trial);
      if (top < *peak) {
        *peak = top;
        memcpy(offset, trial, (size_t)x->count * sizeof *offset);
      }
      if (top < weighed_peak) {
        weighed_peak = top;
        memcpy(best_seq, seq, (size_t)n * sizeof *seq);
        best_fit_of_best = best_fit;
      }
    }
  }
  /* Then these orders with random noise, while a budget like the first
   * restarts' lasts (1x to 2x on each key; the fixed sequence above goes
   * on, so plans stay reproducible). */
  for (uint64_t round = 0; round < restarts && !failed && n > 1; round++) {
    for (uint32_t i = 0; i < n; i++) {
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      double noise = 1.0 + (double)((lcg >> 33) % 1024) / 1024.0, size = (double)x->t[v[i]].size;
      double k = round % 3 == 0   ? size * (weight[i] + size)
                 : round % 3 == 1 ? size * size * (weight[i] / 262144.0 + 1)
                                  : size * 1048576.0 + weight[i] / 64;
      k *= noise;
      key[i] = k < 1.8e19 ? (uint64_t)k : UINT64_MAX;
      seq[i] = i;
    }
    sort_key = key;
    qsort(seq, n, sizeof *seq, by_key_desc);
    size_t top = greedy_pass(x, v, &c, seq, (int)(round >> 1 & 1), placed, trial);
    if (top < *peak) {
      *peak = top;
      memcpy(offset, trial, (size_t)x->count * sizeof *offset);
    }
  }
  /* And the squeaky wheel again, from the best of the weighted orders. */
  if (!failed && n > 1) {
    memcpy(seq, best_seq, (size_t)n * sizeof *seq);
    squeaky(x, v, &c, seq, best_fit_of_best, rounds, placed, trial, offset, peak);
  }
  sg__free(weight);
  sg__free(best_seq);
  sg__free(v);
  sg__free(placed);
  sg__free(seq);
  sg__free(key);
  sg__free(trial);
  sg__free(c.bits);
  return failed ? -1 : 0;
}

/* ---- sweep in issue order --------------------------------------------------- */

/* The arena as regions in address order (a linked list). A region holds
 * its last owner, or none: never used, or free for every temporary still
 * to place (its owner precedes them all, so it is as good as fresh, and
 * merges with fresh neighbours). A region whose owner's last use comes at
 * or after the next temporary's first use cannot be free for it: such
 * regions wait in a heap ordered by that last use, and become candidates
 * once the sweep passes it. Candidates sit in lists by size class (the
 * power of two below their length), so a placement looks only at classes
 * that can hold it, smallest first, and stops once no larger class can
 * waste less: this keeps the sweep near-linear with thousands of
 * temporaries live at once. A temporary goes into one candidate region
 * (best fit), or the free region at the arena's end, which then grows. */
#define INLINE_PAIRS 4
#define BINS 64
#define NOT_CAND 0xffu

typedef struct region {
  size_t off, end;
  uint32_t prev, next;       /* neighbours in address order, NONE at the ends */
  uint32_t owner;            /* NONE: fresh */
  uint32_t last;             /* the owner's last use (rank) */
  uint32_t bprev, bnext;     /* neighbours in its size class's list, while a candidate;
                                bnext: the next busy region due at the same rank */
  uint32_t owned_at;         /* its place among the owned candidates, NONE if not there */
  uint32_t block_chain, block_need; /* the (chain, count) that last kept this candidate from
                                       being free (need 0: none yet); a temporary that does
                                       not know that much is turned away at once */
  uint8_t bin;               /* its size class, NOT_CAND while busy */
  uint8_t untracked, pairs;  /* pairs: inline, or INLINE_PAIRS + 1: read the owner's record */
  uint16_t chain[INLINE_PAIRS];
  uint32_t need[INLINE_PAIRS];
} region;

/* An owned candidate, and the pair that last kept it from being fresh. */
typedef struct owned {
  uint32_t k, chain, need;
} owned;

typedef struct arena_map {
  region *r;
  uint32_t count, tail;      /* regions made; the last region in address order */
  uint32_t head[BINS];       /* each size class's candidates */
  uint64_t nonempty;         /* bit j: class j has candidates */
  uint32_t cand_count;
  owned *owned;              /* the candidates that have an owner, densely: the pass making
                                regions fresh walks them */
  uint32_t owned_count;
  uint32_t *due, due_at;     /* busy regions by their owner's last use (linked by bnext);
                                due_at: the ranks before it are done */
  uint32_t spare;            /* regions merged away, for reuse (linked by `next`): the
                                live ones stay few and close together in memory */
} arena_map;

static unsigned size_class(size_t len) {
  unsigned j = 0;
#if defined(__GNUC__) || defined(__clang__)
  if (len) j = 63u - (unsigned)__builtin_clzll((unsigned long long)len);
#else
  while (len >>= 1) j++;
#endif
  return j < BINS ? j : BINS - 1;
}

static void own(region *r, const sg__mp_temps *x, uint32_t a) {
  const sg__mp_tinfo *A = &x->t[a];
  r->owner = a;
  r->last = A->last;
  r->untracked = (uint8_t)A->untracked;
  if (A->need_count > INLINE_PAIRS || x->width > UINT16_MAX) {
    r->pairs = INLINE_PAIRS + 1;
    return;
  }
  r->pairs = (uint8_t)A->need_count;
  for (uint32_t i = 0; i < A->need_count; i++) {
    r->chain[i] = (uint16_t)x->need_chain[A->need_start + i];
    r->need[i] = x->need[A->need_start + i];
  }
}

/* The region's owner finishes before anything that starts no earlier than
 * rank `first` knowing `known` (per chain) finished: free for a temporary
 * (its min_known), or for every temporary still to place (their least).
 * When not, the pair that kept it is left in *chain, *need (need NONE: it
 * never will be), so that the next test can be turned away at once. */
static int region_before(const region *r, const sg__mp_temps *x, uint32_t first,
                         const uint32_t *known, uint32_t *chain, uint32_t *need) {
  if (r->owner == NONE) return 1;
  if (r->untracked || r->last >= first) {
    *chain = 0;
    *need = r->untracked ? NONE : 0;
    return 0;
  }
  if (r->pairs <= INLINE_PAIRS) {
    for (uint32_t i = 0; i < r->pairs; i++)
      if (known[r->chain[i]] < r->need[i]) {
        *chain = r->chain[i];
        *need = r->need[i];
        return 0;
      }
    return 1;
  }
  const sg__mp_tinfo *A = &x->t[r->owner];
  for (uint32_t i = A->need_start; i < A->need_start + A->need_count; i++)
    if (known[x->need_chain[i]] < x->need[i]) {
      *chain = x->need_chain[i];
      *need = x->need[i];
      return 0;
    }
  return 1;
}

static void owned_add(arena_map *a, uint32_t k) {
  a->r[k].owned_at = a->owned_count;
  a->owned[a->owned_count].k = k;
  a->owned[a->owned_count].need = 0;
  a->owned_count++;
}

static void owned_remove(arena_map *a, uint32_t k) {
  uint32_t at = a->r[k].owned_at, last = --a->owned_count;
  a->owned[at] = a->owned[last];
  a->r[a->owned[at].k].owned_at = at;
  a->r[k].owned_at = NONE;
}

static void cand_add(arena_map *a, uint32_t k) {
  region *r = &a->r[k];
  unsigned j = size_class(r->end - r->off);
  r->bin = (uint8_t)j;
  r->bprev = NONE;
  r->bnext = a->head[j];
  if (r->bnext != NONE) a->r[r->bnext].bprev = k;
  a->head[j] = k;
  a->nonempty |= (uint64_t)1 << j;
  r->block_need = 0;
  a->cand_count++;
  if (r->owner != NONE) owned_add(a, k);
}

static void cand_remove(arena_map *a, uint32_t k) {
  region *r = &a->r[k];
  unsigned j = r->bin;
  if (r->bprev != NONE) a->r[r->bprev].bnext = r->bnext;
  else a->head[j] = r->bnext;
  if (r->bnext != NONE) a->r[r->bnext].bprev = r->bprev;
  if (a->head[j] == NONE) a->nonempty &= ~((uint64_t)1 << j);
  r->bin = NOT_CAND;
  a->cand_count--;
  if (r->owned_at != NONE) owned_remove(a, k);
}

/* After a candidate's bounds (or owner) changed: its class may be another,
 * and what kept it from being free may no longer. */
static void cand_sync(arena_map *a, uint32_t k) {
  region *r = &a->r[k];
  if (r->bin == NOT_CAND) return;
  if (size_class(r->end - r->off) != r->bin) {
    cand_remove(a, k);
    cand_add(a, k);
  }
  r->block_need = 0;
}

/* Busy region `k` becomes a candidate once the sweep passes its owner's
 * last use (a list per rank: the sweep's ranks only grow). */
static void due_push(arena_map *a, uint32_t k) {
  uint32_t at = a->r[k].last;
  a->r[k].bnext = a->due[at];
  a->due[at] = k;
}

/* The regions whose owners' last uses come before rank `first`. */
static void due_release(arena_map *a, uint32_t first) {
  for (; a->due_at < first; a->due_at++)
    for (uint32_t k = a->due[a->due_at]; k != NONE;) {
      uint32_t next = a->r[k].bnext;
      cand_add(a, k);
      k = next;
    }
}

/* A new region [off, end) after region `after` (NONE: at the front). */
static uint32_t insert_after(arena_map *a, uint32_t after, size_t off, size_t end) {
  uint32_t k = a->spare;
  if (k != NONE) a->spare = a->r[k].next;
  else k = a->count++;
  region *r = &a->r[k];
  memset(r, 0, sizeof *r);
  r->off = off;
  r->end = end;
  r->owner = NONE;
  r->bin = NOT_CAND;
  r->owned_at = NONE;
  r->prev = after;
  r->next = after == NONE ? NONE : a->r[after].next;
  if (after != NONE) a->r[after].next = k;
  if (r->next != NONE) a->r[r->next].prev = k;
  if (after == a->tail) a->tail = k;
  return k;
}

/* Fresh candidate `k` absorbs fresh candidate neighbours. */
static void merge_fresh(arena_map *a, uint32_t k) {
  for (int side = 0; side < 2; side++) {
    uint32_t o = side ? a->r[k].next : a->r[k].prev;
    if (o == NONE || a->r[o].owner != NONE || a->r[o].bin == NOT_CAND) continue;
    region *r = &a->r[k], *q = &a->r[o];
    if (side) {
      r->end = q->end;
      r->next = q->next;
      if (q->next != NONE) a->r[q->next].prev = k;
      if (a->tail == o) a->tail = k;
    } else {
      r->off = q->off;
      r->prev = q->prev;
      if (q->prev != NONE) a->r[q->prev].next = k;
    }
    cand_remove(a, o);
    a->r[o].next = a->spare;
    a->spare = o;
    cand_sync(a, k);
  }
}

/* The temporaries with uses by first use: a counting sort on the rank
 * (qsort's comparator calls cost more than the sweep itself). */
static uint32_t *by_first_use(const sg__mp_temps *x, uint32_t nodes, uint32_t *n) {
  *n = 0;
  uint32_t *v = sg__malloc(((size_t)x->count + 1) * sizeof *v);
  uint32_t *at = sg__calloc((size_t)nodes + 1, sizeof *at);
  if (!v || !at) {
    sg__free(v);
    sg__free(at);
    return NULL;
  }
  for (uint32_t k = 0; k < x->count; k++)
    if (x->t[k].used) at[x->t[k].first + 1]++, (*n)++;
  for (uint32_t r = 0; r + 1 < nodes; r++) at[r + 1] += at[r];
  for (uint32_t k = 0; k < x->count; k++)
    if (x->t[k].used) v[at[x->t[k].first]++] = k;
  sg__free(at);
  return v;
}

/* The candidate that fits temporary `b` with the least waste (NONE: none
 * is free for it). Classes below b's cannot hold it; once a fit is found,
 * a class whose smallest region, less an alignment, wastes at least as
 * much cannot do better, and neither can any above it. */
static uint32_t best_candidate(arena_map *a, const sg__mp_temps *x, uint32_t b) {
  const sg__mp_tinfo *B = &x->t[b];
  const uint32_t *mk = x->min_known + (size_t)b * x->width;
  uint32_t best = NONE;
  size_t best_waste = SIZE_MAX;
  for (unsigned j = size_class(B->size); j < BINS; j++) {
    uint64_t rest = a->nonempty >> j;
    if (!rest) break;
    if (!(rest & 1)) continue;
    if (best != NONE) {
      uint64_t low = (uint64_t)1 << j, slack = (uint64_t)B->size + B->align - 1;
      if (low > slack && low - slack >= best_waste) break;
    }
    for (uint32_t k = a->head[j]; k != NONE; k = a->r[k].bnext) {
      region *r = &a->r[k];
      size_t at = align_up(r->off, B->align), end = r->end;
      if (at + B->size > end || end - at - B->size >= best_waste) continue;
      if (r->block_need && mk[r->block_chain] < r->block_need) continue;
      if (!region_before(r, x, B->first, mk, &r->block_chain, &r->block_need)) continue;
      best = k;
      best_waste = end - at - B->size;
      if (best_waste <= B->size / 8) return best; /* close enough: stop looking */
    }
  }
  return best;
}

static int pack_sweep(const sg__mp_temps *x, uint32_t nodes, size_t *offset, size_t *peak) {
  uint32_t n;
  uint32_t *v = by_first_use(x, nodes, &n);
  const uint32_t w = x->width;
  /* A placement makes at most three regions (two pieces and itself, or a
   * gap and itself). */
  size_t cap = 3 * (size_t)n + 4;
  arena_map a;
  memset(&a, 0, sizeof a);
  a.r = sg__malloc(cap * sizeof *a.r);
  a.owned = sg__malloc(cap * sizeof *a.owned);
  a.due = sg__malloc(((size_t)nodes + 1) * sizeof *a.due);
  a.tail = NONE;
  a.spare = NONE;
  for (unsigned j = 0; j < BINS; j++) a.head[j] = NONE;
  /* floor + j * w: per chain, the least known finished by the temporaries
   * from place j of the sweep on (a suffix minimum). */
  uint32_t *floor = sg__malloc(((size_t)n + 1) * w * sizeof *floor);
  if (!v || !a.r || !a.owned || !a.due || !floor) {
    sg__free(v);
    sg__free(a.r);
    sg__free(a.owned);
    sg__free(a.due);
    sg__free(floor);
    return -1;
  }
  for (uint32_t r = 0; r <= nodes; r++) a.due[r] = NONE;
  for (uint32_t c = 0; c < w; c++) floor[(size_t)n * w + c] = NONE;
  for (uint32_t j = n; j-- > 0;) {
    const uint32_t *mk = x->min_known + (size_t)v[j] * w;
    for (uint32_t c = 0; c < w; c++) {
      uint32_t after = floor[(size_t)(j + 1) * w + c];
      floor[(size_t)j * w + c] = mk[c] < after ? mk[c] : after;
    }
  }
  size_t arena = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t b = v[i];
    const sg__mp_tinfo *B = &x->t[b];
    due_release(&a, B->first);
    /* Now and then, candidates that precede everything still to come
     * become fresh. (Walked from the end: a region made fresh leaves the
     * owned list, and the one moved into its place was looked at; merging
     * takes away only fresh regions, which are not listed.) */
    if (i % 16 == 0) {
      const uint32_t *all = floor + (size_t)i * w;
      for (uint32_t l = a.owned_count; l-- > 0;) {
        owned *o = &a.owned[l];
        if (o->need && all[o->chain] < o->need) continue;
        uint32_t k = o->k;
        if (region_before(&a.r[k], x, B->first, all, &o->chain, &o->need)) {
          owned_remove(&a, k);
          a.r[k].owner = NONE;
          a.r[k].block_need = 0;
          merge_fresh(&a, k);
        }
      }
    }
    uint32_t host = best_candidate(&a, x, b), mine, unused_chain, unused_need;
    size_t lo;
    if (host == NONE && a.tail != NONE && a.r[a.tail].bin != NOT_CAND &&
        region_before(&a.r[a.tail], x, B->first, x->min_known + (size_t)b * w, &unused_chain,
                      &unused_need))
      host = a.tail; /* the free region at the end: grow it */
    if (host != NONE) {
      region *r = &a.r[host];
      lo = align_up(r->off, B->align);
      if (lo + B->size > r->end) { /* the end region grows */
        arena = lo + B->size;
        r->end = arena;
        cand_sync(&a, host);
      }
      size_t hi = lo + B->size, r_end = a.r[host].end;
      /* Pieces before and after keep the host's owner and stay candidates. */
      if (hi < r_end) {
        uint32_t after = insert_after(&a, host, hi, r_end);
        region keep = a.r[host];
        a.r[after].owner = keep.owner;
        a.r[after].last = keep.last;
        a.r[after].untracked = keep.untracked;
        a.r[after].pairs = keep.pairs;
        memcpy(a.r[after].chain, keep.chain, sizeof keep.chain);
        memcpy(a.r[after].need, keep.need, sizeof keep.need);
        cand_add(&a, after);
        a.r[host].end = hi;
        cand_sync(&a, host);
      }
      if (lo > a.r[host].off) {
        mine = insert_after(&a, host, lo, hi);
        a.r[host].end = lo;
        cand_sync(&a, host);
      } else {
        mine = host;
        cand_remove(&a, host);
      }
    } else {
      lo = align_up(arena, B->align);
      if (lo > arena) cand_add(&a, insert_after(&a, a.tail, arena, lo));
      mine = insert_after(&a, a.tail, lo, lo + B->size);
      arena = lo + B->size;
    }
    own(&a.r[mine], x, b);
    due_push(&a, mine);
    offset[b] = lo;
  }
  sg__free(v);
  sg__free(a.r);
  sg__free(a.owned);
  sg__free(a.due);
  sg__free(floor);
  *peak = arena;
  return 0;
}

/* ---- the plan --------------------------------------------------------------- */

void sg__memplan_free(sg__memplan *m) {
  sg__free(m->offset);
  memset(m, 0, sizeof *m);
}

static sg_status oom(sg__memplan *out) {
  sg__memplan_free(out);
  return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory planning temporaries");
}

sg_status sg__memplan_build(const sg__schedule *s, const uint32_t *succ_start,
                            const uint32_t *succ, const sg__access_table *t, int reuse,
                            sg__memplan *out) {
  memset(out, 0, sizeof *out);
  out->temp_count = t->temp_count;
  out->dag_order = !s->streams_planned;
  if (!t->temp_count) return SG_OK;
  out->offset = sg__calloc(t->temp_count, sizeof *out->offset);
  if (!out->offset) return oom(out);
  /* Without reuse, and as the comparison figure: each temporary alone.
   * Every packing stays below this plus one alignment per temporary, so a
   * total that fits half the address space leaves the packers no overflow. */
  size_t end = 0;
  for (uint32_t k = 0; k < t->temp_count; k++) {
    size_t at = align_up(end, t->temps[k].alignment);
    if (!reuse) out->offset[k] = at;
    if (sg__add_overflows(at, t->temps[k].bytes, &end) || end > SIZE_MAX / 4 ||
        (size_t)t->temp_count * 4096 > SIZE_MAX / 4 - end) {
      sg__memplan_free(out);
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "planner: the %u temporaries total more bytes than an arena can hold",
                      t->temp_count);
    }
  }
  out->no_reuse_bytes = end;
  if (!reuse) {
    out->arena_bytes = end;
    return SG_OK;
  }
  sg__mp_clocks c;
  sg__mp_temps x;
  memset(&x, 0, sizeof x);
  if (sg__mp_clocks_build(s, succ_start, succ, t->temp_count, &c) ||
      sg__mp_temps_build(t, &c, &x)) {
    sg__mp_clocks_free(&c);
    sg__mp_temps_free(&x);
    return oom(out);
  }
  sg__mp_clocks_free(&c);
  size_t sweep_peak = 0, greedy_peak = SIZE_MAX;
  size_t *alt = NULL;
  int failed = pack_sweep(&x, s->node_count, out->offset, &sweep_peak);
  out->algorithm = 2;
  if (!failed && t->temp_count <= GREEDY_MAX) {
    if (!(alt = sg__calloc(t->temp_count, sizeof *alt))) failed = 1;
    else failed = pack_greedy(&x, alt, &greedy_peak);
    if (!failed && greedy_peak <= sweep_peak) {
      memcpy(out->offset, alt, t->temp_count * sizeof *alt);
      out->algorithm = 1;
    }
  }
  sg__free(alt);
  sg__mp_temps_free(&x);
  if (failed) return oom(out);
  out->arena_bytes = out->algorithm == 1 ? greedy_peak : sweep_peak;
  return SG_OK;
}

