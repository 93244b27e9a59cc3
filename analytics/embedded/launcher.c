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
 *
 * Why stdin is a pseudo-terminal and `--interactive` is added (verified against libchdb 26.7):
 * clickhouse-local run non-interactively installs Poco's KillingErrorHandler, which calls
 * std::terminate for any exception that escapes a server thread; and the native TCP handler
 * rethrows every failed handshake (a wrong password, an unknown user, a refused one). So in
 * cluster mode anyone on the machine could abort a shard by knocking on its TCP port with a bad
 * password. clickhouse-local leaves Poco's default handler (which drops the exception) only when
 * stdin is a terminal and `--interactive` is given; with `--query` it then runs the queries first
 * and would prompt only after the last one, which never ends. Nobody writes to the terminal: the
 * master end stays open (a closed one makes isatty fail) and unread, in this process only.
 * A side effect the caller handles: a statement that fails (a listener's port taken) leaves the
 * process at that prompt instead of exiting; server.ts reads the exception in the log, and starts
 * the TCP listener before the HTTP one so an answering HTTP port means both are open.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* stdin becomes the slave end of a new pseudo-terminal, readable and writable by us only. */
static int terminal_stdin(void) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return -1;
  const char *name = ptsname(master);
  int slave = name ? open(name, O_RDWR | O_NOCTTY) : -1;
  if (slave < 0 || fchmod(slave, 0600) != 0 || dup2(slave, STDIN_FILENO) < 0) return -1;
  close(slave);
  return master; /* kept open for the life of the process */
}

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

  if (terminal_stdin() < 0) {
    perror("launcher: pseudo-terminal for stdin");
    return 5;
  }

  /* argv[0] and the library path give way to the program name clickhouse expects and the flag. */
  argv[0] = "clickhouse";
  argv[1] = "--interactive";
  void *result = query(argc, argv);
  const char *error = result ? result_error(result) : "null result";
  if (error) {
    fprintf(stderr, "chdb: %s\n", error);
    return 1;
  }
  return 0;
}
