/* Fault injection: the n-th wrapped call of the armed kinds (at the armed
 * fault points, when a site is given) fails, once, and the point it hit is
 * remembered by name. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/sys.h"

atomic_uint sg__fault_armed;
static atomic_ulong countdown;
static atomic_int fired;

/* Set before arming (so a reader sees it whenever the kinds are armed);
 * the site is a prefix of the fault points' names, "" for every point. */
#define SITE_BYTES 256
static char armed_site[SITE_BYTES];
/* Written by the one call that fires, before `fired` is set. */
static char fired_site[SITE_BYTES];

/* "<file under src/>:<function>:<call>": the file as compiled, from its
 * last "src/" on; the call up to its argument list, without a cast in
 * front ("(cudaError_t)f(&x)" is "f"). */
static void site_name(sg__site site, char *buf, size_t cap) {
  const char *file = site.file, *p = site.file;
  while ((p = strstr(p, "src/"))) file = p += 4;
  const char *call = site.call;
  if (*call == '(') {
    const char *close = strchr(call, ')');
    if (close) call = close + 1;
  }
  while (*call == ' ') call++;
  size_t len = strcspn(call, "( ");
  snprintf(buf, cap, "%s:%s:%.*s", file, site.func, (int)len, call);
}

static void arm(unsigned kinds, const char *site, unsigned long nth) {
  atomic_store(&sg__fault_armed, 0u);
  atomic_store(&fired, 0);
  fired_site[0] = '\0';
  snprintf(armed_site, sizeof armed_site, "%s", site ? site : "");
  atomic_store(&countdown, nth);
  atomic_store(&sg__fault_armed, nth ? kinds : 0u);
}

void sg_fault_arm(unsigned kinds, unsigned long nth) { arm(kinds, NULL, nth); }

void sg_fault_arm_site(unsigned kinds, const char *site, unsigned long nth) {
  arm(kinds, site, nth);
}

int sg_fault_fired(void) { return atomic_load(&fired); }

const char *sg_fault_site(void) { return atomic_load(&fired) ? fired_site : ""; }

int sg__fault_fire(sg_fault_kind kind, sg__site site) {
  if (!(atomic_load(&sg__fault_armed) & (unsigned)kind)) return 0;
  char name[SITE_BYTES];
  name[0] = '\0';
  if (armed_site[0]) {
    site_name(site, name, sizeof name);
    if (strncmp(name, armed_site, strlen(armed_site)) != 0) return 0;
  }
  unsigned long left = atomic_load(&countdown);
  while (left > 0) {
    if (atomic_compare_exchange_weak(&countdown, &left, left - 1)) {
      if (left != 1) return 0;
      atomic_store(&sg__fault_armed, 0u);
      if (!name[0]) site_name(site, name, sizeof name);
      memcpy(fired_site, name, sizeof fired_site);
      atomic_store(&fired, 1);
      return 1;
    }
  }
  return 0;
}
