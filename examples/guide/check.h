/* CHECK(call): every streamgraph call returns an sg_status; on failure,
 * sg_last_error() says what went wrong and where. The guide's programs stop
 * at the first failure. */
#ifndef GUIDE_CHECK_H
#define GUIDE_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#include <streamgraph/streamgraph.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    sg_status st_ = (call);                                                    \
    if (st_ != SG_OK) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__,                   \
              sg_status_name(st_), sg_last_error());                           \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#endif
