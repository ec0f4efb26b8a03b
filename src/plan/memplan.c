/* Planned temporaries: happens-before by vector clocks, then offsets in one
 * arena (plan/memplan.h says when two temporaries may share bytes).
 *
 * Packing. Temporaries whose uses the plan orders may share bytes; the
 * others conflict. The offsets come from one of two heuristics:
 *  - greedy by size: largest first, each at the lowest-waste gap between
 *    the temporaries already placed that it conflicts with (best fit). The
 *    usual choice for activation memory, within a few percent of the bound
 *    on inference graphs; quadratic in the number of temporaries.
 *  - a sweep in issue order over the arena's regions, each region
 *    remembering the last temporary placed in it: a region is free for B
 *    when that temporary precedes B (precedence is transitive, so the
 *    earlier owners of the region precede B too). Best fit among free runs,
 *    else the arena grows. Linear in the regions per temporary.
 * Up to GREEDY_MAX temporaries both run and the smaller arena wins; above,
 * the sweep alone, so that planning 10,000 temporaries stays a small part
 * of creating the executable. */
#include "plan/memplan.h"

#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/sys.h"

#define NONE UINT32_MAX
#define GREEDY_MAX 2048u
/* Chains tracked when happens-before is graph reachability, and the most
 * clock cells (nodes x chains) spent on it; nodes past the chains tracked
 * are ordered only through what they pass on (so less reuse, never wrong). */
#define DAG_CHAINS 64u
#define DAG_CELLS ((size_t)1 << 24)

/* ---- happens-before ------------------------------------------------------- */

typedef struct clocks {
  uint32_t n, width;         /* nodes, columns per row */
  uint32_t chains;           /* chains in use (<= width) */
  uint32_t *chain_of;        /* node -> chain, NONE when untracked */
  uint32_t *pos;             /* node -> position on its chain */
  uint32_t *known;           /* n x width: nodes of chain c finished before the node starts */
  uint32_t *rank;            /* node -> place in the issue order */
} clocks;

static void clocks_free(clocks *c) {
  sg__free(c->chain_of);
  sg__free(c->pos);
  sg__free(c->known);
  sg__free(c->rank);
  memset(c, 0, sizeof *c);
}

static int clocks_alloc(clocks *c, uint32_t n, uint32_t width) {
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
static int clocks_schedule(const sg__schedule *s, clocks *c) {
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
      for (uint32_t j = 0; j < w; j++)
        if (xr[j] > row[j]) row[j] = xr[j];
      if (s->position[x] + 1 > row[s->stream_of[x]]) row[s->stream_of[x]] = s->position[x] + 1;
    }
  }
  return 0;
}

/* Graph reachability: chains form a path cover built in issue order (a
 * node continues the chain of a predecessor that ends it), clocks flow
 * along every edge. */
static int clocks_dag(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                      clocks *c) {
  uint32_t n = s->node_count;
  uint32_t width = DAG_CHAINS;
  if (n && (size_t)n * width > DAG_CELLS) width = DAG_CELLS / n ? (uint32_t)(DAG_CELLS / n) : 1;
  uint32_t *pred_start = sg__calloc((size_t)n + 2, sizeof *pred_start);
  uint32_t m = succ_start[n];
  uint32_t *pred = sg__malloc(((size_t)m + 1) * sizeof *pred);
  uint32_t *tail = sg__malloc((size_t)width * sizeof *tail);
  uint32_t *len = sg__calloc(width, sizeof *len);
  int failed = !pred_start || !pred || !tail || !len || clocks_alloc(c, n, width);
  if (!failed) {
    for (uint32_t e = 0; e < m; e++) pred_start[succ[e] + 2]++;
    for (uint32_t v = 0; v < n; v++) pred_start[v + 2] += pred_start[v + 1];
    for (uint32_t u = 0; u < n; u++)
      for (uint32_t e = succ_start[u]; e < succ_start[u + 1]; e++)
        pred[pred_start[succ[e] + 1]++] = u;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t v = s->order[k], chain = NONE;
      uint32_t *row = c->known + (size_t)v * c->width;
      c->rank[v] = k;
      for (uint32_t i = pred_start[v]; i < pred_start[v + 1]; i++) {
        uint32_t p = pred[i], cp = c->chain_of[p];
        const uint32_t *pr = c->known + (size_t)p * c->width;
        for (uint32_t j = 0; j < c->chains; j++)
          if (pr[j] > row[j]) row[j] = pr[j];
        if (cp != NONE) {
          if (c->pos[p] + 1 > row[cp]) row[cp] = c->pos[p] + 1;
          if (chain == NONE && tail[cp] == p) chain = cp;
        }
      }
      if (chain == NONE && c->chains < width) chain = c->chains++;
      c->chain_of[v] = chain;
      if (chain != NONE) {
        c->pos[v] = len[chain]++;
        tail[chain] = v;
      }
    }
  }
  sg__free(pred_start);
  sg__free(pred);
  sg__free(tail);
  sg__free(len);
  return failed ? -1 : 0;
}

