/* A plan as SVG (sg_plan_to_svg, sg_plan_write_svg in streamgraph/plan.h):
 * the picture sg_plan_to_dot describes, drawn by the library itself so
 * that no Graphviz is needed.
 *
 * One column per stream; each node a box in its stream's column, in stream
 * order top down. A node's row is one below the lowest of the nodes it must
 * follow (the one before it on its stream, and the node each of its waits'
 * events is recorded after), so every arrow points down and independent
 * work sits side by side. Grey lines join consecutive nodes of a stream;
 * red dashed arrows are the waits, from the node an event is recorded after
 * to the node that waits for it. Hover text (<title>) gives each node's
 * name, kind, stream and waits, and each wait's event. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/handles.h"
#include "core/sys.h"
#include "core/text.h"
#include "plan/plan.h"
#include "plan/plan_internal.h"

/* Fill colours of the streams, as in the DOT (tab20, repeating after 12). */
static const char *const fill[] = {"#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
                                   "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
                                   "#dbdb8d", "#9edae5", "#9c9ede", "#cedb9c"};
#define PALETTE (sizeof fill / sizeof fill[0])

#define COL 180.0    /* a stream's column */
#define BOX_W 156.0
#define BOX_H 36.0
#define ROW 64.0
#define TOP 100.0    /* title, legend and stream headers */
#define MARGIN 16.0
#define LABEL_CHARS 24 /* characters of a name shown in its box (all in the hover text) */

static const char *name_of(const sg_plan *p, uint32_t v) {
  return p->name_at[v] != SG__UNNAMED ? p->names + p->name_at[v] : NULL;
}

/* At most `chars` characters of `s` (UTF-8 aware), then an ellipsis. */
static void put_short(sg__text *t, const char *s, size_t chars) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s), bytes = 0;
  for (size_t c = 0; c < chars && bytes < left; c++) {
    size_t n = sg__utf8_sequence(p + bytes, left - bytes);
    bytes += n ? n : 1;
  }
  if (bytes >= left) {
    sg__text_xml(t, s);
    return;
  }
  char buf[4 * LABEL_CHARS + 1];
  memcpy(buf, s, bytes);
  buf[bytes] = '\0';
  sg__text_xml(t, buf);
  sg__text_put(t, "\xe2\x80\xa6", 3); /* U+2026 */
}

static void put_node_name(sg__text *t, const sg_plan *p, uint32_t v) {
  const char *name = name_of(p, v);
  if (name) {
    sg__text_printf(t, "'");
    sg__text_xml(t, name);
    sg__text_printf(t, "'");
  } else {
    sg__text_printf(t, "#%u", v);
  }
}

/* Each node's row (see the top of this file), in issue order. */
static uint32_t layout_rows(const sg__schedule *s, uint32_t *row) {
  uint32_t rows = 0;
  for (uint32_t k = 0; k < s->node_count; k++) {
    uint32_t v = s->order[k], r = 0;
    uint32_t at = s->stream_start[s->stream_of[v]] + s->position[v];
    if (s->position[v] > 0) r = row[s->stream_nodes[at - 1]] + 1;
    for (uint32_t w = s->wait_start[v]; w < s->wait_start[v + 1]; w++) {
      uint32_t u = s->event_node[s->wait_event[w]];
      if (row[u] + 1 > r) r = row[u] + 1;
    }
    row[v] = r;
    if (r + 1 > rows) rows = r + 1;
  }
  return rows;
}

static double box_x(uint32_t stream) { return MARGIN + stream * COL; }
static double box_y(uint32_t row) { return TOP + row * ROW; }

