# Sources of src/pipeline (paths relative to src/).
