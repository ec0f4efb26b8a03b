/* Traces as an SVG timeline: a picture any browser shows, with no other
 * tool (sg_exec_write_trace_svg, sg_pipeline_write_trace_svg).
 *
 * Time runs left to right, one lane per row:
 *  - per source (an executable, or a pipeline's instance): a lane of its
 *    launches ("batch N" when a pipeline labelled them), then one lane per
 *    planned stream holding its nodes' runs;
 *  - one lane per copy direction (host to device, device to host...), which
 *    the GPU's copy engines serve: every copy node of every source again,
 *    so that what the engines did, and how copies overlap kernels, shows at
 *    a glance;
 *  - one lane per host thread that did staging work (filling and draining
 *    pinned buffers).
 * Runs that overlap within one lane are stacked in sub-rows instead of
 * hiding one another. Fill colours tell node kinds (and copy directions)
 * apart; each launch has an outline colour of its own, shared by its
 * launch bar and every run in it, so the batches of a pipeline can be told
 * apart. Every bar has a <title> (the hover text): the node's name, kind,
 * stream, launch and batch, and its times from the earliest event drawn.
 *
 * Tests and scripts read it back: lanes are <g class="lane"> with
 * data-name; bars are <rect class="span ..."> with data-node, data-launch,
 * data-batch and data-start-ns/data-end-ns (absolute, CLOCK_MONOTONIC, as
 * sg_trace_record's launch_start_ns + start_ns). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sys.h"
#include "core/text.h"
#include "exec/trace_svg.h"
#include "plan/schedule.h"

/* What a bar shows: its fill colour and the word in its class. */
enum {
  CAT_LAUNCH = 0,
  CAT_KERNEL,
  CAT_H2D,
  CAT_D2H,
  CAT_D2D,
  CAT_H2H,
  CAT_MEMSET,
  CAT_HOST,
  CAT_STREAM_FN,
  CAT_EMPTY,
  CAT_NCCL,
  CAT_FILL,
  CAT_DRAIN,
  CAT_COUNT
};
static const char *const cat_class[CAT_COUNT] = {
    "launch", "kernel", "copy-h2d", "copy-d2h", "copy-d2d", "copy-h2h", "memset",
    "host",   "stream-fn", "empty", "nccl",    "fill",     "drain"};
static const char *const cat_legend[CAT_COUNT] = {
    "launch",       "kernel",         "copy host to device", "copy device to host",
    "copy device to device", "copy host to host", "memset", "host function",
    "stream function", "empty",       "NCCL",                "staging fill (pageable to pinned)",
    "staging drain (pinned to pageable)"};
static const char *const cat_fill[CAT_COUNT] = {
    "#e8e8e8", "#4e79a7", "#59a14f", "#f28e2b", "#76b7b2", "#9fd39b", "#bab0ac",
    "#b07aa1", "#9c755f", "#d7d7d7", "#e15759", "#8cd17d", "#ffbe7d"};
/* Outline colours, one per launch in turn (a launch and its runs share one). */
static const char *const launch_stroke[] = {"#1b1b1b", "#c41e3a", "#1f5fbf", "#2e8b2e",
                                            "#b8860b", "#7b2cbf"};
static const char *const launch_tint[] = {"#e6e6e6", "#f6d0d6", "#d3e1f6", "#d6efd6",
                                          "#f3e5c0", "#e6d6f3"};
#define LAUNCH_COLOURS (sizeof launch_stroke / sizeof launch_stroke[0])

/* Copy directions with a lane of their own, in order. */
static const sg_copy_kind engine_kind[] = {SG_COPY_HOST_TO_DEVICE, SG_COPY_DEVICE_TO_HOST,
                                           SG_COPY_DEVICE_TO_DEVICE, SG_COPY_HOST_TO_HOST};
static const char *const engine_name[] = {"copies host to device", "copies device to host",
                                          "copies device to device", "copies host to host"};
#define ENGINES 4

/* Geometry, in pixels. */
#define LEFT 190.0      /* lane labels */
#define PLOT 1000.0     /* the time axis */
#define RIGHT 20.0
#define ROW 16.0        /* one sub-row */
#define LANE_GAP 4.0
#define HEADER 22.0     /* a section's title */
#define MAX_ROWS 32u    /* sub-rows per lane; more overlaps share the last */

