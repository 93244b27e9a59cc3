/*
 * Embedded ClickHouse launcher: runs the ClickHouse engine shipped as libchdb.so
 * (npm @chdb/lib-linux-x64-gnu) as a real HTTP server for dev, tests and `npm start`.
 *
 * Why a separate native process and not chdb inside Node:
 *  - `SYSTEM START LISTEN HTTP` only works through chdb_query_cmdline (the clickhouse-local entry
 *    point); through chdb_connect/chdb_query it fails with "start_servers_callback is not set".
 *  - Calling libchdb from Node via FFI (koffi) trips ClickHouse's stack-size check.
 *  - A server in its own process is what production looks like (CLICKHOUSE_URL pointing at a real
 *    server), so application code cannot tell the difference, and stopping it is a SIGTERM.
 *
 * Usage: launcher <path/to/libchdb.so> <clickhouse-local arguments...>
 * The caller passes a query that starts the HTTP listener and then blocks forever.
 * Build: gcc -O2 -o launcher launcher.c -ldl
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

typedef void *(*chdb_query_cmdline_fn)(int argc, char **argv);
typedef const char *(*chdb_result_error_fn)(void *result);

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <libchdb.so> [clickhouse-local args...]\n", argv[0]);
    return 2;
  }

  /*
   * The parent starts us in our own process group so a terminal Ctrl-C reaches only the parent,
   * which stops its writers first and then us. The price is that a parent that dies without
   * stopping us (crash, SIGKILL) would leave an orphan holding the port and the data directory;
   * PDEATHSIG turns that into an ordinary SIGTERM. CARTERO_LAUNCHER_PARENT closes the race where
   * the parent died before prctl ran.
   */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  const char *parent = getenv("CARTERO_LAUNCHER_PARENT");
  if (parent && atol(parent) != (long)getppid()) {
    fprintf(stderr, "launcher: parent %s is gone\n", parent);
    return 4;
  }

  /* RTLD_NOW: a broken library fails here with a readable dlerror, not mid-query. */
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  chdb_query_cmdline_fn query = (chdb_query_cmdline_fn)dlsym(lib, "chdb_query_cmdline");
  chdb_result_error_fn result_error = (chdb_result_error_fn)dlsym(lib, "chdb_result_error");
  if (!query || !result_error) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 3;
  }

  /* Reuse argv in place: the library path slot becomes the program name clickhouse expects. */
  argv[1] = "clickhouse";
  void *result = query(argc - 1, argv + 1);
  const char *error = result ? result_error(result) : "null result";
  if (error) {
    fprintf(stderr, "chdb: %s\n", error);
    return 1;
  }
  return 0;
}
