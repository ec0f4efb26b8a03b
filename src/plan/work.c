/* The planner's working state: freeing it, and the one out-of-memory
 * message every step reports (work.h). Kept apart from the entry point so
 * that the steps depend on this file, not on the file that calls them. */
#include "plan/work.h"

#include <string.h>

#include "core/error.h"
#include "core/sys.h"

sg_status sg__oom(const sg__work *w, const char *what) {
  return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory (%s; %u nodes, %zu edges)", what,
                  w->n, w->edges);
}

void sg__work_free(sg__work *w) {
  sg__free(w->pred_start);
  sg__free(w->pred);
  sg__free(w->rank);
  sg__free(w->level);
  sg__free(w->device_bound);
  sg__free(w->next);
  sg__free(w->prev);
  sg__free(w->rpred_start);
  sg__free(w->rpred);
  memset(w, 0, sizeof *w);
}
