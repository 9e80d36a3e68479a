/* ccmd.c -- CLUSTER, ASKING, READONLY, READWRITE, the redirection of
 * commands (Redis's getNodeByQuery), start-up, and the cluster lock.
 *
 * The redirection: the keys of a command (or of every command an EXEC
 * runs) must hash to one slot (-CROSSSLOT); an unowned slot is
 * -CLUSTERDOWN Hash slot not served; a slot migrating away sends the keys
 * it no longer has to the target (-ASK, -TRYAGAIN for a mix); a slot being
 * imported serves ASKING clients; a replica serves READONLY reads of its
 * master's slots; anything else owned elsewhere is -MOVED. The slot state
 * is read under the cluster read lock; whether keys exist is looked up
 * after it is released (the bus thread never waits for the keyspace while
 * it holds the cluster lock, and commands may take the cluster lock while
 * they hold the keyspace). */
#include "cmd/cluster/cluster_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/config.h"
#include "base/log.h"
#include "base/tls.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/keyspec.h"
#include "cmd/multi.h"
#include "cmd/repl/repl.h"
#include "cmd/server/admin_family.h"
#include "db/db.h"
#include "session/reply.h"
#include "util/crc16.h"
#include "util/strutil.h"

static int enabled;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
csettings cls;

int cluster_enabled(void) { return enabled; }

void cl_wrlock(void) { pthread_rwlock_wrlock(&lock); }
void cl_rdlock(void) { pthread_rwlock_rdlock(&lock); }
void cl_unlock(void) { pthread_rwlock_unlock(&lock); }

int64_t cl_mstime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cl_unlock_todo(void) {
    int t = cl.todo;
    if (t & CT_MANUAL) {
        cl.todo &= ~CT_MANUAL;
        if (cl.myself->flags & CN_SLAVE) {
            cl_handle_manual_failover();
            cl_handle_slave_failover();
        }
    } else if (t & CT_FAILOVER) {
        cl_handle_slave_failover();
    }
    if (cl.todo & CT_STATE) cl_update_state();
    cl_conf_text conf;
    int save = (cl.todo & CT_SAVE) != 0;
    if (save) cl_config_snapshot(&conf, (cl.todo & CT_FSYNC) != 0);
    uint16_t lost[CL_SLOTS];
    int nlost = cl_take_lost_slots(lost);
    cl_unlock();
    if (save && cl_config_write(&conf) != 0) {
        log_warn("Fatal: can't update cluster config file.");
        exit(1);
    }
    for (int i = 0; i < nlost; i++) cl_del_keys_in_slot(lost[i]);
}

static long long ll_of(const char *name, long long def) {
    char *v = config_value(name);
    long long r = def;
    if (v) {
        if (!strcmp(v, "yes")) r = 1;
        else if (!strcmp(v, "no")) r = 0;
        else r = atoll(v);
        free(v);
    }
    return r;
}

static void str_of(const char *name, char *out, size_t n) {
    char *v = config_value(name);
    snprintf(out, n, "%s", v ? v : "");
    free(v);
}

void cl_refresh_settings(void) {
    csettings s;
    memset(&s, 0, sizeof(s));
    s.node_timeout = ll_of("cluster-node-timeout", 15000);
    s.require_full_coverage = (int)ll_of("cluster-require-full-coverage", 1);
    s.allow_reads_when_down = (int)ll_of("cluster-allow-reads-when-down", 0);
    s.allow_pubsubshard_when_down = (int)ll_of("cluster-allow-pubsubshard-when-down", 1);
    s.validity_factor = (int)ll_of("cluster-replica-validity-factor", 10);
    s.migration_barrier = (int)ll_of("cluster-migration-barrier", 1);
    s.allow_replica_migration = (int)ll_of("cluster-allow-replica-migration", 1);
    s.replica_no_failover = (int)ll_of("cluster-replica-no-failover", 0);
    str_of("cluster-announce-ip", s.announce_ip, sizeof(s.announce_ip));
    str_of("cluster-announce-hostname", s.announce_hostname, sizeof(s.announce_hostname));
    s.announce_port = (int)ll_of("cluster-announce-port", 0);
    s.announce_bus_port = (int)ll_of("cluster-announce-bus-port", 0);
    s.announce_tls_port = (int)ll_of("cluster-announce-tls-port", 0);
    s.link_sendbuf_limit = ll_of("cluster-link-sendbuf-limit", 0);
    s.repl_ping_period_ms = ll_of("repl-ping-replica-period", 10) * 1000;
    char ep[32];
    str_of("cluster-preferred-endpoint-type", ep, sizeof(ep));
    s.preferred_endpoint = !strcmp(ep, "hostname") ? 1 : !strcmp(ep, "unknown-endpoint") ? 2 : 0;
    s.port = cfg.port;
    s.tls_port = tls_port();
    s.tls_cluster = tls_cluster();
    cl_wrlock();
    cls = s;
    if (cl.myself) {
        cl_announced_ports(&s, &cl.myself->port, &cl.myself->pport, &cl.myself->cport);
        if (s.announce_ip[0]) snprintf(cl.myself->ip, sizeof(cl.myself->ip), "%s", s.announce_ip);
        cl.myself->flags = (cl.myself->flags & ~CN_NOFAILOVER) | (s.replica_no_failover ? CN_NOFAILOVER : 0);
    }
    cl_unlock();
}

void cl_announced_ports(const csettings *s, int *port, int *pport, int *cport) {
    *port = s->tls_cluster ? s->tls_port : s->port;
    *pport = s->tls_cluster ? s->port : 0;
    if (s->tls_cluster && s->announce_tls_port) {
        *port = s->announce_tls_port;
        *pport = s->announce_port;
    } else if (s->announce_port) {
        *port = s->announce_port;
    }
    *cport = s->announce_bus_port ? s->announce_bus_port : cluster_bus_port();
}

/* A script's client has no connection in Redis: it gets the TLS ports. */
int cl_use_pport(const client *c) {
    return cls.tls_cluster && c->conn && !(client_flags_peek(c) & (CLIENT_TLS | CLIENT_SCRIPT));
}

int cl_client_port(const client *c, const cnode *n) { return cl_use_pport(c) && n->pport ? n->pport : n->port; }

/* The port the bus port derives from: tls-port with tls-cluster. */
static int base_port(void) { return tls_cluster() ? tls_port() : cfg.port; }

