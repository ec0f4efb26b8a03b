/* NVTX ranges (core/nvtx.h): the one file that includes the NVTX headers.
 * Built in every configuration; without CUDA or with SG_WITH_NVTX off
 * (SG_HAVE_NVTX undefined) every call does nothing. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/nvtx.h"

#if defined(SG_HAVE_NVTX) && SG_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

/* ARGB colours of the kinds, in sg__nvtx_kind order. */
static const uint32_t colour[SG__NVTX_KIND_COUNT] = {
    0xff1f77b4, /* launch */
    0xff9467bd, /* plan */
    0xff8c564b, /* build */
    0xffff7f0e, /* update */
    0xff2ca02c, /* stage */
    0xffd62728, /* batch */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int listening;
static nvtxDomainHandle_t domain;

/* Not a fault point: pthread_once cannot fail once its control is
 * initialised, and a tool either listens or does not. */
static void look_for_a_tool(void) {
  const char *tool = getenv("NVTX_INJECTION64_PATH");
  listening = tool && *tool;
  if (listening) domain = nvtxDomainCreateA("streamgraph");
}

int sg__nvtx_active(void) {
  pthread_once(&once, look_for_a_tool);
  return listening;
}

static nvtxEventAttributes_t attributes(sg__nvtx_kind kind, const char *name) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = colour[(unsigned)kind < SG__NVTX_KIND_COUNT ? kind : 0];
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

void sg__nvtx_push(sg__nvtx_kind kind, const char *fmt, ...) {
  char name[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  nvtxEventAttributes_t a = attributes(kind, name);
  nvtxDomainRangePushEx(domain, &a);
}

void sg__nvtx_pop(void) { nvtxDomainRangePop(domain); }

uint64_t sg__nvtx_start(sg__nvtx_kind kind, const char *fmt, ...) {
  char name[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  nvtxEventAttributes_t a = attributes(kind, name);
  return nvtxDomainRangeStartEx(domain, &a);
}

void sg__nvtx_end(uint64_t range) {
  if (range) nvtxDomainRangeEnd(domain, range);
}

#else /* no NVTX in this build */

int sg__nvtx_active(void) { return 0; }
void sg__nvtx_push(sg__nvtx_kind kind, const char *fmt, ...) {}
void sg__nvtx_pop(void) {}
uint64_t sg__nvtx_start(sg__nvtx_kind kind, const char *fmt, ...) { return 0; }
void sg__nvtx_end(uint64_t range) {}

#endif
