/* cluster_int.h -- the cluster state shared by the files of cmd/cluster/
 * (cnodes.c: nodes, slots, epochs, nodes.conf; cbus.c: the bus messages,
 * failure detection and failover; ccmd.c: CLUSTER and the redirections).
 * Everything here is guarded by cl_lock (cl_wrlock/cl_rdlock), except
 * the stats counters (relaxed atomics). Field meanings follow Redis 7.0's
 * clusterNode / clusterState. */
#ifndef GOBLIN_CMD_CLUSTER_INT_H
#define GOBLIN_CMD_CLUSTER_INT_H
#include <stdint.h>

#include "cmd/cluster/cluster.h"
#include "util/strbuf.h"

struct client;

#define CL_SLOTS 16384
#define CL_NAMELEN 40
#define CL_IPLEN 46
#define CL_PORT_INCR 10000

enum {
    CN_MASTER = 1,
    CN_SLAVE = 2,
    CN_PFAIL = 4,
    CN_FAIL = 8,
    CN_MYSELF = 16,
    CN_HANDSHAKE = 32,
    CN_NOADDR = 64,
    CN_MEET = 128,
    CN_MIGRATE_TO = 256,
    CN_NOFAILOVER = 512,
};

enum {
    CM_PING = 0,
    CM_PONG = 1,
    CM_MEET = 2,
    CM_FAIL = 3,
    CM_PUBLISH = 4,
    CM_AUTH_REQUEST = 5,
    CM_AUTH_ACK = 6,
    CM_UPDATE = 7,
    CM_MFSTART = 8,
    CM_MODULE = 9,
    CM_PUBLISHSHARD = 10,
    CM_COUNT = 11,
};

/* todo flags: done when the event that set them is over (cl_unlock_todo). */
enum { CT_FAILOVER = 1, CT_STATE = 2, CT_SAVE = 4, CT_FSYNC = 8, CT_MANUAL = 16 };

struct cnode;

typedef struct clink {
    int h;                  /* transport handle, -1 once closed */
    int64_t ctime;
    struct cnode *node;     /* NULL: an inbound link not yet matched */
    int inbound;
    int connected;          /* outbound: the connection completed */
    uint64_t sent, rcvd;    /* bytes, for CLUSTER LINKS */
} clink;

typedef struct cfail_report {
    struct cnode *node;
    int64_t time;
} cfail_report;

typedef struct cnode {
    int64_t ctime;
    char name[CL_NAMELEN];
    int flags;
    uint64_t config_epoch;
    unsigned char slots[CL_SLOTS / 8];
    int numslots;
    struct cnode **slaves;
    int nslaves;
    struct cnode *slaveof;
    uint64_t last_in_gossip;
    int64_t ping_sent, pong_received, data_received, fail_time, voted_time, repl_offset_time, orphaned_time;
    long long repl_offset;
    char ip[CL_IPLEN];
    char hostname[256];
    int port, pport, cport;
    clink *link, *inbound_link;
    cfail_report *reports;
    int nreports;
} cnode;

typedef struct cstate {
    cnode *myself;
    uint64_t current_epoch;
    int state;              /* 0 ok, 1 fail */
    int size;
    cnode **nodes;
    int nnodes;
    cnode *migrating_to[CL_SLOTS];
    cnode *importing_from[CL_SLOTS];
    cnode *slots[CL_SLOTS];
    unsigned char owner_not_claiming[CL_SLOTS / 8];
    /* Elections (replica side). */
    int64_t failover_auth_time;
    int failover_auth_count, failover_auth_sent, failover_auth_rank;
    uint64_t failover_auth_epoch;
    int cant_failover_reason;
    /* Manual failover. */
    int64_t mf_end;
    cnode *mf_slave;
    long long mf_master_offset;
    int mf_can_start;
    uint64_t last_vote_epoch;
    int todo;
    long long sent[CM_COUNT], rcvd[CM_COUNT];
    /* Links freed because their send buffer passed cluster-link-sendbuf-limit. */
    long long links_limit_exceeded;
    int pfail_nodes;
    /* Forgotten nodes: not re-added from gossip until their time. */
    struct {
        char name[CL_NAMELEN];
        int64_t until;
    } * blacklist;
    int nblacklist;
} cstate;

extern cstate cl;
extern const cluster_transport *cl_tp;

/* Settings, refreshed from the config table at every tick. */
typedef struct csettings {
    long long node_timeout;
    int require_full_coverage, allow_reads_when_down, allow_pubsubshard_when_down;
    int validity_factor, migration_barrier, allow_replica_migration, replica_no_failover;
    char announce_ip[CL_IPLEN];
    char announce_hostname[256];
    int announce_port, announce_bus_port, announce_tls_port;
    long long link_sendbuf_limit; /* cluster-link-sendbuf-limit (0: none) */
    long long repl_ping_period_ms; /* repl-ping-replica-period, in ms */
    int preferred_endpoint;  /* 0 ip, 1 hostname, 2 unknown-endpoint */
    int port;                /* the plaintext client port */
    int tls_port;            /* tls-port (0: none) */
    int tls_cluster;         /* tls-cluster: the bus and MIGRATE speak TLS */
} csettings;
extern csettings cls;