int cluster_bus_port(void) {
    int p = (int)ll_of("cluster-port", 0);
    return p ? p : base_port() + CL_PORT_INCR;
}

void cluster_preinit(void) {
    enabled = (int)ll_of("cluster-enabled", 0);
    if (enabled) db_set_slot_mode(1);
}

int cluster_init(char *err, size_t errlen) {
    if (!enabled) return 0;
    if (!cluster_enabled()) return 0;
    if (ll_of("cluster-port", 0) == 0 && base_port() > 65535 - CL_PORT_INCR) {
        snprintf(err, errlen,
                 "Redis port number too high. Cluster communication port is 10,000 port numbers higher than your "
                 "Redis port. Your Redis port number must be 55535 or less.");
        return -1;
    }
    cl.state = 1;
    cl.size = 1;
    cl.mf_master_offset = -1;
    if (cl_load_or_create(err, errlen) != 0) return -1;
    cl_refresh_settings();
    /* A replica in nodes.conf follows its master once start-up is over
     * (the cron sees it is not replicating yet). */
    return 0;
}

int cluster_is_master(void) {
    if (!enabled) return 1;
    cl_rdlock();
    int m = (cl.myself->flags & CN_MASTER) != 0;
    cl_unlock();
    return m;
}

int cluster_connections(void) {
    if (!enabled) return 0;
    cl_rdlock();
    int n = 0;
    for (int i = 0; i < cl.nnodes; i++) n += (cl.nodes[i]->link != NULL) + (cl.nodes[i]->inbound_link != NULL);
    cl_unlock();
    return n;
}

static size_t link_mem(const clink *l) {
    return l ? sizeof(*l) + (l->h >= 0 && cl_tp ? cl_tp->pending(l->h) : 0) : 0;
}

size_t cluster_links_memory(void) {
    if (!enabled) return 0;
    cl_rdlock();
    size_t m = 0;
    for (int i = 0; i < cl.nnodes; i++) m += link_mem(cl.nodes[i]->link) + link_mem(cl.nodes[i]->inbound_link);
    cl_unlock();
    return m;
}

/* ---- redirection -------------------------------------------------------- */

enum { R_NONE, R_CROSS_SLOT, R_UNSTABLE, R_ASK, R_MOVED, R_DOWN_STATE, R_DOWN_UNBOUND, R_DOWN_RO_STATE };

typedef struct query {
    int nkeys, slot, cross, multiple;
    const char *fk;
    size_t fkn;
    /* The keys, kept for the existence check. */
    const char **k;
    size_t *kn;
    int cap;
    int pubsubshard;
} query;

static void q_key(query *q, const char *k, size_t n) {
    int s = (int)crc16_key_slot(k, n);
    if (q->nkeys == 0) {
        q->fk = k;
        q->fkn = n;
        q->slot = s;
    } else if (!(n == q->fkn && memcmp(k, q->fk, n) == 0)) {
        if (s != q->slot) q->cross = 1;
        else q->multiple = 1;
    }
    if (q->nkeys == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->k = realloc(q->k, sizeof(char *) * (size_t)q->cap);
        q->kn = realloc(q->kn, sizeof(size_t) * (size_t)q->cap);
        if (!q->k || !q->kn) abort();
    }
    q->k[q->nkeys] = k;
    q->kn[q->nkeys++] = n;
}

static int is_pubsubshard(const cmd_def *d) {
    const char *n = d->fullname;
    return !strcmp(n, "ssubscribe") || !strcmp(n, "sunsubscribe") || !strcmp(n, "spublish");
}

static void q_command(query *q, const cmd_def *d, int argc, garg *argv) {
    if (q->cross) return;
    cmd_keyacc *keys = NULL;
    int n = cmd_call_keys(d, argv, argc, &keys);
    for (int i = 0; i < n && !q->cross; i++) q_key(q, argv[keys[i].pos].p, argv[keys[i].pos].n);
    free(keys);
    if (is_pubsubshard(d)) q->pubsubshard = 1;
}

static void q_each(void *arg, const cmd_def *d, int argc, garg *argv) { q_command(arg, d, argc, argv); }

static int key_exists(const char *k, size_t n) {
    gdb *db = db_get(0);
    unsigned s = db_shard_of(k, n);
    int held = db_keyspace_write_held();
    if (!held) {
        db_rdlock_keyspace();
        db_lock_shard(db, s);
    }
    dbentry *e = db_lookup_raw(db, k, n);
    int ok = e != NULL;
    if (!held) {
        db_unlock_shard(db, s);
        db_unlock_keyspace();
    }
    return ok;
}

/* "endpoint:port" of n as a redirection names it to c
 * (cluster-preferred-endpoint-type, the port of c's kind). cl held. */
static void node_addr(client *c, const cnode *n, char *buf, size_t len) {
    const char *ep = cls.preferred_endpoint == 0   ? n->ip
                     : cls.preferred_endpoint == 1 ? (n->hostname[0] ? n->hostname : "?")
                                                   : "";
    snprintf(buf, len, "%s:%d", ep, cl_client_port(c, n));
}

/* The node to serve the query (myself: run it here), the error code and
 * the slot; *target receives the MOVED/ASK address. */
