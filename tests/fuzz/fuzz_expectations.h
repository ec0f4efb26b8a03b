// Which guarantees the fuzz targets enforce. Each one that is 0 is a known
// defect whose fix has not landed yet: the targets still exercise those
// inputs (they must not crash, hang or leak), but accept either answer.
// Build with -DSG_FUZZ_STRICT=1 (tools/fuzz --strict) to enforce them all.
#ifndef SG_FUZZ_EXPECTATIONS_H
#define SG_FUZZ_EXPECTATIONS_H

#ifndef SG_FUZZ_STRICT
#define SG_FUZZ_STRICT 0
#endif

// Trace JSON and DOT are valid UTF-8 whatever bytes the node names hold
// (defect 6 of the reliability issue).
#define SG_FUZZ_CHECK_UTF8 (SG_FUZZ_STRICT || 1)
// A copy or memset running past the end of a block the library knows is
// refused when the node is added (first-contact bounds checks).
#define SG_FUZZ_CHECK_BOUNDS 1
// A copy whose byte range wraps the address space is judged with integer
// arithmetic, never pointer wrap-around (defect 2).
#define SG_FUZZ_CHECK_WRAP 1
// CUDA_DEVICE_MAX_CONNECTIONS is read as digits only (defect 5).
#define SG_FUZZ_CHECK_ENV 1
// A failed sg_exec_update leaves the executable as it was, usable, and its
// message names sg_exec_update (defect 3).
#define SG_FUZZ_CHECK_UPDATE 1

#endif
