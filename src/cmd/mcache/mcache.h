/* mcache.h -- the memcache command family: memcache requests run by the
 * command layer on the keyspace of database 0.
 *
 * The memcache protocol module (net/mc_proto.c) parses a request into an
 * mc_req and the client's argv (argv[0] the operation's name, argv[1..]
 * its keys) and calls mc_run. mc_run applies the dispatcher's refusals
 * (loading, read-only replica, maxmemory) and runs the operation through
 * cmd_call with a command definition of this family's own (not in the
 * command table: COMMAND does not list it), so it takes the keys' shard
 * locks, dirties WATCH, frees large-value views and puts its effects on
 * the write stream in Redis form (SET ... PXAT, APPEND, DEL, PEXPIREAT,
 * PERSIST, FLUSHDB). Replies are memcached's text or meta forms. */
#ifndef GOBLIN_CMD_MCACHE_MCACHE_H
#define GOBLIN_CMD_MCACHE_MCACHE_H
#include <stddef.h>
#include <stdint.h>

#include "session/client.h"

enum {
    MC_GET, MC_GETS, MC_GAT, MC_GATS, MC_SET, MC_ADD, MC_REPLACE, MC_APPEND, MC_PREPEND, MC_CAS,
    MC_DELETE, MC_INCR, MC_DECR, MC_TOUCH, MC_FLUSH,
    /* meta commands */
    MC_MG, MC_MS, MC_MD, MC_MA,
    MC_NOPS
};

/* Meta flags seen on a request: bit ('a'..'z' -> 0..25, 'A'..'Z' -> 26..51). */
#define MC_MF(ch) ((ch) >= 'a' ? (uint64_t)1 << ((ch) - 'a') : (uint64_t)1 << ((ch) - 'A' + 26))

typedef struct mc_req {
    int op;
    int noreply;              /* text: noreply; meta: q */
    uint32_t flags;           /* client flags to store */
    long long exptime;        /* memcache form; has_exp says it was given */
    int has_exp;
    uint64_t cas;             /* cas / meta C */
    uint64_t delta;           /* incr/decr / meta D */
    const char *data;         /* value bytes (without the \r\n) */
    size_t dlen;
    /* meta */
    uint64_t mflags;          /* MC_MF bits */
    char mode;                /* M mode letter, 0: default */
    const char *opaque;       /* O token (without the O), NULL: none */
    size_t olen;
    long long vivify_ttl;     /* N */
    long long init;           /* J (ma initial) */
    int base64;               /* b: key is base64 (not supported: refused by the parser) */
} mc_req;

/* Run r on c (argv set up by the caller: argv[0] a name, keys after). The
 * reply is appended to c's output. */
void mc_run(client *c, mc_req *r);
/* Largest value a set may store (memcache-max-item-size). */
long long mc_max_item_size(void);
/* Bind the family's settings (start-up). */
void mc_config_init(void);

/* Counters, for stats and INFO (relaxed atomics). */
enum {
    MCS_CMD_GET, MCS_GET_HITS, MCS_GET_MISSES, MCS_GET_EXPIRED, MCS_CMD_SET, MCS_CMD_TOUCH, MCS_TOUCH_HITS,
    MCS_TOUCH_MISSES, MCS_DELETE_HITS, MCS_DELETE_MISSES, MCS_INCR_HITS, MCS_INCR_MISSES, MCS_DECR_HITS,
    MCS_DECR_MISSES, MCS_CAS_HITS, MCS_CAS_MISSES, MCS_CAS_BADVAL, MCS_CMD_FLUSH, MCS_BYTES_READ,
    MCS_BYTES_WRITTEN, MCS_CURR_CONN, MCS_TOTAL_CONN, MCS_REQUESTS, MCS_N
};
void mc_stat_add(int which, int64_t n);
uint64_t mc_stat(int which);
/* The `stats` reply (general section) for c. */
void mc_reply_stats(client *c);
/* INFO's "# Memcache" section body into buf; returns its length. */
size_t mc_info(char *buf, size_t cap);
#endif