static int get_node_by_query(client *c, const cmd_def *cmd, int argc, garg *argv, int *slotp, char *addr,
                             size_t addrlen, int *is_myself) {
    query q;
    memset(&q, 0, sizeof(q));
    int is_exec = !strcmp(cmd->fullname, "exec");
    uint32_t cf = client_flags_peek(c);
    *is_myself = 1;
    if (is_exec) {
        if (!(cf & CLIENT_MULTI)) return R_NONE;
        multi_queued_each(c, q_each, &q);
    } else {
        q_command(&q, cmd, argc, argv);
    }
    int code = R_NONE;
    if (q.nkeys == 0) goto out;
    int slot = q.slot, migrating = 0, importing = 0, myself_is_slave_of_owner = 0, state, owner_is_me;
    char ask_addr[CL_IPLEN + 300] = {0}, owner_addr[CL_IPLEN + 300] = {0};
    cl_rdlock();
    cnode *n = cl.slots[slot];
    state = cl.state;
    if (n) {
        owner_is_me = n == cl.myself;
        if (owner_is_me && cl.migrating_to[slot]) migrating = 1;
        else if (cl.importing_from[slot]) importing = 1;
        /* Only a MOVED names the owner: not formatted for a key served here. */
        if (!owner_is_me) node_addr(c, n, owner_addr, sizeof(owner_addr));
        if (migrating) node_addr(c, cl.migrating_to[slot], ask_addr, sizeof(ask_addr));
        myself_is_slave_of_owner = (cl.myself->flags & CN_SLAVE) && cl.myself->slaveof == n;
    } else {
        owner_is_me = 0;
    }
    cl_unlock();
    *slotp = slot;
    /* As Redis: the first key's slot unowned stops the check there, before
     * the other keys are compared with it. */
    if (!n) {
        *is_myself = 0;
        code = R_DOWN_UNBOUND;
        goto out;
    }
    if (q.cross) {
        *is_myself = 0;
        code = R_CROSS_SLOT;
        goto out;
    }
    int missing = 0, existing = 0;
    if ((migrating || importing) && !q.pubsubshard)
        for (int i = 0; i < q.nkeys; i++) {
            if (key_exists(q.k[i], q.kn[i])) existing++;
            else missing++;
        }
    uint32_t flags = cmd->flags;
    if (is_exec) flags |= multi_queued_flags(c) & CMDF_WRITE;
    int is_asking_cmd = strcmp(cmd->fullname, "restore-asking") == 0;
    if (state != 0) {
        if (q.pubsubshard) {
            if (!cls.allow_pubsubshard_when_down) {
                *is_myself = 0;
                code = R_DOWN_STATE;
                goto out;
            }
        } else if (!cls.allow_reads_when_down) {
            *is_myself = 0;
            code = R_DOWN_STATE;
            goto out;
        } else if (flags & CMDF_WRITE) {
            *is_myself = 0;
            code = R_DOWN_RO_STATE;
            goto out;
        }
    }
    if ((migrating || importing) && !strcmp(cmd->fullname, "migrate")) goto out;
    if (migrating && missing) {
        *is_myself = 0;
        if (existing) {
            code = R_UNSTABLE;
        } else {
            code = R_ASK;
            snprintf(addr, addrlen, "%s", ask_addr);
        }
        goto out;
    }
    if (importing && ((cf & CLIENT_ASKING) || is_asking_cmd)) {
        if (q.multiple && missing) {
            *is_myself = 0;
            code = R_UNSTABLE;
        }
        goto out;
    }
    if (((cf & CLIENT_READONLY) || q.pubsubshard) && !(flags & CMDF_WRITE) && myself_is_slave_of_owner) goto out;
    if (!owner_is_me) {
        *is_myself = 0;
        code = R_MOVED;
        snprintf(addr, addrlen, "%s", owner_addr);
    }
out:
    free(q.k);
    free(q.kn);
    return code;
}

static void redirect_reply(client *c, int code, int slot, const char *addr) {
    switch (code) {
    case R_CROSS_SLOT: reply_error(c, "CROSSSLOT Keys in request don't hash to the same slot"); break;
    case R_UNSTABLE: reply_error(c, "TRYAGAIN Multiple keys request during rehashing of slot"); break;
    case R_DOWN_STATE: reply_error(c, "CLUSTERDOWN The cluster is down"); break;
    case R_DOWN_RO_STATE: reply_error(c, "CLUSTERDOWN The cluster is down and only accepts read commands"); break;
    case R_DOWN_UNBOUND: reply_error(c, "CLUSTERDOWN Hash slot not served"); break;
    case R_ASK: reply_errorf(c, "ASK %d %s", slot, addr); break;
    case R_MOVED: reply_errorf(c, "MOVED %d %s", slot, addr); break;
    }
}

int cluster_redirect(client *c, const cmd_def *cmd) {
    if (!enabled) return 0;
    int is_exec = !strcmp(cmd->fullname, "exec");
    if (!(cmd->flags & CMDF_MOVABLEKEYS) && cmd->first <= 0 && !is_exec && !is_pubsubshard(cmd)) return 0;
    int slot = 0, mine;
    char addr[400] = {0};
    int code = get_node_by_query(c, cmd, c->argc, c->argv, &slot, addr, sizeof(addr), &mine);
    if (mine) return 0;
    if (is_exec) multi_discard_state(c);
    else if (client_flags_peek(c) & CLIENT_MULTI) client_flag_on(c, CLIENT_DIRTY_EXEC);
    redirect_reply(c, code, slot, addr);
    __atomic_fetch_add(&((cmd_def *)cmd)->rejected, 1, __ATOMIC_RELAXED);
    return 1;
}

int cluster_blocked_redirect(client *c, const garg *key, int write) {
    if (!enabled) return 0;
    int slot = (int)crc16_key_slot(key->p, key->n);
    char addr[CL_IPLEN + 300] = {0};
    cl_rdlock();
    int down = cl.state != 0;
    cnode *n = cl.slots[slot];
    int stay = n == cl.myself || cl.importing_from[slot] != NULL;
    /* A READONLY client's read of a slot of the primary this node replicates. */
    if (!stay && n && (client_flags_peek(c) & CLIENT_READONLY) && !write && (cl.myself->flags & CN_SLAVE) &&
        cl.myself->slaveof == n)
        stay = 1;
    if (n && !stay) node_addr(c, n, addr, sizeof(addr));
    cl_unlock();
    /* As Redis's clusterRedirectBlockedClientIfNeeded: a failed cluster
     * first (a write might never come to unblock the client), then a slot
     * nobody serves, then a slot served elsewhere and not being imported. */
    if (down) redirect_reply(c, R_DOWN_STATE, slot, addr);
    else if (stay) return 0;
    else redirect_reply(c, n ? R_MOVED : R_DOWN_UNBOUND, slot, addr);
    return 1;
}

const char *cluster_script_check(client *caller, const cmd_def *cmd, int argc, garg *argv, int *slotp,
                                 int cross_slot_ok) {
    if (!enabled || (client_flags_peek(caller) & (CLIENT_PRIMARY | CLIENT_AOF_LOADER))) return NULL;
    int slot = -1, mine;
    char addr[400];
    int code = get_node_by_query(caller, cmd, argc, argv, &slot, addr, sizeof(addr), &mine);
    if (!mine) {
        if (code == R_DOWN_RO_STATE)
            return "Script attempted to execute a write command while the cluster is down and readonly";
        if (code == R_DOWN_STATE) return "Script attempted to execute a command while the cluster is down";
        return "Script attempted to access a non local key in a cluster node";
    }
    /* Keys the script did not declare: all in the slot of the first one
     * (or of the declared keys), unless allow-cross-slot-keys. */
    if (slot != -1 && !cross_slot_ok) {
        if (*slotp == -1) *slotp = slot;
        else if (*slotp != slot) return "Script attempted to access keys that do not hash to the same slot";
    }
    return NULL;
}

