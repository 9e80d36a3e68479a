/* process.c -- the one process-wide state record (see process.h), and the
 * fork every child of the server goes through (timed for INFO). */
#include "base/process.h"

#include <time.h>
#include <unistd.h>

server_state srv;

static uint64_t mono_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

pid_t process_fork(void) {
    uint64_t t0 = mono_us();
    pid_t pid = fork();
    if (pid > 0) {
        __atomic_store_n(&srv.latest_fork_usec, mono_us() - t0, __ATOMIC_RELAXED);
        __atomic_fetch_add(&srv.total_forks, 1, __ATOMIC_RELAXED);
    }
    return pid;
}