static void draw(sg__text *t, const sg_plan *p, const uint32_t *row, uint32_t rows) {
  const sg__schedule *s = &p->schedule;
  double width = 2 * MARGIN + (s->stream_count ? s->stream_count : 1) * COL;
  if (width < 640) width = 640; /* the legend's width */
  double height = TOP + rows * ROW + MARGIN;
  sg__text_printf(t,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" "
                  "font-size=\"11\" data-nodes=\"%u\" data-streams=\"%u\" data-events=\"%u\" "
                  "data-waits=\"%zu\">\n<title>streamgraph plan</title>\n"
                  "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
                  "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                  "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#d62728\"/></marker></defs>\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  width, height, width, height, s->node_count, s->stream_count, s->event_count,
                  s->wait_count);
  sg__text_printf(t,
                  "<text x=\"%.0f\" y=\"20\" font-size=\"14\" font-weight=\"bold\">plan: %u "
                  "node%s on %u stream%s, %u event%s, %zu wait%s</text>\n"
                  "<text x=\"%.0f\" y=\"38\" fill=\"#555\">A column per stream, run top "
                  "down; hover over a box or an arrow for its details.</text>\n"
                  "<text x=\"%.0f\" y=\"54\" fill=\"#555\">Grey: stream order; red dashed "
                  "arrow: a wait for the event recorded after the node it starts from.</text>\n",
                  MARGIN, s->node_count, s->node_count == 1 ? "" : "s", s->stream_count,
                  s->stream_count == 1 ? "" : "s", s->event_count, s->event_count == 1 ? "" : "s",
                  s->wait_count, s->wait_count == 1 ? "" : "s", MARGIN, MARGIN);
  for (uint32_t k = 0; k < s->stream_count; k++) {
    int device = sg__plan_device(p, s->stream_device[k]);
    sg__text_printf(t, "<text class=\"stream\" data-stream=\"%u\" x=\"%.1f\" y=\"%.1f\" "
                       "font-weight=\"bold\">stream %u", k, box_x(k) + BOX_W / 2, TOP - 14,
                    k);
    if (device != SG_DEVICE_DEFAULT) sg__text_printf(t, " (device %d)", device);
    sg__text_printf(t, "</text>\n");
  }
  sg__text_printf(t, "<style>text.stream{text-anchor:middle}</style>\n");
  /* Stream order, under the boxes. */
  for (uint32_t k = 0; k < s->stream_count; k++)
    for (uint32_t at = s->stream_start[k] + 1; at < s->stream_start[k + 1]; at++) {
      uint32_t a = s->stream_nodes[at - 1], b = s->stream_nodes[at];
      double x = box_x(k) + BOX_W / 2;
      sg__text_printf(t, "<line class=\"order\" data-from=\"%u\" data-to=\"%u\" x1=\"%.1f\" "
                         "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                         "stroke-width=\"2\"/>\n",
                      a, b, x, box_y(row[a]) + BOX_H, x, box_y(row[b]));
    }
  /* The nodes. */
  for (uint32_t k = 0; k < s->node_count; k++) {
    uint32_t v = s->order[k], st = s->stream_of[v];
    double x = box_x(st), y = box_y(row[v]);
    uint32_t waits = s->wait_start[v + 1] - s->wait_start[v];
    sg__text_printf(t, "<g class=\"node\" data-node=\"%u\" data-stream=\"%u\" "
                       "data-kind=\"%s\" data-waits=\"%u\">\n<title>",
                    v, st, sg__node_kind_name(p->kinds[v]), waits);
    put_node_name(t, p, v);
    sg__text_printf(t, " (%s #%u): stream %u, position %u", sg__node_kind_name(p->kinds[v]), v,
                    st, s->position[v]);
    for (uint32_t w = s->wait_start[v]; w < s->wait_start[v + 1]; w++) {
      uint32_t e = s->wait_event[w];
      sg__text_printf(t, "%s e%u (after ", w == s->wait_start[v] ? "; waits for" : ",", e);
      put_node_name(t, p, s->event_node[e]);
      sg__text_printf(t, ")");
    }
    if (s->record_event[v] >= 0) sg__text_printf(t, "; records e%d", s->record_event[v]);
    sg__text_printf(t, "</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "rx=\"6\" fill=\"%s\" stroke=\"#444\"/>\n"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                    x, y, BOX_W, BOX_H, fill[st % PALETTE], x + BOX_W / 2, y + 15);
    const char *name = name_of(p, v);
    if (name) put_short(t, name, LABEL_CHARS);
    else sg__text_printf(t, "#%u", v);
    sg__text_printf(t, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "fill=\"#444\" font-size=\"10\">%s #%u</text>\n</g>\n",
                    x + BOX_W / 2, y + 29, sg__node_kind_name(p->kinds[v]), v);
  }
  /* The waits, over the boxes. */
  for (uint32_t v = 0; v < s->node_count; v++)
    for (uint32_t w = s->wait_start[v]; w < s->wait_start[v + 1]; w++) {
      uint32_t e = s->wait_event[w], u = s->event_node[e];
      double x1 = box_x(s->stream_of[u]) + BOX_W / 2, y1 = box_y(row[u]) + BOX_H;
      double x2 = box_x(s->stream_of[v]) + BOX_W / 2, y2 = box_y(row[v]);
      double bend = (y2 - y1) / 2;
      sg__text_printf(t, "<path class=\"wait\" data-event=\"%u\" data-from=\"%u\" "
                         "data-to=\"%u\" d=\"M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f\" "
                         "fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" "
                         "stroke-dasharray=\"5 3\" marker-end=\"url(#arrow)\"><title>",
                      e, u, v, x1, y1, x1, y1 + bend, x2, y2 - bend, x2, y2);
      put_node_name(t, p, v);
      sg__text_printf(t, " waits for event e%u, recorded after ", e);
      put_node_name(t, p, u);
      sg__text_printf(t, "</title></path>\n");
    }
  sg__text_printf(t, "</svg>\n");
}

sg_status sg_plan_to_svg(const sg_plan *plan, char **svg) {
  if (!svg) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: svg is NULL", __func__);
  *svg = NULL;
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if ((st = sg__plan_complete((sg_plan *)plan))) return sg__plan_prefix_failure(st, __func__);
  const sg__schedule *s = &plan->schedule;
  uint32_t *row = sg__calloc(s->node_count ? s->node_count : 1, sizeof *row);
  if (!row)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory drawing %u nodes", __func__,
                    s->node_count);
  uint32_t rows = layout_rows(s, row);
  sg__text t = {0};
  draw(&t, plan, row, rows);
  sg__free(row);
  *svg = sg__text_take(&t);
  if (!*svg)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory drawing %u nodes", __func__,
                    s->node_count);
  return SG_OK;
}

sg_status sg_plan_write_svg(const sg_plan *plan, const char *path) {
  if (!path) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: path is NULL", __func__);
  char *svg = NULL;
  sg_status st = sg_plan_to_svg(plan, &svg);
  if (st) {
    char saved[SG_ERROR_MESSAGE_BYTES];
    snprintf(saved, sizeof saved, "%s", sg_last_error());
    const char *rest = strncmp(saved, "sg_plan_to_svg: ", 16) ? saved : saved + 16;
    return sg__fail(st, "%s: %s", __func__, rest);
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    sg_free(svg);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot open '%s' for writing", __func__, path);
  }
  int bad = fputs(svg, f) < 0;
  bad |= fclose(f) != 0;
  sg_free(svg);
  if (bad) return sg__fail(SG_ERR_SYSTEM, "%s: error writing '%s'", __func__, path);
  return SG_OK;
}