static int clocks_build(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                        clocks *c) {
  memset(c, 0, sizeof *c);
  return s->streams_planned ? clocks_schedule(s, c) : clocks_dag(s, succ_start, succ, c);
}

/* ---- temporaries and their uses -------------------------------------------- */

typedef struct tinfo {
  size_t size, align;
  uint32_t first, last;      /* ranks of the first and last use in the issue order */
  uint32_t need_start, need_count; /* (chain, count) pairs: must be known finished */
  int untracked;             /* a use on no chain: the temporary precedes nothing */
  int used;
} tinfo;

typedef struct temps {
  uint32_t count;
  tinfo *t;
  uint32_t *need_chain, *need;   /* the pairs */
  uint32_t *min_known;           /* count x width: over the uses, the least known */
  uint32_t width;
  uint32_t *use_start, *use;     /* each temporary's distinct using nodes */
} temps;

static void temps_free(temps *x) {
  sg__free(x->t);
  sg__free(x->need_chain);
  sg__free(x->need);
  sg__free(x->min_known);
  sg__free(x->use_start);
  sg__free(x->use);
  memset(x, 0, sizeof *x);
}

static int by_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

/* Each temporary's distinct uses, as compressed lists. */
static int gather_uses(const sg__access_table *t, uint32_t node_count, temps *x) {
  x->count = t->temp_count;
  x->use_start = sg__calloc((size_t)t->temp_count + 1, sizeof *x->use_start);
  uint64_t *pairs = sg__malloc(((size_t)t->count + 1) * sizeof *pairs);
  if (!x->use_start || !pairs) {
    sg__free(pairs);
    return -1;
  }
  size_t n = 0;
  for (uint32_t i = 0; i < t->count; i++)
    if (t->acc[i].temp != SG__NO_TEMP && t->acc[i].node < node_count)
      pairs[n++] = (uint64_t)t->acc[i].temp << 32 | t->acc[i].node;
  qsort(pairs, n, sizeof *pairs, by_u64);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!m || pairs[m - 1] != pairs[i]) pairs[m++] = pairs[i];
  x->use = sg__malloc((m + 1) * sizeof *x->use);
  if (!x->use) {
    sg__free(pairs);
    return -1;
  }
  for (size_t i = 0; i < m; i++) {
    x->use[i] = (uint32_t)pairs[i];
    x->use_start[(pairs[i] >> 32) + 1]++;
  }
  for (uint32_t k = 0; k < t->temp_count; k++) x->use_start[k + 1] += x->use_start[k];
  sg__free(pairs);
  return 0;
}

