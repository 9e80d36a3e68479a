/* server.h -- process-wide state that is not configuration: identity,
 * start time, lifecycle and the housekeeping ("cron") thread. */
#ifndef GOBLIN_SERVER_SERVER_H
#define GOBLIN_SERVER_SERVER_H
#include <stdint.h>

#define GOBLIN_VERSION "0.1.0"
#define GOBLIN_REDIS_VERSION "7.0.15"   /* the Redis version whose behaviour we follow */

typedef struct server_state {
    char run_id[41];
    int64_t start_ms;
    char executable[4096];
    int shutdown_asap;
    uint64_t cron_loops;
    int64_t lastsave;               /* unix seconds */
    double inst_ops_per_sec, inst_input_kbps, inst_output_kbps;
    uint64_t stat_peak_memory;
    uint64_t used_memory_startup;
} server_state;

extern server_state srv;

void server_cron_start(void);
void server_cron_stop(void);
uint64_t server_used_memory(void);
uint64_t server_rss_memory(void);
#endif
