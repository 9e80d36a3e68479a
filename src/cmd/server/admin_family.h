/* admin_family.h -- the server-administration family, split over a few files:
 *
 *   admin.c          handler table, shared helpers; CONFIG, DBSIZE, FLUSH*,
 *                    TIME, LASTSAVE, SHUTDOWN
 *   admin_command.c  COMMAND and its subcommands (metadata, key extraction)
 *   admin_inspect.c  OBJECT, MEMORY, DEBUG
 *   admin_latency.c  SLOWLOG, LATENCY and the latency event store
 *   info.c           INFO
 *
 * The first block is what other parts of the server may call; the rest is
 * shared by the family's own files only. */
#ifndef GOBLIN_CMD_ADMIN_FAMILY_H
#define GOBLIN_CMD_ADMIN_FAMILY_H
#include <stddef.h>

#include "cmd/command.h"
#include "cmd/keyspec.h"
#include "util/strbuf.h"

/* ---- Public hooks ------------------------------------------------------ */

/* Latency monitor: record a sample of `ms` for event (e.g. "command",
 * "fast-command", "expire-cycle") when latency-monitor-threshold is set and
 * ms reaches it. Thread-safe and cheap when the monitor is off. */
void latency_add_sample_if_needed(const char *event, long long ms);

/* Extension of INFO's `# Goblin` section: subsystems register a function
 * that appends their "name:value\r\n" lines (util/strbuf.h).
 * Registration happens at start-up, before workers run. */
typedef void info_section_fn(strbuf *b);
void info_register_goblin(info_section_fn *fn);


/* ---- Family internals -------------------------------------------------- */

/* Reply Redis's HELP layout: "<CMD> <subcommand> ... Subcommands are:",
 * the given lines (NULL-terminated), then HELP. */
void admin_reply_help(client *c, const char *cmd, const char *const *lines);
/* "ERR unknown subcommand or wrong number of arguments for '<argv[1]>'.
 * Try <CMD> HELP." */
void admin_reply_subcommand_syntax(client *c, const char *cmd);
/* Whether c may do what directive (enable-debug-command,
 * enable-protected-configs) guards: "yes", or "local" and c came over a
 * unix socket or from a loopback address; "no" (Redis's default) never. */
int admin_protected_allowed(const client *c, const char *directive);
/* Format a byte count as Redis's bytesToHuman ("1.63M"). */
void admin_bytes_human(char *buf, size_t len, unsigned long long n);
/* Allocator statistics (0 when unavailable). */
typedef struct admin_alloc_stats {
    size_t allocated, active, resident;
} admin_alloc_stats;
void admin_alloc_stats_get(admin_alloc_stats *st);
/* Total memory attributed to clients' query and output buffers. */
size_t admin_clients_memory(void);
/* Keys and index overhead of one database. The caller holds the keyspace
 * read lock; shards are locked one at a time. */
typedef struct admin_db_overhead {
    size_t keys, expires;
    size_t main, vol;      /* index bytes: key table, TTL array */
} admin_db_overhead;
void admin_db_overhead_get(gdb *db, admin_db_overhead *o);
/* The memory picture INFO memory and MEMORY STATS/DOCTOR share; per_db
 * (optional) is called for each non-empty database. */
typedef struct admin_mem_overview {
    size_t used, peak, startup, rss, clients, overhead, dataset, keys;
    admin_alloc_stats alloc;
} admin_mem_overview;
typedef void admin_db_fn(void *arg, int dbid, const admin_db_overhead *o);
void admin_mem_overview_get(admin_mem_overview *m, admin_db_fn *per_db, void *arg);

void commandCommand(client *c);
void commandCountCommand(client *c);
void commandInfoCommand(client *c);
void commandDocsCommand(client *c);
void commandListCommand(client *c);
void commandGetkeysCommand(client *c);
void commandGetkeysandflagsCommand(client *c);
void commandHelpCommand(client *c);

void objectEncodingCommand(client *c);
void objectFreqCommand(client *c);
void objectIdletimeCommand(client *c);
void objectRefcountCommand(client *c);
void objectHelpCommand(client *c);
void memoryUsageCommand(client *c);
void memoryStatsCommand(client *c);
void memoryDoctorCommand(client *c);
void memoryMallocStatsCommand(client *c);
void memoryPurgeCommand(client *c);
void memoryHelpCommand(client *c);
void debugCommand(client *c);

void slowlogGetCommand(client *c);
void slowlogLenCommand(client *c);
void slowlogResetCommand(client *c);
void slowlogHelpCommand(client *c);
void latencyLatestCommand(client *c);
void latencyHistoryCommand(client *c);
void latencyGraphCommand(client *c);
void latencyResetCommand(client *c);
void latencyDoctorCommand(client *c);
void latencyHelpCommand(client *c);
void latencyHistogramCommand(client *c);
void lolwutCommand(client *c); /* lolwut.c */
/* Binds lazyfree-lazy-user-flush (FLUSHALL/FLUSHDB without SYNC|ASYNC). */
void admin_flush_config_register(void);
/* INFO latencystats (admin_latency.c). */
struct strbuf;
void latency_info_latencystats(struct strbuf *b);
#endif