int cluster_declared_slot(int argc, garg *argv) {
    long long nk;
    if (!enabled || argc < 4 || !str_to_ll(argv[2].p, argv[2].n, &nk) || nk <= 0) return -1;
    return (int)crc16_key_slot(argv[3].p, argv[3].n);
}

/* ---- ASKING / READONLY / READWRITE ------------------------------------- */

#define DISABLED "ERR This instance has cluster support disabled"

static void askingCommand(client *c) {
    if (!enabled) return reply_error(c, DISABLED);
    client_flag_on(c, CLIENT_ASKING);
    reply_ok(c);
}

static void readonlyCommand(client *c) {
    if (!enabled) return reply_error(c, DISABLED);
    client_flag_on(c, CLIENT_READONLY);
    reply_ok(c);
}

static void readwriteCommand(client *c) {
    if (!enabled) return reply_error(c, DISABLED);
    client_flag_off(c, CLIENT_READONLY);
    reply_ok(c);
}

/* ---- CLUSTER ------------------------------------------------------------ */

static int slot_arg(client *c, const garg *a) {
    long long v;
    if (!str_to_ll(a->p, a->n, &v) || v < 0 || v >= CL_SLOTS) {
        reply_error(c, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)v;
}

static void help(client *c) {
    static const char *const lines[] = {
        "ADDSLOTS <slot> [<slot> ...]",
        "    Assign slots to current node.",
        "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Assign slots which are between <start-slot> and <end-slot> to current node.",
        "BUMPEPOCH",
        "    Advance the cluster config epoch.",
        "COUNT-FAILURE-REPORTS <node-id>",
        "    Return number of failure reports for <node-id>.",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "DELSLOTS <slot> [<slot> ...]",
        "    Delete slots information from current node.",
        "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
        "FAILOVER [FORCE|TAKEOVER]",
        "    Promote current replica node to being a master.",
        "FORGET <node-id>",
        "    Remove a node from the cluster.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "FLUSHSLOTS",
        "    Delete current node own slots information.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MEET <ip> <port> [<bus-port>]",
        "    Connect nodes into a working cluster.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "REPLICATE <node-id>",
        "    Configure current node as replica to <node-id>.",
        "RESET [HARD|SOFT]",
        "    Reset current node (default: soft).",
        "SET-CONFIG-EPOCH <epoch>",
        "    Set config epoch of current node.",
        "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
        "    Set slot state.",
        "REPLICAS <node-id>",
        "    Return <node-id> replicas.",
        "SAVECONFIG",
        "    Force saving cluster configuration on disk.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        "LINKS",
        "    Return information about all network links between this node and its peers.",
        "    Output format is an array where each array element is a map containing attributes of a link",
        NULL,
    };
    admin_reply_help(c, "CLUSTER", lines);
}

static const char *endpoint(cnode *n) {
    return cls.preferred_endpoint == 0 ? n->ip : cls.preferred_endpoint == 1 ? (n->hostname[0] ? n->hostname : "?") : "";
}

static void reply_node_for_slots(client *c, cnode *n) {
    reply_array(c, 4);
    if (cls.preferred_endpoint == 0) reply_bulk_cstr(c, n->ip);
    else if (cls.preferred_endpoint == 1) reply_bulk_cstr(c, n->hostname[0] ? n->hostname : "?");
    else reply_null(c);
    reply_int(c, cl_client_port(c, n));
    reply_bulk(c, n->name, CL_NAMELEN);
    int len = (cls.preferred_endpoint != 0) + (cls.preferred_endpoint != 1 && n->hostname[0]);
    reply_map(c, len);
    if (cls.preferred_endpoint != 0) {
        reply_bulk_cstr(c, "ip");
        reply_bulk_cstr(c, n->ip);
    }
    if (cls.preferred_endpoint != 1 && n->hostname[0]) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
}

static int replica_available(cnode *n) {
    if (n->flags & CN_FAIL) return 0;
    long long off = (n->flags & CN_MYSELF) ? cl_my_repl_offset() : n->repl_offset;
    return off != 0;
}

static void cluster_slots(client *c) {
    cl_rdlock();
    int ranges = 0;
    for (int i = 0; i < CL_SLOTS; i++)
        if (cl.slots[i] && (i == 0 || cl.slots[i - 1] != cl.slots[i])) ranges++;
    reply_array(c, ranges);
    for (int i = 0; i < CL_SLOTS;) {
        cnode *n = cl.slots[i];
        if (!n) {
            i++;
            continue;
        }
        int start = i;
        while (i < CL_SLOTS && cl.slots[i] == n) i++;
        int avail = 0;
        for (int j = 0; j < n->nslaves; j++) avail += replica_available(n->slaves[j]);
        reply_array(c, 3 + avail);
        reply_int(c, start);
        reply_int(c, i - 1);
        reply_node_for_slots(c, n);
        for (int j = 0; j < n->nslaves; j++)
            if (replica_available(n->slaves[j])) reply_node_for_slots(c, n->slaves[j]);
    }
    cl_unlock();
}

static void shard_node(client *c, cnode *n) {
    long long off = (n->flags & CN_MYSELF) ? cl_my_repl_offset() : n->repl_offset;
    /* As Redis: tls-cluster tells whether a node's port is its TLS one. */
    int plain = cls.tls_cluster ? n->pport : n->port, tls = cls.tls_cluster ? n->port : 0;
    int fields = 6 + (plain != 0) + (tls != 0) + (n->hostname[0] != 0);
    reply_map(c, fields);
    reply_bulk_cstr(c, "id");
    reply_bulk(c, n->name, CL_NAMELEN);
    if (plain) {
        reply_bulk_cstr(c, "port");
        reply_int(c, plain);
    }
    if (tls) {
        reply_bulk_cstr(c, "tls-port");
        reply_int(c, tls);
    }
    reply_bulk_cstr(c, "ip");
    reply_bulk_cstr(c, n->ip);
    reply_bulk_cstr(c, "endpoint");
    reply_bulk_cstr(c, endpoint(n));
    if (n->hostname[0]) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, (n->flags & CN_SLAVE) ? "replica" : "master");
    reply_bulk_cstr(c, "replication-offset");
    reply_int(c, off);
    reply_bulk_cstr(c, "health");
    reply_bulk_cstr(c, (n->flags & CN_FAIL) ? "fail" : ((n->flags & CN_SLAVE) && off == 0) ? "loading" : "online");
}

