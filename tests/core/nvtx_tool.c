/* A minimal NVTX tool for tests. NVTX loads it through NVTX_INJECTION64_PATH,
 * as it loads Nsight Systems, and calls InitializeInjectionNvtx2; the tool
 * takes over the domain calls the library makes and records them, checking
 * as it goes that every pop has a push on its thread and every end a start.
 * The test reads the records through the sgtest_nvtx_* functions. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { MAX_RECORDS = 4096, NAME_BYTES = 160 };

typedef struct record {
  int type; /* 0 push, 1 pop, 2 start, 3 end */
  uint64_t id;
  char name[NAME_BYTES];
} record;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static record records[MAX_RECORDS];
static int count, errors, open_pushes, open_starts;
static uint64_t next_id = 1;
static char domain_name[64];
static _Thread_local int depth; /* pushes not popped on this thread */

static void add(int type, uint64_t id, const nvtxEventAttributes_t *a) {
  if (count == MAX_RECORDS) return;
  record *r = &records[count++];
  r->type = type;
  r->id = id;
  r->name[0] = 0;
  if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) {
    strncpy(r->name, a->message.ascii, NAME_BYTES - 1);
    r->name[NAME_BYTES - 1] = 0;
  }
}

static nvtxDomainHandle_t domain_create(const char *name) {
  pthread_mutex_lock(&lock);
  strncpy(domain_name, name ? name : "", sizeof domain_name - 1);
  pthread_mutex_unlock(&lock);
  return (nvtxDomainHandle_t)(uintptr_t)0x5347; /* any non-null handle */
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  pthread_mutex_lock(&lock);
  add(0, 0, a);
  open_pushes++;
  pthread_mutex_unlock(&lock);
  return ++depth;
}

static int pop(nvtxDomainHandle_t d) {
  (void)d;
  pthread_mutex_lock(&lock);
  add(1, 0, NULL);
  if (depth == 0) errors++;
  else open_pushes--;
  pthread_mutex_unlock(&lock);
  return depth > 0 ? depth-- : -1;
}

static nvtxRangeId_t start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  pthread_mutex_lock(&lock);
  uint64_t id = next_id++;
  add(2, id, a);
  open_starts++;
  pthread_mutex_unlock(&lock);
  return id;
}

static void end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)d;
  pthread_mutex_lock(&lock);
  int started = 0;
  for (int i = 0; i < count; i++)
    if (records[i].type == 2 && records[i].id == id) started = 1;
  for (int i = 0; i < count; i++)
    if (records[i].type == 3 && records[i].id == id) started = 0; /* ended twice */
  if (started) open_starts--;
  else errors++;
  add(3, id, NULL);
  pthread_mutex_unlock(&lock);
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const NvtxExportTableCallbacks *callbacks = get_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      size < NVTX_CBID_CORE2_DomainCreateA)
    return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
  *table[NVTX_CBID_CORE2_DomainRangeStartEx] = (NvtxFunctionPointer)start;
  *table[NVTX_CBID_CORE2_DomainRangeEnd] = (NvtxFunctionPointer)end;
  return 1;
}

EXPORT int sgtest_nvtx_count(void) { return count; }
EXPORT int sgtest_nvtx_type(int i) { return records[i].type; }
EXPORT const char *sgtest_nvtx_name(int i) { return records[i].name; }
EXPORT int sgtest_nvtx_errors(void) { return errors; }
EXPORT int sgtest_nvtx_open_pushes(void) { return open_pushes; }
EXPORT int sgtest_nvtx_open_starts(void) { return open_starts; }
EXPORT const char *sgtest_nvtx_domain(void) { return domain_name; }