/* The ports this node announces, as Redis 7.0's deriveAnnouncedPorts: with
 * tls-cluster the client port is the TLS one (cluster-announce-tls-port,
 * else tls-port) and the plaintext one goes as pport
 * (cluster-announce-port, else port); without it the client port is
 * cluster-announce-port, else port, and pport 0. The bus port is
 * cluster-announce-bus-port, else the bus port listened on. */
void cl_announced_ports(const csettings *s, int *port, int *pport, int *cport);
/* The port a client is told for n (CLUSTER NODES/SLOTS/REPLICAS, -MOVED,
 * -ASK): in a TLS cluster a client that did not come over TLS gets the
 * plaintext port when n announced one. cl lock held. */
int cl_client_port(const struct client *c, const cnode *n);
/* Whether c is such a client (it gets pports). */
int cl_use_pport(const struct client *c);

void cl_wrlock(void);
void cl_rdlock(void);
void cl_unlock(void);
/* Release the write lock after doing what the todo flags ask. */
void cl_unlock_todo(void);
int64_t cl_mstime(void);
void cl_refresh_settings(void);

/* ---- cnodes.c ---- */
cnode *cl_node_new(const char *name, int flags);
void cl_node_add(cnode *n);
void cl_node_del(cnode *n);
cnode *cl_lookup(const char *name, size_t len);
void cl_node_rename(cnode *n, const char *name);
int cl_add_failure_report(cnode *failing, cnode *sender);
int cl_del_failure_report(cnode *n, cnode *sender);
int cl_failure_reports(cnode *n);
int cl_node_add_slave(cnode *m, cnode *s);
int cl_node_remove_slave(cnode *m, cnode *s);
int cl_count_ok_slaves(cnode *n);
int cl_slot_bit(const unsigned char *bm, int slot);
int cl_add_slot(cnode *n, int slot);
int cl_del_slot(int slot);
int cl_del_node_slots(cnode *n);
void cl_close_all_slots(void);
void cl_update_state(void);
void cl_set_node_as_master(cnode *n);
void cl_set_master(cnode *n);
uint64_t cl_max_epoch(void);
int cl_bump_epoch_without_consensus(void);
void cl_blacklist_add(cnode *n);
int cl_blacklist_has(const char *name);
/* use_pport: show the plaintext ports where nodes have one (CLUSTER NODES
 * to a plaintext client of a TLS cluster), as Redis. */
void cl_describe_nodes(strbuf *b, int filter, int use_pport);
void cl_describe_node(strbuf *b, cnode *n, int use_pport);
/* nodes.conf (cl_lock held): write it now; 0, or -1 with errno. */
int cl_save_config(int do_fsync);
/* The same in two steps, so the disk write happens after cl_lock is
 * released (a fsync under it would stall every command's redirection
 * check): the text taken under the lock, written without it. A text older
 * than one already written is not written again (only fsynced if asked). */
typedef struct cl_conf_text {
    strbuf b;
    uint64_t gen;
    int fsync;
} cl_conf_text;
void cl_config_snapshot(cl_conf_text *t, int do_fsync);
int cl_config_write(cl_conf_text *t);
void cl_reset(int hard);
void cl_random_name(char *name);
int cl_is_valid_name(const char *s, size_t n);
long long cl_my_repl_offset(void);
void cl_link_free(clink *l);

/* ---- cbus.c ---- */
void cl_send_ping(clink *l, int type);
void cl_broadcast_pong(int local_slaves_only);
void cl_send_fail(const char *name);
void cl_send_update(clink *l, cnode *n);
void cl_send_mfstart(cnode *n);
void cl_start_handshake_node(const char *ip, int port, int cport);
int cl_start_handshake(const char *ip, int port, int cport);
void cl_reset_manual_failover(void);
void cl_failover_replace_master(void);
void cl_update_slots_with(cnode *sender, uint64_t epoch, const unsigned char *slots);
const char *cl_msg_type_name(int type);
void cl_send_bare_to(cnode *to, int type);
void cl_request_failover_auth(void);
int cl_load_or_create(char *err, size_t errlen);
/* Slots lost with keys since the last call (cluster lock held); their
 * keys are deleted with cl_del_keys_in_slot after the lock is released. */
int cl_take_lost_slots(uint16_t *out);
void cl_del_keys_in_slot(int slot);

/* ---- cfail.c ---- */
void cl_send_failover_auth_if_needed(cnode *n, const unsigned char *h);
void cl_handle_manual_failover(void);
void cl_handle_slave_failover(void);
void cl_manual_failover_check_timeout(void);
#endif
