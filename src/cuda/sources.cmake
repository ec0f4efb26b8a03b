# Sources of src/cuda (paths relative to src/).