static void cluster_shards(client *c) {
    cl_rdlock();
    int masters = 0;
    for (int i = 0; i < cl.nnodes; i++) masters += (cl.nodes[i]->flags & CN_MASTER) != 0;
    reply_array(c, masters);
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *m = cl.nodes[i];
        if (!(m->flags & CN_MASTER)) continue;
        reply_map(c, 2);
        reply_bulk_cstr(c, "slots");
        int pairs = 0;
        for (int j = 0; j < CL_SLOTS; j++)
            if (cl.slots[j] == m && (j == 0 || cl.slots[j - 1] != m)) pairs++;
        reply_array(c, pairs * 2);
        for (int j = 0; j < CL_SLOTS;) {
            if (cl.slots[j] != m) {
                j++;
                continue;
            }
            int s = j;
            while (j < CL_SLOTS && cl.slots[j] == m) j++;
            reply_int(c, s);
            reply_int(c, j - 1);
        }
        reply_bulk_cstr(c, "nodes");
        /* The master and its replicas (Redis's clusterGetNodesServingMySlots). */
        reply_array(c, 1 + m->nslaves);
        shard_node(c, m);
        for (int j = 0; j < m->nslaves; j++) shard_node(c, m->slaves[j]);
    }
    cl_unlock();
}

static void reply_link(client *c, clink *l) {
    reply_map(c, 6);
    reply_bulk_cstr(c, "direction");
    reply_bulk_cstr(c, l->inbound ? "from" : "to");
    reply_bulk_cstr(c, "node");
    reply_bulk(c, l->node->name, CL_NAMELEN);
    reply_bulk_cstr(c, "create-time");
    reply_int(c, l->ctime);
    size_t pend = l->h >= 0 && cl_tp ? cl_tp->pending(l->h) : 0;
    reply_bulk_cstr(c, "events");
    reply_bulk_cstr(c, l->h < 0 ? "" : pend ? "rw" : "r");
    reply_bulk_cstr(c, "send-buffer-allocated");
    reply_int(c, (long long)pend);
    reply_bulk_cstr(c, "send-buffer-used");
    reply_int(c, (long long)pend);
}

static void cluster_links(client *c) {
    cl_rdlock();
    int n = 0;
    for (int i = 0; i < cl.nnodes; i++) n += (cl.nodes[i]->link != NULL) + (cl.nodes[i]->inbound_link != NULL);
    reply_array(c, n);
    for (int i = 0; i < cl.nnodes; i++) {
        if (cl.nodes[i]->link) reply_link(c, cl.nodes[i]->link);
        if (cl.nodes[i]->inbound_link) reply_link(c, cl.nodes[i]->inbound_link);
    }
    cl_unlock();
}

static void cluster_info(client *c) {
    strbuf b = {0};
    cl_rdlock();
    int assigned = 0, ok = 0, pfail = 0, fail = 0;
    for (int j = 0; j < CL_SLOTS; j++) {
        cnode *n = cl.slots[j];
        if (!n) continue;
        assigned++;
        if (n->flags & CN_FAIL) fail++;
        else if (n->flags & CN_PFAIL) pfail++;
        else ok++;
    }
    uint64_t myepoch = (cl.myself->flags & CN_SLAVE) && cl.myself->slaveof ? cl.myself->slaveof->config_epoch
                                                                            : cl.myself->config_epoch;
    strbuf_addf(&b,
                "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\n"
                "cluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%llu\r\n"
                "cluster_my_epoch:%llu\r\n",
                cl.state == 0 ? "ok" : "fail", assigned, ok, pfail, fail, cl.nnodes, cl.size,
                (unsigned long long)cl.current_epoch, (unsigned long long)myepoch);
    cl_unlock();
    long long tot = 0;
    for (int i = 0; i < CM_COUNT; i++) {
        long long v = __atomic_load_n(&cl.sent[i], __ATOMIC_RELAXED);
        if (!v) continue;
        tot += v;
        strbuf_addf(&b, "cluster_stats_messages_%s_sent:%lld\r\n", cl_msg_type_name(i), v);
    }
    strbuf_addf(&b, "cluster_stats_messages_sent:%lld\r\n", tot);
    tot = 0;
    for (int i = 0; i < CM_COUNT; i++) {
        long long v = __atomic_load_n(&cl.rcvd[i], __ATOMIC_RELAXED);
        if (!v) continue;
        tot += v;
        strbuf_addf(&b, "cluster_stats_messages_%s_received:%lld\r\n", cl_msg_type_name(i), v);
    }
    strbuf_addf(&b, "cluster_stats_messages_received:%lld\r\n", tot);
    strbuf_addf(&b, "total_cluster_links_buffer_limit_exceeded:%lld\r\n",
                __atomic_load_n(&cl.links_limit_exceeded, __ATOMIC_RELAXED));
    reply_verbatim(c, b.p, b.len, "txt");
    free(b.p);
}

