# Sources of src/plan (paths relative to src/).