static int temps_build(const sg__access_table *t, const clocks *c, temps *x) {
  memset(x, 0, sizeof *x);
  if (gather_uses(t, c->n, x)) return -1;
  uint32_t T = t->temp_count, w = c->width;
  size_t cells;
  if (sg__mul_overflows((size_t)T ? T : 1, w, &cells)) return -1;
  size_t uses = x->use_start[T];
  x->width = w;
  x->t = sg__calloc((size_t)T + 1, sizeof *x->t);
  x->need_chain = sg__malloc((uses + 1) * sizeof *x->need_chain);
  x->need = sg__malloc((uses + 1) * sizeof *x->need);
  x->min_known = sg__malloc(cells * sizeof *x->min_known);
  uint32_t *scratch = sg__calloc(w, sizeof *scratch);
  if (!x->t || !x->need_chain || !x->need || !x->min_known || !scratch) {
    sg__free(scratch);
    return -1;
  }
  uint32_t pairs = 0;
  for (uint32_t k = 0; k < T; k++) {
    tinfo *ti = &x->t[k];
    ti->size = t->temps[k].bytes;
    ti->align = t->temps[k].alignment;
    ti->first = NONE;
    ti->last = 0;
    ti->need_start = pairs;
    uint32_t *mk = x->min_known + (size_t)k * w;
    for (uint32_t j = 0; j < w; j++) mk[j] = NONE;
    for (uint32_t i = x->use_start[k]; i < x->use_start[k + 1]; i++) {
      uint32_t u = x->use[i], ch = c->chain_of[u];
      ti->used = 1;
      if (c->rank[u] < ti->first) ti->first = c->rank[u];
      if (c->rank[u] > ti->last) ti->last = c->rank[u];
      const uint32_t *row = c->known + (size_t)u * w;
      for (uint32_t j = 0; j < w; j++)
        if (row[j] < mk[j]) mk[j] = row[j];
      if (ch == NONE) {
        ti->untracked = 1;
      } else if (!scratch[ch]) {
        x->need_chain[pairs] = ch;
        x->need[pairs++] = c->pos[u] + 1;
        scratch[ch] = pairs; /* 1 + its pair's index */
      } else if (c->pos[u] + 1 > x->need[scratch[ch] - 1]) {
        x->need[scratch[ch] - 1] = c->pos[u] + 1;
      }
    }
    ti->need_count = pairs - ti->need_start;
    for (uint32_t i = ti->need_start; i < pairs; i++) scratch[x->need_chain[i]] = 0;
  }
  sg__free(scratch);
  return 0;
}

/* Every use of a finishes before any use of b starts. */
static int precedes(const temps *x, uint32_t a, uint32_t b) {
  const tinfo *A = &x->t[a], *B = &x->t[b];
  if (A->untracked || A->last >= B->first) return 0;
  const uint32_t *mk = x->min_known + (size_t)b * x->width;
  for (uint32_t i = A->need_start; i < A->need_start + A->need_count; i++)
    if (mk[x->need_chain[i]] < x->need[i]) return 0;
  return 1;
}

static int conflict(const temps *x, uint32_t a, uint32_t b) {
  return !precedes(x, a, b) && !precedes(x, b, a);
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* ---- greedy by size ------------------------------------------------------- */

/* qsort's comparators read the table through this (set right before each
 * sort, on the sorting thread). */
static _Thread_local const tinfo *sort_t;

static int cmp_size(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_t[a].size != sort_t[b].size) return sort_t[a].size > sort_t[b].size ? -1 : 1;
  if (sort_t[a].first != sort_t[b].first) return sort_t[a].first < sort_t[b].first ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int cmp_first(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_t[a].first != sort_t[b].first) return sort_t[a].first < sort_t[b].first ? -1 : 1;
  if (sort_t[a].size != sort_t[b].size) return sort_t[a].size > sort_t[b].size ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* The temporaries with uses, in the order `cmp` gives. */
static uint32_t *ordered(const temps *x, int (*cmp)(const void *, const void *), uint32_t *n) {
  uint32_t *v = sg__malloc(((size_t)x->count + 1) * sizeof *v);
  if (!v) return NULL;
  *n = 0;
  for (uint32_t k = 0; k < x->count; k++)
    if (x->t[k].used) v[(*n)++] = k;
  sort_t = x->t;
  qsort(v, *n, sizeof *v, cmp);
  return v;
}

static int pack_greedy(const temps *x, size_t *offset, size_t *peak) {
  uint32_t n;
  uint32_t *v = ordered(x, cmp_size, &n);
  uint32_t *placed = sg__malloc(((size_t)n + 1) * sizeof *placed);
  if (!v || !placed) {
    sg__free(v);
    sg__free(placed);
    return -1;
  }
  size_t top = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t b = v[i];
    const tinfo *B = &x->t[b];
    size_t prev_end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    uint32_t at = i; /* insertion point in `placed` (by offset) */
    for (uint32_t j = 0; j < i; j++) {
      uint32_t a = placed[j];
      if (!conflict(x, a, b)) continue;
      size_t cand = align_up(prev_end, B->align);
      if (offset[a] >= cand && offset[a] - cand >= B->size && offset[a] - cand - B->size < best_gap) {
        best = cand;
        best_gap = offset[a] - cand - B->size;
      }
      size_t end = offset[a] + x->t[a].size;
      if (end > prev_end) prev_end = end;
    }
    if (best == SIZE_MAX) best = align_up(prev_end, B->align);
    offset[b] = best;
    if (best + B->size > top) top = best + B->size;
    for (at = i; at > 0 && offset[placed[at - 1]] > best; at--) placed[at] = placed[at - 1];
    placed[at] = b;
  }
  sg__free(v);
  sg__free(placed);
  *peak = top;
  return 0;
}

