/* Internal: an executable's planned temporaries - their memory plan, the
 * arena holding them, and the kernel arguments that receive their
 * addresses (docs/buffers.md). One per topology: sg_exec_update builds a
 * new one beside the old when it re-plans. */
#ifndef SG_EXEC_EXEC_TEMPS_H
#define SG_EXEC_EXEC_TEMPS_H

#include "core/snapshot.h"
#include "exec/backend.h"
#include "plan/memplan.h"
#include "plan/plan.h"

typedef struct sg__exec_temps {
  sg__memplan plan;
  const sg__backend_ops *ops;
  int device;
  void *arena;                /* NULL when no temporary has bytes */
  uint32_t *bind_start;       /* node_count + 1: each node's bindings in `binds` */
  sg__temp_bind *binds;       /* sorted by node */
  size_t *temp_bytes;         /* each temporary's size (for updates of bound copies) */
} sg__exec_temps;

/* Plans the temporaries of `snap` under `plan` (completing a deferred plan
 * is not needed: its order and the snapshot's edges suffice), allocates
 * the arena through `ops` on `device`, and writes the temporaries'
 * addresses into the bound kernel arguments of snap's nodes. *out is NULL
 * when the graph has no temporary. Debug builds prove the plan with
 * sg__memplan_check on graphs up to a few thousand nodes. Messages start
 * with `fn`; on failure nothing is left allocated. */
sg_status sg__exec_temps_create(const sg__backend_ops *ops, int device, sg__snapshot *snap,
                                const sg_plan *plan, const char *fn, sg__exec_temps **out);
/* Writes the addresses into node `index`'s bound arguments (a node about
 * to replace the executable's: sg_exec_set_kernel, sg_exec_update);
 * SG_ERR_INVALID_ARGUMENT (prefixed by `fn`) when its parameters no longer
 * have a bound argument. `t` NULL: nothing to do. */
sg_status sg__exec_temps_patch(const sg__exec_temps *t, uint32_t index, sg__node *node,
                               const char *fn);
void sg__exec_temps_free(sg__exec_temps *t);
/* The sides of copy or memset node `index` that are temporaries
 * (SG__TEMP_DST, SG__TEMP_SRC), after checking `bytes` still fit them:
 * what sg_exec_set_copy and sg_exec_set_memset validate a new descriptor
 * with. `t` NULL: none. */
sg_status sg__exec_temps_sides(const sg__exec_temps *t, uint32_t index, size_t bytes,
                               unsigned align, const char *fn, unsigned *sides);

#endif
