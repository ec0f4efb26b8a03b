/* A program outside the project, built with pkg-config only:
 *   outside VERSION WORK_DIR
 * checks that the headers, the library and pkg-config agree on the version,
 * then runs a small graph on the host backend and writes its DOT and trace. */
#include <stdio.h>
#include <string.h>

#include <streamgraph/streamgraph.h>

static int count_calls(void *user_data) {
  ++*(int *)user_data;
  return 0;
}

static int failed(const char *what) {
  fprintf(stderr, "outside: %s: %s\n", what, sg_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  if (sg_version() != SG_VERSION || strcmp(sg_version_string(), SG_VERSION_STRING) != 0 ||
      strcmp(argv[1], SG_VERSION_STRING) != 0) {
    fprintf(stderr, "outside: versions differ: library %u '%s', header %d '%s', pkg-config '%s'\n",
            sg_version(), sg_version_string(), SG_VERSION, SG_VERSION_STRING, argv[1]);
    return 1;
  }
  static char in[4096], out[4096];
  for (size_t i = 0; i < sizeof in; i++) in[i] = (char)(i * 7 + 1);
  int calls = 0;
  sg_graph *g;
  sg_node copy;
  if (sg_graph_create(&g) || sg_graph_set_name(g, "outside")) return failed("graph");
  sg_copy_desc c = {out, in, sizeof in, SG_COPY_HOST_TO_HOST, "copy"};
  sg_host_desc h = {count_calls, &calls, "count"};
  if (sg_graph_add_copy(g, &c, NULL, 0, &copy) || sg_graph_add_host(g, &h, &copy, 1, NULL))
    return failed("nodes");
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.trace = 1;
  sg_exec *e;
  if (sg_exec_create(g, &o, &e) || sg_exec_launch(e, NULL) || sg_exec_wait(e))
    return failed("run");
  if (calls != 1 || memcmp(in, out, sizeof in) != 0) {
    fprintf(stderr, "outside: wrong result (%d calls)\n", calls);
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/outside.json", argv[2]);
  if (sg_exec_write_trace(e, path)) return failed("trace");
  char *dot;
  if (sg_graph_to_dot(g, &dot)) return failed("dot");
  int has_edge = strstr(dot, "n0 -> n1") != NULL;
  sg_free(dot);
  if (!has_edge) return failed("dot without the edge");
  sg_exec_destroy(e);
  sg_graph_destroy(g);
  printf("outside: streamgraph %s ok\n", sg_version_string());
  return 0;
}
