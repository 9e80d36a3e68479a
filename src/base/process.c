/* process.c -- the one process-wide state record (see process.h), and the
 * fork every child of the server goes through (timed for INFO). */
#include "base/process.h"

#include <unistd.h>

#include "util/monotime.h"

server_state srv;

pid_t process_fork(void) {
    uint64_t t0 = monotime_us();
    pid_t pid = fork();
    if (pid > 0) {
        __atomic_store_n(&srv.latest_fork_usec, monotime_us() - t0, __ATOMIC_RELAXED);
        __atomic_fetch_add(&srv.total_forks, 1, __ATOMIC_RELAXED);
    }
    return pid;
}