typedef struct item {
  uint64_t start, end;  /* absolute */
  uint64_t launch;      /* 0: a staging span */
  uint64_t label;       /* SG__TRACE_NO_LABEL unless a pipeline labelled the launch */
  uint64_t bytes;       /* staging spans */
  uint32_t lane, row;
  uint32_t source, node, stream, chunk;
  uint32_t seq;         /* launch count of its source before it: its outline colour */
  uint8_t cat;
  uint8_t is_node;      /* 1: a node run (node and stream valid) */
} item;

typedef struct lane_info {
  const char *section;  /* the title above it when it differs from the lane before */
  uint32_t source;      /* UINT32_MAX: shared lanes */
  char name[48];
  uint32_t rows;
} lane_info;

typedef struct builder {
  const sg__trace_source *sources;
  unsigned count;
  item *items;
  size_t n, cap;
  lane_info *lanes;
  uint32_t lane_count, lane_cap;
  int failed;
} builder;

static item *add_item(builder *b) {
  if (b->failed) return NULL;
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    item *grown = sg__realloc_array(b->items, cap, sizeof *grown);
    if (!grown) {
      b->failed = 1;
      return NULL;
    }
    b->items = grown;
    b->cap = cap;
  }
  item *it = &b->items[b->n++];
  memset(it, 0, sizeof *it);
  return it;
}

static uint32_t add_lane(builder *b, const char *section, uint32_t source, const char *name) {
  if (b->failed) return 0;
  if (b->lane_count == b->lane_cap) {
    uint32_t cap = b->lane_cap ? b->lane_cap * 2 : 16;
    lane_info *grown = sg__realloc_array(b->lanes, cap, sizeof *grown);
    if (!grown) {
      b->failed = 1;
      return 0;
    }
    b->lanes = grown;
    b->lane_cap = cap;
  }
  lane_info *l = &b->lanes[b->lane_count];
  l->section = section;
  l->source = source;
  snprintf(l->name, sizeof l->name, "%s", name);
  l->rows = 1;
  return b->lane_count++;
}

static int node_cat(const sg__node *node) {
  switch (node->kind) {
    case SG__NODE_COPY:
      switch (node->u.copy.kind) {
        case SG_COPY_HOST_TO_DEVICE: return CAT_H2D;
        case SG_COPY_DEVICE_TO_HOST: return CAT_D2H;
        case SG_COPY_DEVICE_TO_DEVICE: return CAT_D2D;
        default: return CAT_H2H;
      }
    case SG__NODE_KERNEL: return CAT_KERNEL;
    case SG__NODE_MEMSET: return CAT_MEMSET;
    case SG__NODE_HOST: return CAT_HOST;
    case SG__NODE_STREAM_FN: return CAT_STREAM_FN;
    case SG__NODE_NCCL: return CAT_NCCL;
    default: return CAT_EMPTY;
  }
}

static int engine_of(const sg__node *node) {
  if (node->kind != SG__NODE_COPY) return -1;
  for (int e = 0; e < ENGINES; e++)
    if (node->u.copy.kind == engine_kind[e]) return e;
  return -1;
}

/* Every kept launch of source `i`: its launch bar and its nodes' runs, on
 * the source's lanes (first_lane: its launch lane, then its streams) and
 * copies again on the engine lanes. Trace lock held. */
static void collect_launches(builder *b, unsigned i, uint32_t first_lane,
                             const int32_t engine_lane[ENGINES]) {
  const sg__trace_source *src = &b->sources[i];
  const sg__trace *tr = src->trace;
  const sg__schedule *s = src->schedule;
  uint64_t oldest = sg__trace_oldest(tr);
  uint32_t seq = 0;
  for (uint64_t launch = oldest; tr->last && launch <= tr->last; launch += tr->every) {
    unsigned slot = (unsigned)sg__trace_slot(tr, launch);
    if (tr->launch[slot] != launch || s->node_count == 0) continue;
    const uint64_t *start = tr->times + (size_t)slot * 2 * (tr->node_count ? tr->node_count : 1);
    const uint64_t *end = start + tr->node_count;
    uint64_t base = tr->start[slot], first = UINT64_MAX, last = 0;
    for (uint32_t n = 0; n < s->node_count; n++) {
      if (start[n] < first) first = start[n];
      if (end[n] > last) last = end[n];
    }
    item *it = add_item(b);
    if (!it) return;
    *it = (item){base + first, base + (last > first ? last : first), launch, tr->label[slot],
                 0, first_lane, 0, i, 0, 0, 0, seq, CAT_LAUNCH, 0};
    for (uint32_t k = 0; k < s->node_count; k++) {
      uint32_t n = s->order[k];
      const sg__node *node = &src->nodes[n];
      uint64_t a = base + start[n], z = base + (end[n] > start[n] ? end[n] : start[n]);
      uint8_t cat = (uint8_t)node_cat(node);
      if (!(it = add_item(b))) return;
      *it = (item){a, z, launch, tr->label[slot], 0, first_lane + 1 + s->stream_of[n], 0, i, n,
                   s->stream_of[n], 0, seq, cat, 1};
      int e = engine_of(node);
      if (e >= 0 && engine_lane[e] >= 0) {
        if (!(it = add_item(b))) return;
        *it = (item){a, z, launch, tr->label[slot], 0, (uint32_t)engine_lane[e], 0, i, n,
                     s->stream_of[n], 0, seq, cat, 1};
      }
    }
    seq++;
  }
}

