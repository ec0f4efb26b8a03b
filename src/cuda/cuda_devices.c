/* The devices an executable's nodes run on (see cuda_devices.h). */
#include "cuda/cuda_devices.h"

#include <stdio.h>
#include <string.h>

#include "core/device.h"
#include "core/sys.h"
#include "cuda/cuda_call.h"

uint32_t sg__cuda_device_index(const sg__cuda_devices *d, int ordinal) {
  for (uint32_t i = 0; i < d->count; i++)
    if (d->ordinal[i] == ordinal) return i;
  return UINT32_MAX;
}

cudaError_t sg__cuda_switch(int *current, int device) {
  if (*current == device) return cudaSuccess;
  cudaError_t err = SG_CUDA(cudaSetDevice(device));
  if (err == cudaSuccess) *current = device;
  return err;
}

static sg_status grow(sg__cuda_devices *d, const char *fn) {
  uint32_t cap = d->capacity ? d->capacity * 2 : 4;
  int *ordinal = sg__realloc_array(d->ordinal, cap, sizeof *ordinal);
  if (ordinal) d->ordinal = ordinal;
  int *shared = ordinal ? sg__realloc_array(d->shared_optin, cap, sizeof *shared) : NULL;
  if (shared) d->shared_optin = shared;
  if (!ordinal || !shared) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  d->capacity = cap;
  return SG_OK;
}

sg_status sg__cuda_devices_add(sg__cuda_devices *d, int ordinal, const char *fn, uint32_t *index) {
  uint32_t at = sg__cuda_device_index(d, ordinal);
  if (at != UINT32_MAX) {
    if (index) *index = at;
    return SG_OK;
  }
  int present = sg__device_count();
  if (ordinal < 0 || ordinal >= present)
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: device %d asked for; %d device(s) present",
                    fn, ordinal, present);
  sg_status st = d->count == d->capacity ? grow(d, fn) : SG_OK;
  if (st) return st;
  cudaError_t err = SG_CUDA(cudaDeviceGetAttribute(
      &d->shared_optin[d->count], cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaDeviceGetAttribute", fn);
  d->ordinal[d->count] = ordinal;
  if (index) *index = d->count;
  d->count++;
  return SG_OK;
}

sg_status sg__cuda_devices_make(sg__cuda_devices *d, const sg__node *nodes, uint32_t node_count,
                                int exec_device, const char *fn) {
  memset(d, 0, sizeof *d);
  d->node_device = sg__calloc(node_count ? node_count : 1, sizeof *d->node_device);
  if (!d->node_device) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_status st = sg__cuda_devices_add(d, exec_device, fn, NULL);
  int present = sg__device_count();
  for (uint32_t i = 0; i < node_count && !st; i++) {
    int dev = nodes[i].device == SG_DEVICE_DEFAULT ? exec_device : nodes[i].device;
    if (dev >= present) {
      char label[SG__LABEL_BYTES];
      return sg__fail(SG_ERR_BACKEND_UNAVAILABLE,
                      "%s: node %s is set to device %d; %d device(s) present", fn,
                      sg__node_label(&nodes[i], i, label), dev, present);
    }
    d->node_device[i] = dev;
    st = sg__cuda_devices_add(d, dev, fn, NULL);
  }
  return st;
}

sg_status sg__cuda_devices_streams(sg__cuda_devices *d, const char *fn) {
  if (d->count < 2) return SG_OK;
  d->stream = sg__calloc(d->count, sizeof *d->stream);
  if (!d->stream) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  int current;
  cudaError_t err = SG_CUDA(cudaGetDevice(&current));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", fn);
  const int restore = current;
  const char *call = "cudaSetDevice";
  for (uint32_t i = 0; i < d->count && err == cudaSuccess; i++) {
    err = sg__cuda_switch(&current, d->ordinal[i]);
    if (err == cudaSuccess) {
      call = "cudaStreamCreateWithFlags";
      err = SG_CUDA(cudaStreamCreateWithFlags(&d->stream[i], cudaStreamNonBlocking));
      if (err != cudaSuccess) d->stream[i] = NULL;
    }
  }
  if (current != restore) cudaSetDevice(restore);
  if (err != cudaSuccess) {
    char where[96];
    snprintf(where, sizeof where, "%s: the streams of the devices in use", fn);
    return sg__cuda_fail(err, call, where);
  }
  return SG_OK;
}

void sg__cuda_devices_drain(const sg__cuda_devices *d) {
  for (uint32_t i = 0; d->stream && i < d->count; i++)
    if (d->stream[i]) cudaStreamSynchronize(d->stream[i]);
}

void sg__cuda_devices_free(sg__cuda_devices *d) {
  for (uint32_t i = 0; d->stream && i < d->count; i++)
    if (d->stream[i]) cudaStreamDestroy(d->stream[i]);
  sg__free(d->stream);
  sg__free(d->ordinal);
  sg__free(d->shared_optin);
  sg__free(d->node_device);
  memset(d, 0, sizeof *d);
}