/* ---- sweep in issue order --------------------------------------------------- */

typedef struct region {
  size_t off, end;
  uint32_t owner;            /* the last temporary placed here, NONE: never used */
} region;

static int pack_sweep(const temps *x, size_t *offset, size_t *peak) {
  uint32_t n;
  uint32_t *v = ordered(x, cmp_first, &n);
  /* A placement adds at most two regions (a split on each side, or a gap
   * and itself at the end), and the carving needs two more at most. */
  size_t cap = 2 * (size_t)n + 4;
  region *r = sg__malloc(cap * sizeof *r), *next = sg__malloc(cap * sizeof *next);
  if (!v || !r || !next) {
    sg__free(v);
    sg__free(r);
    sg__free(next);
    return -1;
  }
  size_t count = 0, arena = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t b = v[i];
    const tinfo *B = &x->t[b];
    size_t best = SIZE_MAX, best_waste = SIZE_MAX, run_start = SIZE_MAX;
    for (size_t k = 0; k <= count; k++) {
      int free_here = k < count && (r[k].owner == NONE || precedes(x, r[k].owner, b));
      if (free_here && run_start == SIZE_MAX) run_start = r[k].off;
      if (free_here) continue;
      if (run_start != SIZE_MAX) {
        size_t run_end = k < count ? r[k].off : arena;
        size_t cand = align_up(run_start, B->align);
        if (cand + B->size <= run_end) {
          if (run_end - cand - B->size < best_waste) {
            best = cand;
            best_waste = run_end - cand - B->size;
          }
        } else if (k == count && best == SIZE_MAX) {
          best = cand; /* the free run at the end grows the arena least */
        }
        run_start = SIZE_MAX;
      }
    }
    if (best == SIZE_MAX) best = align_up(arena, B->align);
    size_t lo = best, hi = best + B->size, m = 0;
    /* Carve [lo, hi) out of the regions; a gap before it is fresh memory. */
    int put = 0;
    for (size_t k = 0; k < count; k++) {
      if (r[k].end <= lo || r[k].off >= hi) {
        if (!put && r[k].off >= hi) {
          next[m++] = (region){lo, hi, b};
          put = 1;
        }
        next[m++] = r[k];
        continue;
      }
      if (r[k].off < lo) next[m++] = (region){r[k].off, lo, r[k].owner};
      if (!put) {
        next[m++] = (region){lo, hi, b};
        put = 1;
      }
      if (r[k].end > hi) next[m++] = (region){hi, r[k].end, r[k].owner};
    }
    if (!put) {
      if (lo > arena) next[m++] = (region){arena, lo, NONE};
      next[m++] = (region){lo, hi, b};
    }
    if (hi > arena) arena = hi;
    /* Neighbours with one owner are one region. */
    count = 0;
    for (size_t k = 0; k < m; k++) {
      if (count && next[k].owner == next[count - 1].owner &&
          next[count - 1].end == next[k].off) {
        next[count - 1].end = next[k].end;
      } else {
        next[count++] = next[k];
      }
    }
    region *swap = r;
    r = next;
    next = swap;
    offset[b] = lo;
  }
  sg__free(v);
  sg__free(r);
  sg__free(next);
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
  /* Without reuse, and as the comparison figure: each temporary alone. */
  size_t end = 0;
  for (uint32_t k = 0; k < t->temp_count; k++) {
    size_t at = align_up(end, t->temps[k].alignment);
    if (!reuse) out->offset[k] = at;
    end = at + t->temps[k].bytes;
  }
  out->no_reuse_bytes = end;
  if (!reuse) {
    out->arena_bytes = end;
    return SG_OK;
  }
  clocks c;
  temps x;
  memset(&x, 0, sizeof x);
  if (clocks_build(s, succ_start, succ, &c) || temps_build(t, &c, &x)) {
    clocks_free(&c);
    temps_free(&x);
    return oom(out);
  }
  clocks_free(&c);
  size_t sweep_peak = 0, greedy_peak = SIZE_MAX;
  size_t *alt = NULL;
  int failed = pack_sweep(&x, out->offset, &sweep_peak);
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
  temps_free(&x);
  if (failed) return oom(out);
  out->arena_bytes = out->algorithm == 1 ? greedy_peak : sweep_peak;
  return SG_OK;
}