/* The lanes and bars of every source. */
static void collect(builder *b) {
  /* Which copy directions any kept launch ran, and which threads staged. */
  int used[ENGINES] = {0};
  uint32_t max_lane = 0;
  int any_span = 0;
  for (unsigned i = 0; i < b->count; i++) {
    const sg__trace_source *src = &b->sources[i];
    sg__trace *tr = src->trace;
    sg__mutex_lock(&tr->lock);
    if (tr->last)
      for (uint32_t n = 0; n < src->schedule->node_count; n++) {
        int e = engine_of(&src->nodes[n]);
        if (e >= 0) used[e] = 1;
      }
    uint64_t spans = tr->span_total < tr->span_cap ? tr->span_total : tr->span_cap;
    for (uint64_t k = 0; k < spans; k++) {
      any_span = 1;
      if (tr->spans[k].lane > max_lane) max_lane = tr->spans[k].lane;
    }
    sg__mutex_unlock(&tr->lock);
  }
  uint32_t *first_lane = sg__calloc(b->count ? b->count : 1, sizeof *first_lane);
  int32_t *thread_lane = any_span ? sg__calloc((size_t)max_lane + 1, sizeof *thread_lane) : NULL;
  if (!first_lane || (any_span && !thread_lane)) {
    b->failed = 1;
    sg__free(first_lane);
    sg__free(thread_lane);
    return;
  }
  for (unsigned i = 0; i < b->count; i++) {
    const sg__trace_source *src = &b->sources[i];
    sg__trace *tr = src->trace;
    sg__mutex_lock(&tr->lock);
    int labelled = 0;
    for (unsigned slot = 0; slot < tr->keep; slot++)
      labelled |= tr->launch[slot] && tr->label[slot] != SG__TRACE_NO_LABEL;
    sg__mutex_unlock(&tr->lock);
    first_lane[i] = add_lane(b, src->title, i, labelled ? "batches" : "launches");
    for (uint32_t k = 0; k < src->schedule->stream_count; k++) {
      char name[32];
      snprintf(name, sizeof name, "stream %u", k);
      add_lane(b, src->title, i, name);
    }
  }
  int32_t engine_lane[ENGINES];
  for (int e = 0; e < ENGINES; e++)
    engine_lane[e] = used[e] ? (int32_t)add_lane(b, "copies by direction (the GPU's copy "
                                                    "engines)", UINT32_MAX, engine_name[e])
                             : -1;
  /* Threads that staged, in the order of their numbers. */
  if (any_span) {
    for (uint32_t l = 0; l <= max_lane; l++) thread_lane[l] = -1;
    for (unsigned i = 0; i < b->count; i++) {
      sg__trace *tr = b->sources[i].trace;
      sg__mutex_lock(&tr->lock);
      uint64_t spans = tr->span_total < tr->span_cap ? tr->span_total : tr->span_cap;
      for (uint64_t k = 0; k < spans; k++)
        if (tr->spans[k].lane <= max_lane)
          thread_lane[tr->spans[k].lane] = tr->spans[k].copy_thread ? 1 : 2;
      sg__mutex_unlock(&tr->lock);
    }
    for (uint32_t l = 0; l <= max_lane; l++) {
      if (thread_lane[l] < 0) continue;
      char name[48];
      snprintf(name, sizeof name, "%s %u", thread_lane[l] == 1 ? "copy thread" : "waiting thread",
               l);
      thread_lane[l] = (int32_t)add_lane(b, "host: staging copies", UINT32_MAX, name);
    }
  }
  for (unsigned i = 0; i < b->count && !b->failed; i++) {
    sg__trace *tr = b->sources[i].trace;
    sg__mutex_lock(&tr->lock);
    collect_launches(b, i, first_lane[i], engine_lane);
    uint64_t spans = tr->span_total < tr->span_cap ? tr->span_total : tr->span_cap;
    for (uint64_t k = tr->span_total - spans; k < tr->span_total && !b->failed; k++) {
      const sg__trace_span *sp = &tr->spans[k % tr->span_cap];
      if (!thread_lane || sp->lane > max_lane || thread_lane[sp->lane] < 0) continue;
      item *it = add_item(b);
      if (!it) break;
      *it = (item){sp->start_ns, sp->end_ns > sp->start_ns ? sp->end_ns : sp->start_ns, 0,
                   SG__TRACE_NO_LABEL, sp->bytes, (uint32_t)thread_lane[sp->lane], 0, i,
                   sp->node, 0, sp->chunk, 0,
                   sp->kind == SG__SPAN_FILL ? CAT_FILL : CAT_DRAIN, 0};
    }
    sg__mutex_unlock(&tr->lock);
  }
  sg__free(first_lane);
  sg__free(thread_lane);
}

