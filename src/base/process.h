/* process.h -- process-wide state that is not configuration: identity,
 * start time, lifecycle counters and the figures the housekeeping thread
 * (cmd/cron.c) refreshes for INFO. Written by their owners with relaxed
 * atomics, read by anyone. */
#ifndef GOBLIN_BASE_PROCESS_H
#define GOBLIN_BASE_PROCESS_H
#include <stdint.h>
#include <sys/types.h>

#define GOBLIN_VERSION "0.1.0"
#define GOBLIN_REDIS_VERSION "7.0.15"   /* the Redis version whose behaviour we follow */

typedef struct server_state {
    char run_id[41];
    int64_t start_ms;
    char executable[4096];
    int shutdown_asap;
    uint64_t cron_loops;
    int hz;                         /* the cron's rate now (dynamic-hz); 0 before it runs */
    int64_t lastsave;               /* unix seconds */
    double inst_ops_per_sec, inst_input_kbps, inst_output_kbps;
    double inst_repl_input_kbps, inst_repl_output_kbps;
    uint64_t stat_peak_memory;
    uint64_t used_memory_startup;
    uint64_t total_forks, latest_fork_usec; /* process_fork; CONFIG RESETSTAT zeroes them */
} server_state;

extern server_state srv;

/* fork(2), counted and timed (in the parent) for INFO's total_forks and
 * latest_fork_usec. */
pid_t process_fork(void);

/* disable-thp yes (Redis's default): where transparent huge pages are on
 * for every mapping, turn them off for this process and its children (a
 * fork's copy-on-write would copy 2 MB per written page; latency spikes on
 * allocation). 1 done, 0 nothing to do, -1 the kernel refused. */
int process_disable_thp(void);

/* supervised (Redis's no|upstart|systemd|auto): process_supervision
 * resolves the mode (auto from the environment) to PROCESS_SUPERVISED_*.
 * process_supervised_ready, once the server serves: upstart, stop itself
 * (the job's "expect stop"); systemd, STATUS=status and READY=1 to
 * $NOTIFY_SOCKET. process_notify sends one systemd message (STOPPING=1).
 * 0, or -1 when the supervisor cannot be told (no socket, no job). */
enum { PROCESS_SUPERVISED_NONE, PROCESS_SUPERVISED_UPSTART, PROCESS_SUPERVISED_SYSTEMD };
int process_supervision(const char *mode);
int process_supervised_ready(int supervision, const char *status);
int process_notify(int supervision, const char *msg);

#endif
