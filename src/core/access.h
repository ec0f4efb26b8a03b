/* Internal: declared buffer access and planned temporaries, as a graph and
 * its snapshots keep them, and the edges they imply (docs/buffers.md).
 *
 * An access is a byte range in an address space: space 0 is the caller's
 * memory (raw addresses), space t + 1 is temporary t (offsets within it).
 * Ranges of different spaces never overlap. */
#ifndef SG_CORE_ACCESS_H
#define SG_CORE_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/graph.h"

#define SG__NO_TEMP UINT32_MAX
/* The low word of a temporary's handle carries this bit, so that a node
 * handle given where a temporary is expected (or the reverse) is caught. */
#define SG__TEMP_TAG 0x80000000u

typedef struct sg__temp {
  size_t bytes;
  size_t alignment;          /* resolved: a power of two */
  char *name;                /* owned; NULL when unnamed */
} sg__temp;

/* Access kinds as inference sees them. */
enum { SG__ACC_READ = 0, SG__ACC_WRITE = 1, SG__ACC_COMMUTE = 2 };

typedef struct sg__access {
  uint32_t node;
  uint32_t temp;             /* SG__NO_TEMP: the caller's memory */
  uint64_t start, end;       /* [start, end): addresses, or offsets in the temporary */
  uint8_t mode;              /* sg_access_mode */
  uint8_t commutative;
} sg__access;

/* Where a temporary's address goes: a kernel argument (its index), or one
 * of these slots of a copy or memset node. */
#define SG__BIND_COPY_DST 0xfffffff0u
#define SG__BIND_COPY_SRC 0xfffffff1u
#define SG__BIND_MEMSET_DST 0xfffffff2u

typedef struct sg__temp_bind {
  uint32_t node;
  uint32_t arg;              /* a kernel argument, or an SG__BIND_* slot */
  uint32_t temp;
  size_t offset;
  uint8_t auto_kind;         /* a copy made with SG_COPY_AUTO: its kind follows the arena */
} sg__temp_bind;

typedef struct sg__access_table {
  sg__temp *temps;
  uint32_t temp_count, temp_cap;
  sg__access *acc;
  uint32_t count, cap;
  sg__temp_bind *binds;
  uint32_t bind_count, bind_cap;
} sg__access_table;

void sg__access_table_free(sg__access_table *t);
/* Deep copy; SG_ERR_OUT_OF_MEMORY (no message) leaves *dst zeroed. */
sg_status sg__access_table_clone(const sg__access_table *src, sg__access_table *dst);
/* 1 if both tables give the same memory plan: same temporaries (sizes,
 * alignments), same accesses to them, same bindings. */
int sg__access_same_temps(const sg__access_table *a, const sg__access_table *b);

/* The kind inference gives an access. */
static inline int sg__access_kind(const sg__access *a) {
  if (!(a->mode & SG_ACCESS_WRITE)) return SG__ACC_READ;
  return a->commutative ? SG__ACC_COMMUTE : SG__ACC_WRITE;
}

/* The edges the accesses of `t` imply over `node_count` nodes, as sorted
 * distinct keys (from << 32 | to, from < to): *keys allocated (NULL when
 * there is none). SG_ERR_OUT_OF_MEMORY without a message. */
sg_status sg__access_infer(const sg__access_table *t, uint32_t node_count, uint64_t **keys,
                           size_t *count);

/* Compressed successor lists of the explicit edges (from[i] -> to[i], i <
 * explicit_count, distinct) joined with the inferred `keys`: succ_start
 * (node_count + 1), succ (ascending per node), and inferred (one byte per
 * entry of succ, 1 where only inference made the edge; NULL when none is).
 * SG_ERR_OUT_OF_MEMORY without a message; nothing is left allocated. */
sg_status sg__access_merge_csr(const uint32_t *from, const uint32_t *to, uint32_t explicit_count,
                               const uint64_t *keys, size_t key_count, uint32_t node_count,
                               uint32_t **succ_start, uint32_t **succ, uint8_t **inferred,
                               uint32_t *edge_count);

/* Writes into buf why inference ordered `from` before `to`: the memory and
 * range both declared and how each uses it ("" when no access pair of the
 * two conflicts). */
void sg__access_explain(const sg__access_table *t, uint32_t from, uint32_t to, char *buf,
                        size_t cap);

/* What is checked when the graph is planned: a node mixing a commutative
 * write with a plain access of overlapping memory (inference could not say
 * which order it keeps), a temporary bound to an argument of a node that
 * declares no access to it, and a binding to an argument the node does not
 * have (or not pointer-sized). SG_OK, or SG_ERR_INVALID_ARGUMENT naming
 * the node, the memory and the range (`fn` in front). */
struct sg__node;
/* For a copy node being updated with `desc`: its sides bound to temporaries
 * (SG__TEMP_DST, SG__TEMP_SRC, node.h) in *sides, after checking that
 * desc->bytes still fit them. Likewise for a memset (SG__TEMP_DST). */
sg_status sg__access_temp_sides(const sg__access_table *t, uint32_t node,
                                const sg_copy_desc *desc, const char *fn, unsigned *sides);
sg_status sg__access_memset_temp(const sg__access_table *t, uint32_t node,
                                 const sg_memset_desc *desc, const char *fn, unsigned *sides);
sg_status sg__access_check(const sg__access_table *t, const struct sg__node *nodes,
                           uint32_t node_count, const char *fn);

#endif