/* ---- lower bound ------------------------------------------------------------ */

/* Temporary k has a use at or before v, and one at or after it: all such
 * temporaries at one node are live together under any packing. */
static int open_at(const temps *x, const clocks *c, uint32_t k, uint32_t v) {
  const tinfo *T = &x->t[k];
  uint32_t rv = c->rank[v];
  if (!T->used || rv < T->first || rv > T->last) return 0;
  int before = 0, after = 0;
  const uint32_t *row = c->known + (size_t)v * c->width;
  for (uint32_t i = x->use_start[k]; i < x->use_start[k + 1] && !(before && after); i++) {
    uint32_t u = x->use[i];
    if (u == v) return 1;
    uint32_t cu = c->chain_of[u], cv = c->chain_of[v];
    if (!before && cu != NONE && row[cu] > c->pos[u]) before = 1;
    if (!after && cv != NONE && c->known[(size_t)u * c->width + cv] > c->pos[v]) after = 1;
  }
  return before && after;
}

sg_status sg__memplan_lower_bound(const sg__schedule *s, const uint32_t *succ_start,
                                  const uint32_t *succ, const sg__access_table *t,
                                  size_t *bound) {
  *bound = 0;
  if (!t->temp_count) return SG_OK;
  clocks c;
  temps x;
  memset(&x, 0, sizeof x);
  uint32_t T = t->temp_count, n = s->node_count;
  size_t *live = NULL;
  uint32_t *clique = NULL, *bysize = NULL;
  unsigned char *in = NULL;
  sg_status st = SG_OK;
  if (clocks_build(s, succ_start, succ, &c) || temps_build(t, &c, &x) ||
      !(live = sg__calloc((size_t)n + 1, sizeof *live)) ||
      !(clique = sg__malloc(((size_t)T + 1) * sizeof *clique)) ||
      !(in = sg__calloc((size_t)T + 1, 1))) {
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory bounding temporaries");
    goto done;
  }
  uint32_t sorted_count;
  if (!(bysize = ordered(&x, cmp_size, &sorted_count))) {
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory bounding temporaries");
    goto done;
  }
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t k = 0; k < T; k++)
      if (open_at(&x, &c, k, v)) live[v] += x.t[k].size;
  /* Grow cliques from the nodes with the most live bytes. */
  enum { SEEDS = 16 };
  for (int seed = 0; seed < SEEDS; seed++) {
    uint32_t v = NONE;
    for (uint32_t u = 0; u < n; u++)
      if (live[u] && (v == NONE || live[u] > live[v])) v = u;
    if (v == NONE) break;
    live[v] = 0;
    uint32_t size = 0;
    size_t weight = 0;
    for (uint32_t k = 0; k < T; k++)
      if (open_at(&x, &c, k, v)) {
        clique[size++] = k;
        in[k] = 1;
        weight += x.t[k].size;
      }
    for (uint32_t i = 0; i < sorted_count; i++) {
      uint32_t k = bysize[i];
      if (in[k]) continue;
      int all = 1;
      for (uint32_t j = 0; j < size && all; j++) all = conflict(&x, clique[j], k);
      if (!all) continue;
      clique[size++] = k;
      in[k] = 1;
      weight += x.t[k].size;
    }
    for (uint32_t j = 0; j < size; j++) in[clique[j]] = 0;
    if (weight > *bound) *bound = weight;
  }
  /* A single temporary is a clique too. */
  for (uint32_t k = 0; k < T; k++)
    if (x.t[k].used && x.t[k].size > *bound) *bound = x.t[k].size;
done:
  clocks_free(&c);
  temps_free(&x);
  sg__free(live);
  sg__free(clique);
  sg__free(bysize);
  sg__free(in);
  return st;
}
