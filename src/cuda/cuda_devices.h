/* Internal: the devices an executable's nodes run on (sg_graph_set_device),
 * for the CUDA backend.
 *
 * Each node runs on its device (the executable's when it has none): its
 * stream belongs to that device, the device is current while the node is
 * enqueued or added to a graph, and its graph node lives in that device's
 * context. An executable whose work touches one device keeps exactly the
 * single-device paths; with several, each device in use also gets one
 * stream of its own (captures of child graphs, NCCL calls of other devices,
 * and the launch's home when no planned stream is on the executable's
 * device). */
#ifndef SG_CUDA_CUDA_DEVICES_H
#define SG_CUDA_CUDA_DEVICES_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core/node.h"

typedef struct sg__cuda_devices {
  uint32_t count;            /* devices in use, >= 1; ordinal[0] is the executable's */
  uint32_t capacity;
  int *ordinal;
  int *shared_optin;         /* device -> cudaDevAttrMaxSharedMemoryPerBlockOptin */
  cudaStream_t *stream;      /* device -> a non-blocking stream of it (count > 1 only) */
  int *node_device;          /* node -> the ordinal it runs on (never SG_DEVICE_DEFAULT) */
} sg__cuda_devices;

/* Resolves every node's device (SG_DEVICE_DEFAULT: `exec_device`), checks
 * each exists (SG_ERR_BACKEND_UNAVAILABLE naming the node) and collects the
 * devices in use with their limits. Messages start with `fn`. */
sg_status sg__cuda_devices_make(sg__cuda_devices *d, const sg__node *nodes, uint32_t node_count,
                                int exec_device, const char *fn);
/* Adds a device in use (an NCCL call's communicator's), checked like a
 * node's; *index its place. */
sg_status sg__cuda_devices_add(sg__cuda_devices *d, int ordinal, const char *fn, uint32_t *index);
/* Makes the per-device streams once every device is known (count > 1). */
sg_status sg__cuda_devices_streams(sg__cuda_devices *d, const char *fn);
/* Waits for each per-device stream (not fault points: drains). */
void sg__cuda_devices_drain(const sg__cuda_devices *d);
void sg__cuda_devices_free(sg__cuda_devices *d);

/* The place of `ordinal` among the devices in use, or UINT32_MAX. */
uint32_t sg__cuda_device_index(const sg__cuda_devices *d, int ordinal);

/* Makes `device` current when *current is another (the launch and build
 * loops switch per node, and only when the device changes). */
cudaError_t sg__cuda_switch(int *current, int device);

#endif
