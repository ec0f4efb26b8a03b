/* Internal: the node times of one launch timed by stamps (graph mode's
 * traces on the GPU, cuda/cuda_trace.h). Pure C: no CUDA, so the rule is
 * tested on the host.
 *
 * A stamp is one clock reading taken after a node has finished: it waits
 * for the node and for nothing else, so two stamps, or a stamp and a later
 * node, may run in either order (a node whose stamp waits for less than its
 * predecessors' stamps, such as an empty node that a captured graph holds
 * no graph node for, can stamp before they do). The trace's promise is a
 * node's start at or after the end of every node it waited for; the rule
 * keeps it by deriving every time in issue order:
 *
 *   start(v) = the latest end(u) over the nodes u that v waited for,
 *              or the launch's first stamp `t0` when v waited for none;
 *   end(v)   = max(stamp(v), start(v)).
 *
 * An end raised above its stamp is seen by every node after it, because
 * each node's start is read only once all of what it waited for is final. */
#ifndef SG_EXEC_TRACE_STAMPS_H
#define SG_EXEC_TRACE_STAMPS_H

#include <stdint.h>

#include "plan/schedule.h"

/* Starts and ends (on the stamps' clock) of the schedule's nodes, indexed by
 * node. What a node waited for: its reduced predecessors, and with
 * `stream_order` (a graph built by capturing the plan's streams, where
 * stream order binds too) also the node before it in its stream and the
 * nodes whose events it waited for; stream_order is ignored when the
 * schedule's streams are not planned. `stamp[v]`: node v's stamp; the
 * times returned are all >= t0, even for a stamp that reads earlier (which
 * a launch's stamps, all taken after its first, never should). `end` may
 * be `stamp` itself (the values are read before they are overwritten);
 * `start` may not. */
void sg__trace_stamps_times(const sg__schedule *s, int stream_order, uint64_t t0,
                            const uint64_t *stamp, uint64_t *start, uint64_t *end);

#endif
