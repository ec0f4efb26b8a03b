# Sources of src/pipeline (paths relative to src/).
list(APPEND SG_C_SOURCES
  pipeline/pipeline.c
  pipeline/pipeline_bind.c
  pipeline/pipeline_report.c
  pipeline/pipeline_submit.c
  pipeline/pipeline_trace.c)
