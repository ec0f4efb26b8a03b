/* Minimum chain cover (Dilworth): maximum matching on the transitive closure,
 * found by augmenting paths, with the closure never built.
 *
 * A chain cover is a matching in the bipartite graph "u (left) -> v (right)
 * when v is reachable from u": next[u] = v. Chains = n - matched pairs, so a
 * maximum matching is a minimum cover, and its size is the width (Dilworth,
 * via Fulkerson's reduction; the method published for Nimble). The closure
 * can hold O(n^2) pairs; instead, the right-hand neighbours of u are found by
 * walking the DAG from u.
 *
 * A phase searches from every free left node (a chain's last node) at once.
 * The walk from left u visits u's descendants x not yet seen in this phase;
 * such an x is the right end of a closure pair (u, x). If x starts a chain
 * (free on the right) the path found augments the matching: chains are
 * relinked along it and two chains become one. Otherwise x's chain
 * predecessor (its left partner) joins the search. A node walked through
 * once per phase is never walked again in that phase: its descendants are
 * already reached, and any left node will do as their origin. So a phase
 * costs O(n + E), and each search tree augments at most once per phase
 * (trees share no node, so their paths are disjoint and may all be applied).
 *
 * A phase that augments nothing explored everything: no augmenting path
 * exists, and the cover is minimum (Berge). Phases stop early when the cover
 * reaches the lower bound from topo.c, or when limits->cover_work is spent;
 * in the last case the cover is kept, valid but maybe not minimum.
 *
 * With several devices a chain holds nodes of one device, so each device's
 * cover is its own matching problem: the closure restricted to its nodes
 * (paths through other devices count). A phase then serves one device: its
 * roots are that device's chain ends, its walks go through nodes of every
 * device (to find all descendants) but match only nodes of its device. The
 * "walked once per phase" rule stays sound because all trees of a phase look
 * for the same nodes. A device is done when its chains reach its bound or a
 * phase finds nothing for it. */
#include "core/sys.h"
#include "plan/work.h"

typedef struct search {
  sg__work *w;
  uint32_t device;  /* the device this phase matches, or SG__NONE for any */
  uint32_t phase;   /* stamps below equal to it mean "in this phase" */
  uint32_t *walked; /* node walked through (as a right node) */
  uint32_t *queued; /* node queued as a left node */
  uint32_t *done;   /* root whose tree has augmented */
  uint32_t *root;   /* left node -> root of its search tree */
  uint32_t *origin; /* right node -> the left node whose walk reached it */
  uint32_t *queue, *stack;
} search;

/* Relinks chains along the path that ends at free right node x. */
static void augment(search *s, uint32_t x) {
  uint32_t *next = s->w->next, *prev = s->w->prev;
  for (;;) {
    uint32_t u = s->origin[x];
    uint32_t old = next[u]; /* the right node u was reached through; none at the root */
    next[u] = x;
    prev[x] = u;
    if (old == SG__NONE) return;
    x = old;
  }
}

/* 1 if y may end or extend a path of this phase: a node of its device. */
static int matches(const search *s, uint32_t y) {
  return s->device == SG__NONE || sg__device_of(s->w, y) == s->device;
}

/* Expands node x for the walk from left node u: a free right node among x's
 * successors ends the walk at once (returns it); the others not yet walked
 * are pushed. Looking for a free node before descending matters: a walk
 * that dives first can run through the whole graph along matched nodes,
 * mark it all walked, and leave every other tree of the phase nothing to
 * search (one augmentation per phase, on diamonds of fans and joins). */
static uint32_t expand(search *s, uint32_t u, uint32_t x, uint32_t *sp, uint64_t *work) {
  const sg__work *w = s->w;
  uint32_t ph = s->phase;
  *work += 1 + (w->succ_start[x + 1] - w->succ_start[x]);
  for (uint32_t e = w->succ_start[x]; e < w->succ_start[x + 1]; e++) {
    uint32_t y = w->succ[e];
    if (s->walked[y] != ph && w->prev[y] == SG__NONE && matches(s, y)) {
      s->walked[y] = ph;
      s->origin[y] = u;
      return y;
    }
  }
  for (uint32_t e = w->succ_start[x]; e < w->succ_start[x + 1]; e++) {
    uint32_t y = w->succ[e];
    if (s->walked[y] == ph) continue;
    s->walked[y] = ph;
    s->origin[y] = u;
    s->stack[(*sp)++] = y;
  }
  return SG__NONE;
}