/* ADDSLOTS/DELSLOTS and the RANGE forms: check every slot, then apply. */
static void update_slots(client *c, int del, int range) {
    unsigned char *slots = calloc(1, CL_SLOTS);
    if (!slots) abort();
    if (range && c->argc % 2 == 1) {
        free(slots);
        reply_err_arity(c);
        return;
    }
    for (int j = 2; j < c->argc; j++)
        if (slot_arg(c, &c->argv[j]) < 0) goto done;
    cl_wrlock();
    for (int j = 2; j < c->argc; j += range ? 2 : 1) {
        int s = slot_arg(c, &c->argv[j]), e = range ? slot_arg(c, &c->argv[j + 1]) : s;
        if (range && s > e) {
            reply_errorf(c, "ERR start slot number %d is greater than end slot number %d", s, e);
            cl_unlock();
            goto done;
        }
        for (int slot = s; slot <= e; slot++) {
            if (del && !cl.slots[slot]) {
                reply_errorf(c, "ERR Slot %d is already unassigned", slot);
                cl_unlock();
                goto done;
            } else if (!del && cl.slots[slot]) {
                reply_errorf(c, "ERR Slot %d is already busy", slot);
                cl_unlock();
                goto done;
            }
            if (slots[slot]++ == 1) {
                reply_errorf(c, "ERR Slot %d specified multiple times", slot);
                cl_unlock();
                goto done;
            }
        }
    }
    for (int j = 0; j < CL_SLOTS; j++)
        if (slots[j]) {
            cl.importing_from[j] = NULL;
            if (del) cl_del_slot(j);
            else cl_add_slot(cl.myself, j);
        }
    cl.todo |= CT_STATE | CT_SAVE;
    cl_unlock_todo();
    reply_ok(c);
done:
    free(slots);
}

static cnode *node_arg(const garg *a) { return cl_lookup(a->p, a->n); }


/* The node argument of SETSLOT MIGRATING/IMPORTING, a master; NULL after
 * the error reply. */
static cnode *setslot_master(client *c) {
    cnode *n = node_arg(&c->argv[4]);
    if (!n) {
        reply_errorf(c, "ERR I don't know about node %s", c->argv[4].p);
        return NULL;
    }
    if (n->flags & CN_SLAVE) {
        reply_error(c, "ERR Target node is not a master");
        return NULL;
    }
    return n;
}

