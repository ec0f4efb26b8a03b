// Kernels built by nvcc into PTX, cubin and fatbin files at build time, for
// the module loading tests (gpu_module_test.cpp).
extern "C" __global__ void fill(unsigned *out, unsigned value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = value + (unsigned)i;
}
