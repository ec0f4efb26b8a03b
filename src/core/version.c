/* The library's version, as built (streamgraph/version.h is generated). */
#include "streamgraph/version.h"

unsigned sg_version(void) { return SG_VERSION; }

const char *sg_version_string(void) { return SG_VERSION_STRING; }
