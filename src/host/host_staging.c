/* The host backend's staged copies: a candidate copy node runs on the
 * worker thread that reached it, through the pinned ring (the DMA emulated
 * by memcpy) or a registered buffer, as staging routes it. */
#include "host/host_staging.h"

#include <string.h>

#include "core/error.h"

sg_status sg__staging_host_run(sg__staging *st, uint32_t index, char *message, size_t cap) {
  sg__staged_node *sn = &st->nodes[index];
  const sg__copy *c = &st->exec->snap.nodes[index].u.copy;
  char label[SG__LABEL_BYTES + 16];
  sg__staging_label(st, index, label);
  sg__copy_route route = SG__ROUTE_DIRECT;
  sg__stage_run *run = NULL;
  sg_status s = SG_OK;
  if (st->persistent) {
    const sg__pstate *p = sg__staging_find(st, index, c);
    if (p) {
      route = p->route;
      run = p->run;
    }
  } else {
    s = sg__staging_route(st, index, label, &route);
    if (!s && route == SG__ROUTE_STAGE) {
      void *host, *device;
      sg__staging_sides(c, sn->dir, &host, &device);
      sg__stage_geometry g;
      sg__staging_geometry(st, sn->dir, c->bytes, &g);
      s = sg__stage_run_new(st->pool, sn->dir, host, device, &g, 0, NULL, NULL, label, &run);
    }
  }
  if (s) {
    sg__format(message, cap, "%s", sg_last_error());
    return s;
  }
  if (route == SG__ROUTE_STAGE) {
    sg__stage_run_host(run);
    if (!st->persistent) sg__stage_run_free(run);
  } else {
    memcpy(c->dst, c->src, c->bytes);
    if (route == SG__ROUTE_REGISTERED && !st->persistent) sg__reg_use_end(sn->reg, NULL, label);
  }
  sg__staging_count(st, route);
  return SG_OK;
}