static int by_lane_then_start(const void *pa, const void *pb) {
  const item *a = pa, *b = pb;
  if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  return 0;
}

/* Sub-rows: each bar goes to the first row of its lane free at its start
 * (items sorted by lane, then start). */
static void assign_rows(builder *b) {
  uint64_t row_end[MAX_ROWS];
  uint32_t lane = UINT32_MAX, rows = 0;
  for (size_t k = 0; k < b->n; k++) {
    item *it = &b->items[k];
    if (it->lane != lane) {
      lane = it->lane;
      rows = 0;
    }
    uint32_t r = 0;
    while (r < rows && row_end[r] > it->start) r++;
    if (r == rows) {
      if (rows < MAX_ROWS) row_end[rows++] = 0;
      else r = MAX_ROWS - 1;
    }
    if (row_end[r] < it->end) row_end[r] = it->end;
    it->row = r;
    if (rows > b->lanes[lane].rows) b->lanes[lane].rows = rows;
  }
}

/* A time span in words: "412 ns", "35.2 us", "1.250 ms", "2.001 s". */
static void put_duration(sg__text *t, uint64_t ns) {
  if (ns < 1000) sg__text_printf(t, "%" PRIu64 " ns", ns);
  else if (ns < 1000000) sg__text_printf(t, "%.3f us", (double)ns / 1e3);
  else if (ns < 1000000000) sg__text_printf(t, "%.3f ms", (double)ns / 1e6);
  else sg__text_printf(t, "%.3f s", (double)ns / 1e9);
}

static void put_title(sg__text *t, const builder *b, const item *it, uint64_t origin) {
  const sg__trace_source *src = &b->sources[it->source];
  sg__text_printf(t, "<title>");
  if (it->cat == CAT_LAUNCH) {
    if (it->label != SG__TRACE_NO_LABEL)
      sg__text_printf(t, "batch %" PRIu64 " (launch %" PRIu64 ")", it->label, it->launch);
    else
      sg__text_printf(t, "launch %" PRIu64, it->launch);
    sg__text_printf(t, " of ");
    sg__text_xml(t, src->title);
  } else {
    const sg__node *node = &src->nodes[it->node];
    if (it->cat == CAT_FILL || it->cat == CAT_DRAIN)
      sg__text_printf(t, "%s of ", it->cat == CAT_FILL ? "fill" : "drain");
    if (node->name) {
      sg__text_printf(t, "'");
      sg__text_xml(t, node->name);
      sg__text_printf(t, "'");
    } else {
      sg__text_printf(t, "#%u", it->node);
    }
    if (it->is_node)
      sg__text_printf(t, " (%s #%u, stream %u), launch %" PRIu64, cat_legend[it->cat], it->node,
                      it->stream, it->launch);
    else
      sg__text_printf(t, " (#%u), chunk %u, %" PRIu64 " bytes", it->node, it->chunk, it->bytes);
    if (it->label != SG__TRACE_NO_LABEL) sg__text_printf(t, ", batch %" PRIu64, it->label);
    sg__text_printf(t, ", ");
    sg__text_xml(t, src->title);
  }
  sg__text_printf(t, ": ");
  put_duration(t, it->start - origin);
  sg__text_printf(t, " to ");
  put_duration(t, it->end - origin);
  sg__text_printf(t, " (");
  put_duration(t, it->end - it->start);
  sg__text_printf(t, ")</title>");
}