static void setslot(client *c) {
    int slot = -1;
    /* Keys of the slot, counted before the cluster lock (lock order). */
    long long v;
    if (str_to_ll(c->argv[2].p, c->argv[2].n, &v) && v >= 0 && v < CL_SLOTS) slot = (int)v;
    size_t keys = 0;
    if (slot >= 0) {
        gdb *db = db_get(0);
        unsigned sh = db_shard_of_slot((unsigned)slot);
        db_rdlock_keyspace();
        db_lock_shard(db, sh);
        keys = db_slot_count(db, (unsigned)slot);
        db_unlock_shard(db, sh);
        db_unlock_keyspace();
    }
    cl_wrlock();
    if (cl.myself->flags & CN_SLAVE) {
        cl_unlock();
        return reply_error(c, "ERR Please use SETSLOT only with masters.");
    }
    if (slot_arg(c, &c->argv[2]) < 0) return cl_unlock();
    const char *a = c->argv[3].p;
    cnode *n;
    if (!strcasecmp(a, "migrating") && c->argc == 5) {
        if (cl.slots[slot] != cl.myself) {
            reply_errorf(c, "ERR I'm not the owner of hash slot %u", slot);
            return cl_unlock();
        }
        if (!(n = setslot_master(c))) return cl_unlock();
        cl.migrating_to[slot] = n;
    } else if (!strcasecmp(a, "importing") && c->argc == 5) {
        if (cl.slots[slot] == cl.myself) {
            reply_errorf(c, "ERR I'm already the owner of hash slot %u", slot);
            return cl_unlock();
        }
        if (!(n = setslot_master(c))) return cl_unlock();
        cl.importing_from[slot] = n;
    } else if (!strcasecmp(a, "stable") && c->argc == 4) {
        cl.importing_from[slot] = NULL;
        cl.migrating_to[slot] = NULL;
    } else if (!strcasecmp(a, "node") && c->argc == 5) {
        if (!(n = node_arg(&c->argv[4]))) {
            reply_errorf(c, "ERR Unknown node %s", c->argv[4].p);
            return cl_unlock();
        }
        if (n->flags & CN_SLAVE) {
            reply_error(c, "ERR Target node is not a master");
            return cl_unlock();
        }
        if (cl.slots[slot] == cl.myself && n != cl.myself && keys) {
            reply_errorf(c,
                         "ERR Can't assign hashslot %d to a different node while I still hold keys for this hash slot.",
                         slot);
            return cl_unlock();
        }
        if (keys == 0 && cl.migrating_to[slot]) cl.migrating_to[slot] = NULL;
        int was_mine = cl.slots[slot] == cl.myself;
        cl_del_slot(slot);
        cl_add_slot(n, slot);
        if (was_mine && n != cl.myself && cl.myself->numslots == 0 && cls.allow_replica_migration) {
            log_warn("Configuration change detected. Reconfiguring myself as a replica of %.40s", n->name);
            cl_set_master(n);
            cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
        }
        if (n == cl.myself && cl.importing_from[slot]) {
            if (cl_bump_epoch_without_consensus() == 0) log_warn("configEpoch updated after importing slot %d", slot);
            cl.importing_from[slot] = NULL;
            cl_broadcast_pong(0);
        }
    } else {
        reply_error(c, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        return cl_unlock();
    }
    cl.todo |= CT_SAVE | CT_STATE;
    cl_unlock_todo();
    reply_ok(c);
}

typedef struct keyreply {
    client *c;
} keyreply;

static void reply_key(void *arg, dbentry *e) { reply_bulk(((keyreply *)arg)->c, db_entry_key(e), db_entry_klen(e)); }

static size_t keys_db0(void) { return db_size(db_get(0)); }

static void clusterCommand(client *c) {
    if (!enabled) return reply_error(c, DISABLED);
    const char *sub = c->argv[1].p;
    int argc = c->argc;
    if (!strcasecmp(sub, "help") && argc == 2) return help(c);
    if (!strcasecmp(sub, "keyslot") && argc == 3) return reply_int(c, crc16_key_slot(c->argv[2].p, c->argv[2].n));
    if (!strcasecmp(sub, "countkeysinslot") && argc == 3) {
        long long slot;
        if (arg_ll(c, &c->argv[2], &slot) != 0) return;
        if (slot < 0 || slot >= CL_SLOTS) return reply_error(c, "ERR Invalid slot");
        gdb *db = db_get(0);
        unsigned sh = db_shard_of_slot((unsigned)slot);
        db_rdlock_keyspace();
        db_lock_shard(db, sh);
        size_t n = db_slot_count(db, (unsigned)slot);
        db_unlock_shard(db, sh);
        db_unlock_keyspace();
        return reply_int(c, (long long)n);
    }
    if (!strcasecmp(sub, "getkeysinslot") && argc == 4) {
        long long slot, max;
        if (arg_ll(c, &c->argv[2], &slot) != 0 || arg_ll(c, &c->argv[3], &max) != 0) return;
        if (slot < 0 || slot >= CL_SLOTS || max < 0) return reply_error(c, "ERR Invalid slot or number of keys");
        gdb *db = db_get(0);
        unsigned sh = db_shard_of_slot((unsigned)slot);
        db_rdlock_keyspace();
        db_lock_shard(db, sh);
        size_t n = db_slot_count(db, (unsigned)slot);
        if ((size_t)max < n) n = (size_t)max;
        reply_array(c, (long)n);
        keyreply kr = {c};
        db_slot_keys(db, (unsigned)slot, n, reply_key, &kr);
        db_unlock_shard(db, sh);
        db_unlock_keyspace();
        return;
    }
    if (!strcasecmp(sub, "info") && argc == 2) return cluster_info(c);
    if (!strcasecmp(sub, "myid") && argc == 2) {
        cl_rdlock();
        char id[CL_NAMELEN];
        memcpy(id, cl.myself->name, CL_NAMELEN);
        cl_unlock();
        return reply_bulk(c, id, CL_NAMELEN);
    }
    if (!strcasecmp(sub, "nodes") && argc == 2) {
        strbuf b = {0};
        cl_rdlock();
        cl_describe_nodes(&b, 0, cl_use_pport(c));
        cl_unlock();
        reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
        free(b.p);
        return;
    }
    if (!strcasecmp(sub, "slots") && argc == 2) return cluster_slots(c);
    if (!strcasecmp(sub, "shards") && argc == 2) return cluster_shards(c);
    if (!strcasecmp(sub, "links") && argc == 2) return cluster_links(c);
    if ((!strcasecmp(sub, "addslots") || !strcasecmp(sub, "delslots")) && argc >= 3)
        return update_slots(c, !strcasecmp(sub, "delslots"), 0);
    if ((!strcasecmp(sub, "addslotsrange") || !strcasecmp(sub, "delslotsrange")) && argc >= 4)
        return update_slots(c, !strcasecmp(sub, "delslotsrange"), 1);
    if (!strcasecmp(sub, "setslot") && argc >= 4) return setslot(c);
    if (!strcasecmp(sub, "flushslots") && argc == 2) {
        if (keys_db0() != 0) return reply_error(c, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
        cl_wrlock();
        cl_del_node_slots(cl.myself);
        cl.todo |= CT_STATE | CT_SAVE;
        cl_unlock_todo();
        return reply_ok(c);
    }
    if (!strcasecmp(sub, "meet") && (argc == 4 || argc == 5)) {
        long long port, cport;
        if (!str_to_ll(c->argv[3].p, c->argv[3].n, &port))
            return reply_errorf(c, "ERR Invalid TCP base port specified: %s", c->argv[3].p);
        if (argc == 5) {
            if (!str_to_ll(c->argv[4].p, c->argv[4].n, &cport))
                return reply_errorf(c, "ERR Invalid TCP bus port specified: %s", c->argv[4].p);
        } else {
            cport = port + CL_PORT_INCR;
        }
        cl_wrlock();
        errno = 0;
        int ok = port > 0 && port <= 65535 && cport > 0 && cport <= 65535
                     ? cl_start_handshake(c->argv[2].p, (int)port, (int)cport)
                     : (errno = EINVAL, 0);
        cl_unlock();
        if (!ok && errno == EINVAL)
            return reply_errorf(c, "ERR Invalid node address specified: %s:%s", c->argv[2].p, c->argv[3].p);
        return reply_ok(c);
    }
    if (!strcasecmp(sub, "bumpepoch") && argc == 2) {
        cl_wrlock();
        int rc = cl_bump_epoch_without_consensus();
        char line[64];
        snprintf(line, sizeof(line), "%s %llu", rc == 0 ? "BUMPED" : "STILL",
                 (unsigned long long)cl.myself->config_epoch);
        cl_unlock_todo();
        return reply_simple(c, line);
    }
    if (!strcasecmp(sub, "saveconfig") && argc == 2) {
        cl_wrlock();
        int rc = cl_save_config(1);
        int e = errno;
        cl_unlock();
        if (rc == 0) return reply_ok(c);
        return reply_errorf(c, "ERR error saving the cluster node config: %s", strerror(e));
    }
    if (!strcasecmp(sub, "forget") && argc == 3) {
        cl_wrlock();
        cnode *n = node_arg(&c->argv[2]);
        if (!n) reply_errorf(c, "ERR Unknown node %s", c->argv[2].p);
        else if (n == cl.myself) reply_error(c, "ERR I tried hard but I can't forget myself...");
        else if ((cl.myself->flags & CN_SLAVE) && cl.myself->slaveof == n) reply_error(c, "ERR Can't forget my master!");
        else {
            cl_blacklist_add(n);
            cl_node_del(n);
            cl.todo |= CT_STATE | CT_SAVE;
            cl_unlock_todo();
            return reply_ok(c);
        }
        return cl_unlock();
    }
    if (!strcasecmp(sub, "replicate") && argc == 3) {
        size_t keys = keys_db0();
        cl_wrlock();
        cnode *n = node_arg(&c->argv[2]);
        if (!n) reply_errorf(c, "ERR Unknown node %s", c->argv[2].p);
        else if (n == cl.myself) reply_error(c, "ERR Can't replicate myself");
        else if (n->flags & CN_SLAVE) reply_error(c, "ERR I can only replicate a master, not a replica.");
        else if ((cl.myself->flags & CN_MASTER) && (cl.myself->numslots != 0 || keys != 0))
            reply_error(c, "ERR To set a master the node must be empty and without assigned slots.");
        else {
            cl_set_master(n);
            cl.todo |= CT_STATE | CT_SAVE;
            cl_unlock_todo();
            return reply_ok(c);
        }
        return cl_unlock();
    }
    if ((!strcasecmp(sub, "slaves") || !strcasecmp(sub, "replicas")) && argc == 3) {
        cl_rdlock();
        cnode *n = node_arg(&c->argv[2]);
        if (!n) reply_errorf(c, "ERR Unknown node %s", c->argv[2].p);
        else if (n->flags & CN_SLAVE) reply_error(c, "ERR The specified node is not a master");
        else {
            reply_array(c, n->nslaves);
            for (int j = 0; j < n->nslaves; j++) {
                strbuf b = {0};
                cl_describe_node(&b, n->slaves[j], cl_use_pport(c));
                reply_bulk(c, b.p, b.len);
                free(b.p);
            }
        }
        return cl_unlock();
    }
    if (!strcasecmp(sub, "count-failure-reports") && argc == 3) {
        cl_wrlock();
        cnode *n = node_arg(&c->argv[2]);
        if (!n) reply_errorf(c, "ERR Unknown node %s", c->argv[2].p);
        else reply_int(c, cl_failure_reports(n));
        return cl_unlock();
    }
    if (!strcasecmp(sub, "failover") && (argc == 2 || argc == 3)) {
        int force = 0, takeover = 0;
        if (argc == 3) {
            if (!strcasecmp(c->argv[2].p, "force")) force = 1;
            else if (!strcasecmp(c->argv[2].p, "takeover")) force = takeover = 1;
            else return reply_err_syntax(c);
        }
        cl_wrlock();
        cnode *m = cl.myself->slaveof;
        if (cl.myself->flags & CN_MASTER) reply_error(c, "ERR You should send CLUSTER FAILOVER to a replica");
        else if (!m) reply_error(c, "ERR I'm a replica but my master is unknown to me");
        else if (!force && ((m->flags & CN_FAIL) || !m->link))
            reply_error(c, "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
        else {
            cl_reset_manual_failover();
            cl.mf_end = cl_mstime() + 5000;
            if (takeover) {
                log_warn("Taking over the master (user request).");
                cl_bump_epoch_without_consensus();
                cl_failover_replace_master();
            } else if (force) {
                log_warn("Forced failover user request accepted.");
                cl.mf_can_start = 1;
            } else {
                log_warn("Manual failover user request accepted.");
                cl_send_mfstart(m);
            }
            cl_unlock_todo();
            return reply_ok(c);
        }
        return cl_unlock();
    }
    if (!strcasecmp(sub, "set-config-epoch") && argc == 3) {
        long long epoch;
        if (arg_ll(c, &c->argv[2], &epoch) != 0) return;
        cl_wrlock();
        if (epoch < 0) reply_errorf(c, "ERR Invalid config epoch specified: %lld", epoch);
        else if (cl.nnodes > 1)
            reply_error(c, "ERR The user can assign a config epoch only when the node does not know any other node.");
        else if (cl.myself->config_epoch != 0) reply_error(c, "ERR Node config epoch is already non-zero");
        else {
            cl.myself->config_epoch = (uint64_t)epoch;
            log_warn("configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH", (unsigned long long)epoch);
            if (cl.current_epoch < (uint64_t)epoch) cl.current_epoch = (uint64_t)epoch;
            cl.todo |= CT_STATE | CT_SAVE;
            cl_unlock_todo();
            return reply_ok(c);
        }
        return cl_unlock();
    }
    if (!strcasecmp(sub, "reset") && (argc == 2 || argc == 3)) {
        int hard = 0;
        if (argc == 3) {
            if (!strcasecmp(c->argv[2].p, "hard")) hard = 1;
            else if (strcasecmp(c->argv[2].p, "soft")) return reply_err_syntax(c);
        }
        size_t keys = db_size(db_get(c->db));
        cl_rdlock();
        int master = (cl.myself->flags & CN_MASTER) != 0;
        cl_unlock();
        if (master && keys != 0) return reply_error(c, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        if (!master) {
            /* A replica empties its data first (outside the cluster lock). */
            char err[256];
            repl_replicaof(NULL, 0, err, sizeof(err));
            db_wrlock_keyspace();
            for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
            db_unlock_keyspace();
            db_signal_replaced();
        }
        cl_wrlock();
        cl_reset(hard);
        cl_unlock_todo();
        return reply_ok(c);
    }
    admin_reply_subcommand_syntax(c, "CLUSTER");
}

const cmd_handler cluster_handlers[] = {
    {"cluster|help", clusterCommand, CMD_LOCK_NONE},
    {"cluster|keyslot", clusterCommand, CMD_LOCK_NONE},
    {"cluster|countkeysinslot", clusterCommand, CMD_LOCK_NONE},
    {"cluster|getkeysinslot", clusterCommand, CMD_LOCK_NONE},
    {"cluster|info", clusterCommand, CMD_LOCK_NONE},
    {"cluster|myid", clusterCommand, CMD_LOCK_NONE},
    {"cluster|nodes", clusterCommand, CMD_LOCK_NONE},
    {"cluster|slots", clusterCommand, CMD_LOCK_NONE},
    {"cluster|shards", clusterCommand, CMD_LOCK_NONE},
    {"cluster|links", clusterCommand, CMD_LOCK_NONE},
    {"cluster|addslots", clusterCommand, CMD_LOCK_NONE},
    {"cluster|addslotsrange", clusterCommand, CMD_LOCK_NONE},
    {"cluster|delslots", clusterCommand, CMD_LOCK_NONE},
    {"cluster|delslotsrange", clusterCommand, CMD_LOCK_NONE},
    {"cluster|flushslots", clusterCommand, CMD_LOCK_NONE},
    {"cluster|setslot", clusterCommand, CMD_LOCK_NONE},
    {"cluster|meet", clusterCommand, CMD_LOCK_NONE},
    {"cluster|forget", clusterCommand, CMD_LOCK_NONE},
    {"cluster|replicate", clusterCommand, CMD_LOCK_NONE},
    {"cluster|replicas", clusterCommand, CMD_LOCK_NONE},
    {"cluster|slaves", clusterCommand, CMD_LOCK_NONE},
    {"cluster|reset", clusterCommand, CMD_LOCK_NONE},
    {"cluster|saveconfig", clusterCommand, CMD_LOCK_NONE},
    {"cluster|set-config-epoch", clusterCommand, CMD_LOCK_NONE},
    {"cluster|bumpepoch", clusterCommand, CMD_LOCK_NONE},
    {"cluster|count-failure-reports", clusterCommand, CMD_LOCK_NONE},
    {"cluster|failover", clusterCommand, CMD_LOCK_NONE},
    {"asking", askingCommand, CMD_LOCK_NONE},
    {"readonly", readonlyCommand, CMD_LOCK_NONE},
    {"readwrite", readwriteCommand, CMD_LOCK_NONE},
    {NULL, NULL, 0},
};
