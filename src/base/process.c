/* process.c -- the one process-wide state record (see process.h), the
 * fork every child of the server goes through (timed for INFO), and the
 * start-up's process settings. */
#include "base/process.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/oomscore.h"
#include "util/monotime.h"

server_state srv;

pid_t process_fork(void) {
    uint64_t t0 = monotime_us();
    pid_t pid = fork();
    if (pid == 0) oomscore_child();
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

int process_supervision(const char *mode) {
    if (!mode || !strcmp(mode, "no")) return PROCESS_SUPERVISED_NONE;
    if (!strcmp(mode, "upstart")) return PROCESS_SUPERVISED_UPSTART;
    if (!strcmp(mode, "systemd")) return PROCESS_SUPERVISED_SYSTEMD;
    /* auto, as Redis: the environment the supervisor leaves says which */
    if (getenv("UPSTART_JOB")) return PROCESS_SUPERVISED_UPSTART;
    if (getenv("NOTIFY_SOCKET")) return PROCESS_SUPERVISED_SYSTEMD;
    return PROCESS_SUPERVISED_NONE;
}

/* systemd's notification protocol (sd_notify(3)): one datagram of
 * "KEY=value" lines to the unix socket named by $NOTIFY_SOCKET (a leading
 * '@' names the abstract namespace). Written here rather than linking
 * libsystemd for one sendto. */
int process_notify(int supervision, const char *msg) {
    if (supervision != PROCESS_SUPERVISED_SYSTEMD) return 0;
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0]) return -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n >= sizeof(a.sun_path)) return -1;
    memcpy(a.sun_path, path, n);
    if (a.sun_path[0] == '@') a.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    ssize_t w = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&a,
                       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
    close(fd);
    return w < 0 ? -1 : 0;
}

int process_supervised_ready(int supervision, const char *status) {
    if (supervision == PROCESS_SUPERVISED_UPSTART) {
        /* upstart's "expect stop": the job is ready when it stops itself. */
        if (!getenv("UPSTART_JOB")) return -1;
        raise(SIGSTOP);
        unsetenv("UPSTART_JOB");
        return 0;
    }
    if (supervision != PROCESS_SUPERVISED_SYSTEMD) return 0;
    char msg[512];
    snprintf(msg, sizeof(msg), "STATUS=%s\nREADY=1\n", status);
    return process_notify(supervision, msg);
}
