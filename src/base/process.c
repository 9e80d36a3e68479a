/* process.c -- the one process-wide state record (see process.h), the
 * fork every child of the server goes through (timed for INFO), and the
 * start-up's process settings. */
#include "base/process.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
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

int process_disable_thp(void) {
    /* As Redis's linuxMemoryWarnings: only where the system gives every
     * mapping huge pages ("[always]"); with "madvise" only the mappings
     * that ask get them, and the process keeps its own choice. */
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return 0;
    char line[128] = "";
    if (!fgets(line, sizeof(line), f)) line[0] = '\0';
    fclose(f);
    if (!strstr(line, "[always]")) return 0;
    return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 ? 1 : -1;
}
