/* Internal, for tests: a function the background rebuild's thread
 * (exec_rebuild.c) calls with SG__REBUILD_HOOK_BUILD before it builds, and
 * with SG__REBUILD_HOOK_RETIRE once a retired version's launches have
 * ended, before it frees it. A test makes either slow and checks that no
 * launch waits for it. Plain C, includable from C++. */
#ifndef SG_EXEC_REBUILD_HOOK_H
#define SG_EXEC_REBUILD_HOOK_H

#ifdef __cplusplus
extern "C" {
#endif

enum { SG__REBUILD_HOOK_BUILD = 1, SG__REBUILD_HOOK_RETIRE = 2 };
typedef void (*sg__rebuild_hook)(int where);
/* NULL: none (the default). */
void sg__exec_rebuild_set_hook(sg__rebuild_hook hook);

#ifdef __cplusplus
}
#endif
#endif
