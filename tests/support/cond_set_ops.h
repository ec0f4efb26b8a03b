// The work of cond_set tests' nodes (cond_set_model.h), shared by the host
// twins, the host nodes, the CPU reference and the CUDA kernel
// (tests/gpu/gpu_cond_set_kernels.cu), so that all compute bit for bit the
// same.
#ifndef SG_TEST_COND_SET_OPS_H
#define SG_TEST_COND_SET_OPS_H

#include <stdint.h>

#ifdef __CUDACC__
#define CS_HD __host__ __device__
#else
#define CS_HD
#endif

enum { CS_MIX = 0, CS_DECIDE = 1, CS_LOOP = 2, CS_STEP = 3 };

// A node's parameters, passed by value as one kernel argument.
typedef struct cs_args {
  uint32_t op, dst, src, salt, value, counter;
} cs_args;

static inline CS_HD uint32_t cs_mix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t x = (a * 0x9e3779b1u) ^ (b + salt + (a << 6) + (a >> 2));
  x ^= x >> 15;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

// Runs one node on `mem`; returns the value its condition gets, or -1 when
// it sets none (MIX).
//  MIX:    mem[dst] = mix(mem[dst], mem[src])
//  DECIDE: mem[dst] = mix(mem[dst], value); condition = value (IF, SWITCH)
//  LOOP:   mem[counter] = value; condition = value != 0 (before a WHILE)
//  STEP:   mem[dst] = mix(mem[dst], mem[counter]); counts mem[counter] down;
//          condition = mem[counter] != 0 (last in a WHILE body)
static inline CS_HD int64_t cs_run(uint32_t *mem, cs_args a) {
  switch (a.op) {
    case CS_MIX:
      mem[a.dst] = cs_mix(mem[a.dst], mem[a.src], a.salt);
      return -1;
    case CS_DECIDE:
      mem[a.dst] = cs_mix(mem[a.dst], a.value, a.salt);
      return a.value;
    case CS_LOOP:
      mem[a.counter] = a.value;
      return a.value != 0;
    default:
      mem[a.dst] = cs_mix(mem[a.dst], mem[a.counter], a.salt);
      if (mem[a.counter]) mem[a.counter]--;
      return mem[a.counter] != 0;
  }
}

#endif