/* An axis label: as short as it can be ("0", "250 us", "1.5 ms"), in the
 * unit of the whole span so that the labels read alike. */
static void put_tick(sg__text *t, uint64_t ns, uint64_t span) {
  double unit = span >= 1000000000 ? 1e9 : span >= 1000000 ? 1e6 : span >= 1000 ? 1e3 : 1;
  const char *name = unit == 1e9 ? "s" : unit == 1e6 ? "ms" : unit == 1e3 ? "us" : "ns";
  if (ns == 0) sg__text_printf(t, "0");
  else sg__text_printf(t, "%.6g %s", (double)ns / unit, name);
}

/* A tick step of 1, 2 or 5 times a power of ten giving at most ~10 ticks. */
static uint64_t tick_step(uint64_t span) {
  uint64_t step = 1;
  for (;;) {
    if (span / step <= 10) return step;
    if (span / (step * 2) <= 10) return step * 2;
    if (span / (step * 5) <= 10) return step * 5;
    if (step > UINT64_MAX / 10) return step;
    step *= 10;
  }
}

static void put_legend(sg__text *t, const int *shown, double y) {
  double x = 10;
  for (int c = 1; c < CAT_COUNT; c++) {
    if (!shown[c]) continue;
    size_t len = strlen(cat_legend[c]);
    if (x + 20 + 6.2 * (double)len > LEFT + PLOT) {
      x = 10;
      y += 16;
    }
    sg__text_printf(t,
                    "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" "
                    "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                    x, y, cat_fill[c], x + 16, y + 9, cat_legend[c]);
    x += 28 + 6.2 * (double)len;
  }
}

static void render(sg__text *t, builder *b) {
  uint64_t origin = UINT64_MAX, finish = 0;
  int shown[CAT_COUNT] = {0};
  for (size_t k = 0; k < b->n; k++) {
    if (b->items[k].start < origin) origin = b->items[k].start;
    if (b->items[k].end > finish) finish = b->items[k].end;
    shown[b->items[k].cat] = 1;
  }
  if (b->n == 0) origin = finish = 0;
  uint64_t span = finish > origin ? finish - origin : 1;
  double scale = PLOT / (double)span;
  /* Height: title, legend, axis, then each section's header and lanes. */
  double top = 78, y = top;
  const char *section = NULL;
  for (uint32_t l = 0; l < b->lane_count; l++) {
    if (b->lanes[l].section != section) {
      section = b->lanes[l].section;
      y += HEADER;
    }
    y += b->lanes[l].rows * ROW + LANE_GAP;
  }
  double height = y + 24, width = LEFT + PLOT + RIGHT;

  sg__text_printf(t,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" "
                  "font-size=\"11\" data-origin-ns=\"%" PRIu64 "\" data-end-ns=\"%" PRIu64 "\">\n"
                  "<title>streamgraph trace</title>\n"
                  "<style>rect.span:hover{stroke-width:2.5}</style>\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  width, height, width, height, origin, finish);
  sg__text_printf(t, "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">streamgraph "
                     "trace: ");
  put_duration(t, b->n ? finish - origin : 0);
  sg__text_printf(t, "</text>\n<text x=\"10\" y=\"34\" fill=\"#555\">Times from the earliest "
                     "event drawn; hover over a bar for its node, launch and times. A launch and "
                     "its runs share an outline colour.</text>\n");
  put_legend(t, shown, 44);
  /* The axis: ticks and grid lines over every lane. */
  uint64_t step = tick_step(span);
  sg__text_printf(t, "<g class=\"axis\" stroke=\"#ddd\">\n");
  for (uint64_t at = 0; at <= span; at += step) {
    double x = LEFT + (double)at * scale;
    sg__text_printf(t, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, top - 6, x,
                    y);
    sg__text_printf(t, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"#555\" "
                       "text-anchor=\"middle\">", x, top - 9);
    put_tick(t, at, span);
    sg__text_printf(t, "</text>\n");
    if (at > UINT64_MAX - step) break;
  }
  sg__text_printf(t, "</g>\n");
  if (b->n == 0)
    sg__text_printf(t, "<text x=\"%.1f\" y=\"%.1f\">no launch has been traced</text>\n", LEFT,
                    top + 14);

  y = top;
  section = NULL;
  size_t k = 0;
  for (uint32_t l = 0; l < b->lane_count; l++) {
    const lane_info *ln = &b->lanes[l];
    if (ln->section != section) {
      section = ln->section;
      sg__text_printf(t, "<text class=\"section\" x=\"10\" y=\"%.1f\" font-weight=\"bold\">",
                      y + 15);
      sg__text_xml(t, section);
      sg__text_printf(t, "</text>\n");
      y += HEADER;
    }
    double h = ln->rows * ROW;
    sg__text_printf(t, "<g class=\"lane\" data-lane=\"%u\" data-name=\"", l);
    sg__text_xml(t, ln->name);
    sg__text_printf(t, "\"");
    if (ln->source != UINT32_MAX) sg__text_printf(t, " data-source=\"%u\"", ln->source);
    sg__text_printf(t, " data-rows=\"%u\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.1f\" fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.1f\">",
                    ln->rows, LEFT, y, PLOT, h, l % 2 ? "#f7f7f7" : "#fbfbfb", 18.0,
                    y + ROW / 2 + 4);
    sg__text_xml(t, ln->name);
    sg__text_printf(t, "</text>\n");
    for (; k < b->n && b->items[k].lane == l; k++) {
      const item *it = &b->items[k];
      double x = LEFT + (double)(it->start - origin) * scale;
      double w = (double)(it->end - it->start) * scale;
      if (w < 1) w = 1; /* a run too short to see still shows */
      double top_y = y + it->row * ROW + 1;
      unsigned colour = it->launch ? it->seq % LAUNCH_COLOURS : 0;
      const char *fill = it->cat == CAT_LAUNCH ? launch_tint[colour] : cat_fill[it->cat];
      sg__text_printf(t, "<rect class=\"span %s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                         "height=\"%.1f\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\" "
                         "data-source=\"%u\"",
                      cat_class[it->cat], x, top_y, w, ROW - 2, fill,
                      it->launch ? launch_stroke[colour] : "#666",
                      it->launch ? "1.2" : "0.5", it->source);
      if (it->cat != CAT_LAUNCH) sg__text_printf(t, " data-node=\"%u\"", it->node);
      if (it->is_node) sg__text_printf(t, " data-stream=\"%u\"", it->stream);
      if (it->launch) sg__text_printf(t, " data-launch=\"%" PRIu64 "\"", it->launch);
      if (it->label != SG__TRACE_NO_LABEL)
        sg__text_printf(t, " data-batch=\"%" PRIu64 "\"", it->label);
      sg__text_printf(t, " data-start-ns=\"%" PRIu64 "\" data-end-ns=\"%" PRIu64 "\">", it->start,
                      it->end);
      put_title(t, b, it, origin);
      sg__text_printf(t, "</rect>\n");
      if (it->cat == CAT_LAUNCH && w > 60) {
        sg__text_printf(t, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                           "pointer-events=\"none\">", x + 3, top_y + ROW - 5);
        if (it->label != SG__TRACE_NO_LABEL) sg__text_printf(t, "batch %" PRIu64, it->label);
        else sg__text_printf(t, "launch %" PRIu64, it->launch);
        sg__text_printf(t, "</text>\n");
      }
    }
    sg__text_printf(t, "</g>\n");
    y += h + LANE_GAP;
  }
  sg__text_printf(t, "</svg>\n");
}

sg_status sg__trace_write_svg(const sg__trace_source *sources, unsigned count, const char *path,
                              const char *fn) {
  builder b = {sources, count, NULL, 0, 0, NULL, 0, 0, 0};
  collect(&b);
  sg__text t = {0};
  if (!b.failed) {
    if (b.n) qsort(b.items, b.n, sizeof *b.items, by_lane_then_start);
    assign_rows(&b);
    render(&t, &b);
  }
  sg__free(b.items);
  sg__free(b.lanes);
  if (b.failed || t.failed) {
    sg__text_free(&t);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory drawing the trace", fn);
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    sg__text_free(&t);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot open '%s' for writing", fn, path);
  }
  int bad = fwrite(t.data, 1, t.len, f) != t.len;
  bad |= fclose(f) != 0;
  sg__text_free(&t);
  if (bad) return sg__fail(SG_ERR_SYSTEM, "%s: error writing '%s'", fn, path);
  return SG_OK;
}
