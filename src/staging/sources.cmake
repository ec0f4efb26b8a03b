# Sources of src/staging (paths relative to src/).