/* Walks from left node u; returns 1 if its tree augmented. */
static int walk(search *s, uint32_t u, uint32_t *tail, uint64_t *work) {
  const sg__work *w = s->w;
  uint32_t ph = s->phase, sp = 0;
  uint32_t r = s->root[u];
  uint32_t x = expand(s, u, u, &sp, work);
  while (x == SG__NONE && sp) {
    uint32_t y = s->stack[--sp];
    /* Pushed nodes of this phase's device are matched (a free one would have
     * ended the walk); others are only walked through. */
    uint32_t mate = w->prev[y];
    if (matches(s, y) && mate != SG__NONE && s->queued[mate] != ph) {
      s->queued[mate] = ph;
      s->root[mate] = r;
      s->queue[(*tail)++] = mate;
    }
    x = expand(s, u, y, &sp, work);
  }
  if (x == SG__NONE) return 0;
  augment(s, x);
  s->done[r] = ph;
  return 1;
}

/* One phase; returns the number of augmentations. */
static uint32_t phase(search *s, uint64_t *work) {
  sg__work *w = s->w;
  uint32_t head = 0, tail = 0, found = 0;
  for (uint32_t i = 0; i < w->n; i++) {
    uint32_t u = w->out->order[i];
    if (w->next[u] != SG__NONE || !matches(s, u)) continue;
    s->queued[u] = s->phase;
    s->root[u] = u;
    s->queue[tail++] = u;
  }
  while (head < tail) {
    uint32_t u = s->queue[head++];
    if (s->done[s->root[u]] == s->phase) continue;
    found += (uint32_t)walk(s, u, &tail, work);
  }
  return found;
}

/* Phases over all nodes at once (one device). */
static void run_single(search *s) {
  sg__work *w = s->w;
  uint64_t *work = &w->cover_spent, per_phase = (uint64_t)w->n + w->edges;
  for (;;) {
    if (w->chain_count == w->width_bound) {
      w->cover_exact = 1;
      return;
    }
    if (*work + per_phase > w->limits->cover_work) return;
    s->phase++;
    uint32_t found = phase(s, work);
    if (found == 0) {
      w->cover_exact = 1;
      return;
    }
    w->chain_count -= found;
  }
}

/* Phases device by device, each device until it is done. `chains` and
 * `done` have one entry per device. */
static void run_per_device(search *s, uint32_t *chains, unsigned char *done) {
  sg__work *w = s->w;
  uint64_t *work = &w->cover_spent, per_phase = (uint64_t)w->n + w->edges;
  for (uint32_t v = 0; v < w->n; v++)
    if (w->prev[v] == SG__NONE) chains[sg__device_of(w, v)]++;
  uint32_t open = 0;
  for (uint32_t d = 0; d < w->device_count; d++) {
    done[d] = chains[d] == w->device_bound[d];
    open += !done[d];
  }
  while (open) {
    for (uint32_t d = 0; d < w->device_count && open; d++) {
      if (done[d]) continue;
      if (*work + per_phase > w->limits->cover_work) return;
      s->device = d;
      s->phase++;
      uint32_t found = phase(s, work);
      chains[d] -= found;
      w->chain_count -= found;
      if (found == 0 || chains[d] == w->device_bound[d]) {
        done[d] = 1;
        open--;
      }
    }
  }
  w->cover_exact = 1;
}

sg_status sg__cover_augment(sg__work *w) {
  if (w->cover_exact) return SG_OK;
  uint32_t n = w->n;
  search s = {w, SG__NONE, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  uint32_t **arrays[] = {&s.walked, &s.queued, &s.done, &s.root, &s.origin, &s.queue, &s.stack};
  size_t count = sizeof arrays / sizeof arrays[0];
  sg_status st = SG_OK;
  for (size_t i = 0; i < count; i++) {
    /* Stamps start at 0 and phases count from 1, so zeroed means unseen. */
    *arrays[i] = sg__calloc(n, sizeof(uint32_t));
    if (!*arrays[i]) st = sg__oom(w, "chain cover search");
  }
  uint32_t *chains = NULL;
  unsigned char *done = NULL;
  if (!st && w->device_of) {
    chains = sg__calloc(w->device_count, sizeof *chains);
    done = sg__calloc(w->device_count, sizeof *done);
    if (!chains || !done) st = sg__oom(w, "chain cover search");
  }
  if (!st) {
    if (w->device_of)
      run_per_device(&s, chains, done);
    else
      run_single(&s);
  }
  sg__free(chains);
  sg__free(done);
  for (size_t i = 0; i < count; i++) sg__free(*arrays[i]);
  return st;
}
