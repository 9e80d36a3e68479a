/* cbus.c -- the cluster bus protocol of Redis 7.0: building and reading
 * messages, gossip, failure detection, epochs, and replica elections.
 *
 * A message is a 2256-byte header (signature "RCmb", total length,
 * version 1, ports, type, count, currentEpoch, configEpoch, replication
 * offset, sender name, slot bitmap, master name, announced ip, extension
 * count, flags, state, message flags; all integers big-endian) followed by
 * the type's data: gossip entries of 104 bytes (+ ping extensions: only
 * the hostname one exists in 7.0), a node name (FAIL), channel and message
 * (PUBLISH, PUBLISHSHARD), an epoch, name and bitmap (UPDATE). Fields are
 * read and written at their offsets, never through a packed struct.
 *
 * Everything runs under the cluster write lock: on the bus thread (each
 * message, each 100 ms tick) or in a command. The rules are Redis's:
 * PFAIL after node-timeout without a PONG, FAIL when a majority of masters
 * report it, the higher configEpoch wins a slot, equal epochs of two
 * masters are split by the bigger name bumping, and a replica of a FAILed
 * master asks the masters for votes after a delay of 500 ms + random +
 * its rank (replicas with more data go first). */
#include "cmd/cluster/cluster_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "cmd/repl/repl.h"
#include "db/db.h"
#include "session/session.h"

/* Header field offsets (Redis 7.0's clusterMsg). */
enum {
    H_SIG = 0, H_TOTLEN = 4, H_VER = 8, H_PORT = 10, H_TYPE = 12, H_COUNT = 14, H_CUREPOCH = 16,
    H_CFGEPOCH = 24, H_OFFSET = 32, H_SENDER = 40, H_SLOTS = 80, H_SLAVEOF = 2128, H_MYIP = 2168,
    H_EXTENSIONS = 2214, H_PPORT = 2246, H_CPORT = 2248, H_FLAGS = 2250, H_STATE = 2252, H_MFLAGS = 2253,
    H_LEN = 2256,
};
/* Gossip entry offsets. */
enum { G_NAME = 0, G_PING = 40, G_PONG = 44, G_IP = 48, G_PORT = 94, G_CPORT = 96, G_FLAGS = 98, G_PPORT = 100, G_LEN = 104 };
enum { MF_PAUSED = 1, MF_FORCEACK = 2, MF_EXT_DATA = 4 };
enum { EXT_HOSTNAME = 0 };

static inline uint16_t g16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t g32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t g64(const unsigned char *p) { return (uint64_t)g32(p) << 32 | g32(p + 4); }
static inline void p16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}
static inline void p32(unsigned char *p, uint32_t v) {
    p16(p, (uint16_t)(v >> 16));
    p16(p + 2, (uint16_t)v);
}
static inline void p64(unsigned char *p, uint64_t v) {
    p32(p, (uint32_t)(v >> 32));
    p32(p + 4, (uint32_t)v);
}

const char *cl_msg_type_name(int type) {
    static const char *const names[] = {"ping", "pong", "meet", "fail", "publish", "auth-req",
                                        "auth-ack", "update", "mfstart", "module", "publishshard"};
    return type >= 0 && type < CM_COUNT ? names[type] : "unknown";
}

static void send_raw(clink *l, const unsigned char *buf, size_t len) {
    if (!l || l->h < 0 || !cl_tp) return;
    cl_tp->send(l->h, buf, len);
    l->sent += len;
    int type = g16(buf + H_TYPE);
    if (type < CM_COUNT) __atomic_fetch_add(&cl.sent[type], 1, __ATOMIC_RELAXED);
}

static void broadcast(const unsigned char *buf, size_t len) {
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *n = cl.nodes[i];
        if (n->flags & (CN_MYSELF | CN_HANDSHAKE)) continue;
        send_raw(n->link, buf, len);
    }
}

static void announced_ports(int *port, int *pport, int *cport) { cl_announced_ports(&cls, port, pport, cport); }

static void build_header(unsigned char *h, int type) {
    cnode *me = cl.myself;
    cnode *master = (me->flags & CN_SLAVE) && me->slaveof ? me->slaveof : me;
    memset(h, 0, H_LEN);
    memcpy(h + H_SIG, "RCmb", 4);
    p16(h + H_VER, 1);
    p16(h + H_TYPE, (uint16_t)type);
    memcpy(h + H_SENDER, me->name, CL_NAMELEN);
    if (cls.announce_ip[0]) memcpy(h + H_MYIP, cls.announce_ip, strnlen(cls.announce_ip, CL_IPLEN - 1));
    int port, pport, cport;
    announced_ports(&port, &pport, &cport);
    memcpy(h + H_SLOTS, master->slots, CL_SLOTS / 8);
    if (me->slaveof) memcpy(h + H_SLAVEOF, me->slaveof->name, CL_NAMELEN);
    p16(h + H_PORT, (uint16_t)port);
    p16(h + H_PPORT, (uint16_t)pport);
    p16(h + H_CPORT, (uint16_t)cport);
    p16(h + H_FLAGS, (uint16_t)me->flags);
    h[H_STATE] = (unsigned char)cl.state;
    p64(h + H_CUREPOCH, cl.current_epoch);
    p64(h + H_CFGEPOCH, master->config_epoch);
    p64(h + H_OFFSET, (uint64_t)cl_my_repl_offset());
    if ((me->flags & CN_MASTER) && cl.mf_end) h[H_MFLAGS] |= MF_PAUSED;
    uint32_t totlen = H_LEN;
    if (type == CM_FAIL) totlen = H_LEN + CL_NAMELEN;
    else if (type == CM_UPDATE) totlen = H_LEN + 8 + CL_NAMELEN + CL_SLOTS / 8;
    p32(h + H_TOTLEN, totlen);
}

static void gossip_entry(unsigned char *g, cnode *n) {
    memset(g, 0, G_LEN);
    memcpy(g + G_NAME, n->name, CL_NAMELEN);
    p32(g + G_PING, (uint32_t)(n->ping_sent / 1000));
    p32(g + G_PONG, (uint32_t)(n->pong_received / 1000));
    memcpy(g + G_IP, n->ip, CL_IPLEN);
    p16(g + G_PORT, (uint16_t)n->port);
    p16(g + G_CPORT, (uint16_t)n->cport);
    p16(g + G_FLAGS, (uint16_t)n->flags);
    p16(g + G_PPORT, (uint16_t)n->pport);
}

void cl_send_ping(clink *l, int type) {
    static uint64_t pings_sent;
    pings_sent++;
    int freshnodes = cl.nnodes - 2, wanted = cl.nnodes / 10;
    if (wanted < 3) wanted = 3;
    if (wanted > freshnodes) wanted = freshnodes;
    int pfail_wanted = cl.pfail_nodes;
    size_t hostlen = strlen(cl.myself->hostname);
    size_t extlen = hostlen ? 8 + ((hostlen + 1 + 7) / 8) * 8 : 0;
    size_t est = H_LEN + (size_t)G_LEN * (size_t)(wanted > 0 ? wanted + pfail_wanted : pfail_wanted) + extlen;
    unsigned char *buf = calloc(1, est + G_LEN);
    if (!buf) abort();
    if (!l->inbound && type == CM_PING && l->node) l->node->ping_sent = cl_mstime();
    build_header(buf, type);
    int count = 0, maxit = wanted * 3;
    while (freshnodes > 0 && count < wanted && maxit-- > 0) {
        cnode *n = cl.nodes[rand() % cl.nnodes];
        if (n == cl.myself || (n->flags & CN_PFAIL)) continue;
        if ((n->flags & (CN_HANDSHAKE | CN_NOADDR)) || (!n->link && n->numslots == 0)) {
            freshnodes--;
            continue;
        }
        if (n->last_in_gossip == pings_sent) continue;
        gossip_entry(buf + H_LEN + (size_t)count * G_LEN, n);
        n->last_in_gossip = pings_sent;
        freshnodes--;
        count++;
    }
    for (int i = 0; i < cl.nnodes && pfail_wanted > 0; i++) {
        cnode *n = cl.nodes[i];
        if ((n->flags & (CN_HANDSHAKE | CN_NOADDR)) || !(n->flags & CN_PFAIL)) continue;
        gossip_entry(buf + H_LEN + (size_t)count * G_LEN, n);
        count++;
        pfail_wanted--;
    }
    size_t totlen = H_LEN + (size_t)count * G_LEN;
    int exts = 0;
    if (hostlen) {
        unsigned char *e = buf + totlen;
        p32(e, (uint32_t)extlen);
        p16(e + 4, EXT_HOSTNAME);
        memcpy(e + 8, cl.myself->hostname, hostlen);
        totlen += extlen;
        exts = 1;
        buf[H_MFLAGS] |= MF_EXT_DATA;
    }
    p16(buf + H_COUNT, (uint16_t)count);
    p16(buf + H_EXTENSIONS, (uint16_t)exts);
    p32(buf + H_TOTLEN, (uint32_t)totlen);
    send_raw(l, buf, totlen);
    free(buf);
}

void cl_broadcast_pong(int local_slaves_only) {
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *n = cl.nodes[i];
        if (!n->link || n == cl.myself || (n->flags & CN_HANDSHAKE)) continue;
        if (local_slaves_only) {
            int local = (n->flags & CN_SLAVE) && n->slaveof &&
                        (n->slaveof == cl.myself || n->slaveof == cl.myself->slaveof);
            if (!local) continue;
        }
        cl_send_ping(n->link, CM_PONG);
    }
}

void cl_send_fail(const char *name) {
    unsigned char buf[H_LEN + CL_NAMELEN];
    build_header(buf, CM_FAIL);
    memcpy(buf + H_LEN, name, CL_NAMELEN);
    broadcast(buf, sizeof(buf));
}

void cl_send_update(clink *l, cnode *n) {
    if (!l) return;
    static unsigned char buf[H_LEN + 8 + CL_NAMELEN + CL_SLOTS / 8];
    build_header(buf, CM_UPDATE);
    p64(buf + H_LEN, n->config_epoch);
    memcpy(buf + H_LEN + 8, n->name, CL_NAMELEN);
    unsigned char *s = buf + H_LEN + 8 + CL_NAMELEN;
    for (int i = 0; i < CL_SLOTS / 8; i++) s[i] = n->slots[i] & (unsigned char)~cl.owner_not_claiming[i];
    send_raw(l, buf, sizeof(buf));
}

static void send_bare(clink *l, int type, int bcast, int forceack) {
    unsigned char buf[H_LEN];
    build_header(buf, type);
    if (forceack) buf[H_MFLAGS] |= MF_FORCEACK;
    if (bcast) broadcast(buf, sizeof(buf));
    else send_raw(l, buf, sizeof(buf));
}

void cl_send_bare_to(cnode *to, int type) {
    if (to->link) send_bare(to->link, type, 0, 0);
}

void cl_request_failover_auth(void) { send_bare(NULL, CM_AUTH_REQUEST, 1, cl.mf_end != 0); }

void cl_send_mfstart(cnode *n) {
    if (n->link) send_bare(n->link, CM_MFSTART, 0, 0);
}

void cluster_propagate_publish(const char *ch, size_t chn, const char *msg, size_t msgn, int sharded) {
    if (!cluster_enabled()) return;
    size_t totlen = H_LEN + 8 + chn + msgn;
    unsigned char *buf = malloc(totlen);
    if (!buf) return;
    cl_wrlock();
    build_header(buf, sharded ? CM_PUBLISHSHARD : CM_PUBLISH);
    p32(buf + H_TOTLEN, (uint32_t)totlen);
    p32(buf + H_LEN, (uint32_t)chn);
    p32(buf + H_LEN + 4, (uint32_t)msgn);
    memcpy(buf + H_LEN + 8, ch, chn);
    memcpy(buf + H_LEN + 8 + chn, msg, msgn);
    if (!sharded) {
        broadcast(buf, totlen);
    } else {
        /* The nodes serving my slots: my master (or me) and its replicas. */
        cnode *m = (cl.myself->flags & CN_SLAVE) ? cl.myself->slaveof : cl.myself;
        if (m) {
            if (m != cl.myself && !(m->flags & CN_HANDSHAKE)) send_raw(m->link, buf, totlen);
            for (int i = 0; i < m->nslaves; i++) {
                cnode *s = m->slaves[i];
                if (s->flags & (CN_MYSELF | CN_HANDSHAKE)) continue;
                send_raw(s->link, buf, totlen);
            }
        }
    }
    cl_unlock();
    free(buf);
}

static cluster_publish_fn *publish_hook;
void cluster_set_publish_hook(cluster_publish_fn *fn) { publish_hook = fn; }

/* ---- handshakes --------------------------------------------------------- */

static int handshake_in_progress(const char *ip, int port, int cport) {
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *n = cl.nodes[i];
        if ((n->flags & CN_HANDSHAKE) && !strcasecmp(n->ip, ip) && n->port == port && n->cport == cport) return 1;
    }
    return 0;
}

/* 1 started (or already in progress: 0 with errno EAGAIN), 0 with errno
 * EINVAL for a bad address. */
int cl_start_handshake(const char *ip, int port, int cport) {
    unsigned char a[16];
    char norm[CL_IPLEN] = {0};
    if (inet_pton(AF_INET, ip, a) == 1) inet_ntop(AF_INET, a, norm, sizeof(norm));
    else if (inet_pton(AF_INET6, ip, a) == 1) inet_ntop(AF_INET6, a, norm, sizeof(norm));
    else {
        errno = EINVAL;
        return 0;
    }
    if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) {
        errno = EINVAL;
        return 0;
    }
    if (handshake_in_progress(norm, port, cport)) {
        errno = EAGAIN;
        return 0;
    }
    cnode *n = cl_node_new(NULL, CN_HANDSHAKE | CN_MEET);
    memcpy(n->ip, norm, sizeof(n->ip));
    n->port = port;
    n->cport = cport;
    cl_node_add(n);
    return 1;
}

/* ---- failure states ----------------------------------------------------- */

static void mark_failing_if_needed(cnode *n) {
    int quorum = cl.size / 2 + 1;
    if (!(n->flags & CN_PFAIL) || (n->flags & CN_FAIL)) return;
    int failures = cl_failure_reports(n);
    if (cl.myself->flags & CN_MASTER) failures++;
    if (failures < quorum) return;
    log_notice("Marking node %.40s as failing (quorum reached).", n->name);
    n->flags &= ~CN_PFAIL;
    n->flags |= CN_FAIL;
    n->fail_time = cl_mstime();
    cl_send_fail(n->name);
    cl.todo |= CT_STATE | CT_SAVE;
}

static void clear_failure_if_needed(cnode *n) {
    int64_t now = cl_mstime();
    if ((n->flags & CN_SLAVE) || n->numslots == 0) {
        log_notice("Clear FAIL state for node %.40s: %s is reachable again.", n->name,
                   (n->flags & CN_SLAVE) ? "replica" : "master without slots");
        n->flags &= ~CN_FAIL;
        cl.todo |= CT_STATE | CT_SAVE;
    }
    if ((n->flags & CN_MASTER) && n->numslots > 0 && now - n->fail_time > cls.node_timeout * 2) {
        log_notice("Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some "
                   "time.",
                   n->name);
        n->flags &= ~CN_FAIL;
        cl.todo |= CT_STATE | CT_SAVE;
    }
}

/* ---- reading messages --------------------------------------------------- */

static int peer_ip(clink *l, char *buf) {
    int port;
    return l->h >= 0 && cl_tp && cl_tp->peer_ip(l->h, buf, CL_IPLEN, &port) == 0 ? 0 : -1;
}

static int ip_of(char *buf, clink *l, const unsigned char *announced) {
    if (announced[0]) {
        memcpy(buf, announced, CL_IPLEN);
        buf[CL_IPLEN - 1] = '\0';
        return 0;
    }
    return peer_ip(l, buf);
}

static int update_address_if_needed(cnode *n, clink *l, const unsigned char *h) {
    char ip[CL_IPLEN] = {0};
    int port = g16(h + H_PORT), pport = g16(h + H_PPORT), cport = g16(h + H_CPORT);
    if (l == n->link) return 0;
    if (ip_of(ip, l, h + H_MYIP) != 0) return 0;
    if (n->port == port && n->cport == cport && n->pport == pport && !strcmp(ip, n->ip)) return 0;
    memcpy(n->ip, ip, sizeof(ip));
    n->port = port;
    n->pport = pport;
    n->cport = cport;
    if (n->link) cl_link_free(n->link);
    n->flags &= ~CN_NOADDR;
    log_warn("Address updated for node %.40s, now %s:%d", n->name, n->ip, n->port);
    if ((cl.myself->flags & CN_SLAVE) && cl.myself->slaveof == n) {
        char err[256];
        repl_replicaof(n->ip, n->port, err, sizeof(err));
    }
    return 1;
}

static void process_gossip(const unsigned char *h, clink *l) {
    int count = g16(h + H_COUNT);
    cnode *sender = l->node ? l->node : cl_lookup((const char *)h + H_SENDER, CL_NAMELEN);
    const unsigned char *g = h + H_LEN;
    for (int i = 0; i < count; i++, g += G_LEN) {
        int flags = g16(g + G_FLAGS);
        cnode *n = cl_lookup((const char *)g + G_NAME, CL_NAMELEN);
        char gip[CL_IPLEN];
        memcpy(gip, g + G_IP, CL_IPLEN);
        gip[CL_IPLEN - 1] = '\0';
        if (n) {
            if (sender && (sender->flags & CN_MASTER) && n != cl.myself) {
                if (flags & (CN_FAIL | CN_PFAIL)) {
                    if (cl_add_failure_report(n, sender))
                        log_verbose("Node %.40s reported node %.40s as not reachable.", sender->name, n->name);
                    mark_failing_if_needed(n);
                } else if (cl_del_failure_report(n, sender)) {
                    log_verbose("Node %.40s reported node %.40s is back online.", sender->name, n->name);
                }
            }
            if (!(flags & (CN_FAIL | CN_PFAIL)) && n->ping_sent == 0 && cl_failure_reports(n) == 0) {
                int64_t pongtime = (int64_t)g32(g + G_PONG) * 1000;
                if (pongtime <= cl_mstime() + 500 && pongtime > n->pong_received) n->pong_received = pongtime;
            }
            if ((n->flags & (CN_FAIL | CN_PFAIL)) && !(flags & CN_NOADDR) && !(flags & (CN_FAIL | CN_PFAIL)) &&
                (strcasecmp(n->ip, gip) || n->port != g16(g + G_PORT) || n->cport != g16(g + G_CPORT))) {
                if (n->link) cl_link_free(n->link);
                memcpy(n->ip, gip, CL_IPLEN);
                n->port = g16(g + G_PORT);
                n->pport = g16(g + G_PPORT);
                n->cport = g16(g + G_CPORT);
                n->flags &= ~CN_NOADDR;
            }
        } else if (sender && !(flags & CN_NOADDR) && !cl_blacklist_has((const char *)g + G_NAME) &&
                   cl_is_valid_name((const char *)g + G_NAME, CL_NAMELEN)) {
            cnode *nn = cl_node_new((const char *)g + G_NAME, flags);
            memcpy(nn->ip, gip, CL_IPLEN);
            nn->port = g16(g + G_PORT);
            nn->pport = g16(g + G_PPORT);
            nn->cport = g16(g + G_CPORT);
            cl_node_add(nn);
        }
    }
}

static void process_extensions(const unsigned char *h, clink *l, size_t totlen) {
    cnode *sender = l->node ? l->node : cl_lookup((const char *)h + H_SENDER, CL_NAMELEN);
    if (!sender) return;
    const char *host = NULL;
    size_t hostmax = 0;
    int exts = g16(h + H_EXTENSIONS);
    size_t off = H_LEN + (size_t)g16(h + H_COUNT) * G_LEN;
    if (h[H_MFLAGS] & MF_EXT_DATA)
        while (exts-- > 0 && off + 8 <= totlen) {
            uint32_t len = g32(h + off);
            if (len < 8 || off + len > totlen) break;
            if (g16(h + off + 4) == EXT_HOSTNAME) {
                host = (const char *)h + off + 8;
                hostmax = len - 8;
            } else {
                log_warn("Received unknown extension type %d", g16(h + off + 4));
            }
            off += len;
        }
    if (host) snprintf(sender->hostname, sizeof(sender->hostname), "%.*s", (int)strnlen(host, hostmax), host);
    else sender->hostname[0] = '\0';
}

/* Slots claimed by sender with a newer epoch move to it (Redis's
 * clusterUpdateSlotsConfigWith), and this node follows where its slots
 * went. */
typedef struct keylist {
    char **k;
    size_t *n;
    size_t cnt, cap;
} keylist;

static void collect_key(void *arg, dbentry *e) {
    keylist *kl = arg;
    if (kl->cnt == kl->cap) {
        kl->cap = kl->cap ? kl->cap * 2 : 64;
        kl->k = realloc(kl->k, kl->cap * sizeof(char *));
        kl->n = realloc(kl->n, kl->cap * sizeof(size_t));
        if (!kl->k || !kl->n) abort();
    }
    size_t n = db_entry_klen(e);
    kl->k[kl->cnt] = malloc(n + 1);
    if (!kl->k[kl->cnt]) abort();
    memcpy(kl->k[kl->cnt], db_entry_key(e), n);
    kl->k[kl->cnt][n] = '\0';
    kl->n[kl->cnt++] = n;
}

/* Slots this node lost while holding keys of them: their keys are deleted
 * once the cluster lock is released (cl_drain_lost_slots). */
static uint16_t lost[CL_SLOTS];
static int nlost;

static void del_keys_in_slot(int slot) {
    if (nlost < CL_SLOTS) lost[nlost++] = (uint16_t)slot;
}

int cl_take_lost_slots(uint16_t *out) {
    int n = nlost;
    memcpy(out, lost, sizeof(uint16_t) * (size_t)n);
    nlost = 0;
    return n;
}

/* The keys of a slot this node lost (delKeysInSlot). */
void cl_del_keys_in_slot(int slot) {
    gdb *db = db_get(0);
    unsigned sh = db_shard_of_slot((unsigned)slot);
    keylist kl = {0};
    db_rdlock_keyspace();
    db_lock_shard(db, sh);
    db_slot_keys(db, (unsigned)slot, (size_t)-1, collect_key, &kl);
    for (size_t i = 0; i < kl.cnt; i++) {
        if (db_delete(db, kl.k[i], kl.n[i])) db_signal_modified(db, kl.k[i], kl.n[i]);
        free(kl.k[i]);
    }
    db_unlock_shard(db, sh);
    db_unlock_keyspace();
    free(kl.k);
    free(kl.n);
}

void cl_update_slots_with(cnode *sender, uint64_t epoch, const unsigned char *slots) {
    cnode *curmaster = (cl.myself->flags & CN_MASTER) ? cl.myself : cl.myself->slaveof, *newmaster = NULL;
    static uint16_t dirty[CL_SLOTS];
    int ndirty = 0, sender_slots = 0, migrated = 0;
    if (sender == cl.myself) {
        log_warn("Discarding UPDATE message about myself.");
        return;
    }
    for (int j = 0; j < CL_SLOTS; j++) {
        if (cl_slot_bit(slots, j)) {
            sender_slots++;
            if (cl.slots[j] == sender) {
                cl.owner_not_claiming[j >> 3] &= (unsigned char)~(1 << (j & 7));
                continue;
            }
            if (cl.importing_from[j]) continue;
            if (!cl.slots[j] || cl_slot_bit(cl.owner_not_claiming, j) || cl.slots[j]->config_epoch < epoch) {
                if (cl.slots[j] == cl.myself && db_slot_count(db_get(0), (unsigned)j)) dirty[ndirty++] = (uint16_t)j;
                if (cl.slots[j] == curmaster) {
                    newmaster = sender;
                    migrated++;
                }
                cl_del_slot(j);
                cl_add_slot(sender, j);
                cl.owner_not_claiming[j >> 3] &= (unsigned char)~(1 << (j & 7));
                cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
            }
        } else if (cl.slots[j] == sender) {
            cl.owner_not_claiming[j >> 3] |= (unsigned char)(1 << (j & 7));
        }
    }
    if (newmaster && curmaster && curmaster->numslots == 0 &&
        (cls.allow_replica_migration || sender_slots == migrated)) {
        log_warn("Configuration change detected. Reconfiguring myself as a replica of %.40s", sender->name);
        cl_set_master(sender);
        cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
    } else if (cl.myself->slaveof && cl.myself->slaveof->slaveof && cl.myself->slaveof->slaveof != cl.myself) {
        log_warn("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster %.40s",
                 cl.myself->slaveof->slaveof->name);
        cl_set_master(cl.myself->slaveof->slaveof);
        cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
    } else {
        for (int j = 0; j < ndirty; j++) del_keys_in_slot(dirty[j]);
    }
}

/* The node that sent h on l (matching an inbound link to its node). */
static cnode *sender_of(clink *l, const unsigned char *h) {
    if (l->node && !(l->node->flags & CN_HANDSHAKE)) return l->node;
    cnode *s = cl_lookup((const char *)h + H_SENDER, CL_NAMELEN);
    if (s && !l->node) {
        if (s->inbound_link) cl_link_free(s->inbound_link);
        s->inbound_link = l;
        l->node = s;
    }
    return s;
}

/* The expected length of a message, or 0 when its sections do not add up. */
static size_t expected_len(const unsigned char *h, size_t totlen) {
    int type = g16(h + H_TYPE);
    switch (type) {
    case CM_PING:
    case CM_PONG:
    case CM_MEET: {
        size_t exp = H_LEN + (size_t)g16(h + H_COUNT) * G_LEN;
        if (h[H_MFLAGS] & MF_EXT_DATA) {
            int exts = g16(h + H_EXTENSIONS);
            while (exts-- > 0) {
                if (exp + 8 > totlen) return 0;
                uint32_t len = g32(h + exp);
                if (len % 8 != 0 || len < 8 || totlen - exp < len) return 0;
                exp += len;
            }
        }
        return exp;
    }
    case CM_FAIL: return H_LEN + CL_NAMELEN;
    case CM_PUBLISH:
    case CM_PUBLISHSHARD:
        if (totlen < H_LEN + 8) return 0;
        return H_LEN + 8 + (size_t)g32(h + H_LEN) + g32(h + H_LEN + 4);
    case CM_AUTH_REQUEST:
    case CM_AUTH_ACK:
    case CM_MFSTART: return H_LEN;
    case CM_UPDATE: return H_LEN + 8 + CL_NAMELEN + CL_SLOTS / 8;
    case CM_MODULE:
        if (totlen < H_LEN + 16) return 0;
        return H_LEN + 13 + (size_t)g32(h + H_LEN + 8);
    default: return totlen;
    }
}

ssize_t cluster_bus_frame_len(const unsigned char *p, size_t avail) {
    if (avail < 8) return 0;
    if (memcmp(p, "RCmb", 4) != 0 || g32(p + 4) < H_LEN) {
        log_warn("Bad message length or signature received from Cluster bus.");
        return -1;
    }
    return (ssize_t)g32(p + 4);
}

/* One message (Redis's clusterProcessPacket): 0, or -1 when l was freed. */
static int process(clink *l, const unsigned char *h, size_t totlen) {
    int type = g16(h + H_TYPE);
    int64_t now = cl_mstime();
    if (type < CM_COUNT) __atomic_fetch_add(&cl.rcvd[type], 1, __ATOMIC_RELAXED);
    if (g16(h + H_VER) != 1) return 0;
    if (expected_len(h, totlen) != totlen) {
        log_warn("Received invalid %s packet of length %zu", cl_msg_type_name(type), totlen);
        return 0;
    }
    int flags = g16(h + H_FLAGS);
    uint64_t sender_cur = 0, sender_cfg = 0;
    cnode *sender = sender_of(l, h);
    if (sender) sender->data_received = now;
    if (sender && !(sender->flags & CN_HANDSHAKE)) {
        sender_cur = g64(h + H_CUREPOCH);
        sender_cfg = g64(h + H_CFGEPOCH);
        if (sender_cur > cl.current_epoch) cl.current_epoch = sender_cur;
        if (sender_cfg > sender->config_epoch) {
            sender->config_epoch = sender_cfg;
            cl.todo |= CT_SAVE | CT_FSYNC;
        }
        sender->repl_offset = (long long)g64(h + H_OFFSET);
        sender->repl_offset_time = now;
        if (cl.mf_end && (cl.myself->flags & CN_SLAVE) && cl.myself->slaveof == sender && (h[H_MFLAGS] & MF_PAUSED) &&
            cl.mf_master_offset == -1) {
            cl.mf_master_offset = sender->repl_offset;
            cl.todo |= CT_MANUAL;
            log_warn("Received replication offset for paused master manual failover: %lld", cl.mf_master_offset);
        }
    }
    if (type == CM_PING || type == CM_MEET) {
        if ((type == CM_MEET || cl.myself->ip[0] == '\0') && !cls.announce_ip[0]) {
            char ip[CL_IPLEN];
            if (l->h >= 0 && cl_tp && cl_tp->local_ip(l->h, ip, sizeof(ip)) == 0 && strcmp(ip, cl.myself->ip)) {
                memcpy(cl.myself->ip, ip, CL_IPLEN);
                log_warn("IP address for this node updated to %s", cl.myself->ip);
                cl.todo |= CT_SAVE;
            }
        }
        if (!sender && type == CM_MEET) {
            cnode *n = cl_node_new(NULL, CN_HANDSHAKE);
            if (ip_of(n->ip, l, h + H_MYIP) != 0) n->ip[0] = '\0';
            n->port = g16(h + H_PORT);
            n->pport = g16(h + H_PPORT);
            n->cport = g16(h + H_CPORT);
            cl_node_add(n);
            cl.todo |= CT_SAVE;
            process_gossip(h, l);
        }
        cl_send_ping(l, CM_PONG);
    }
    if (type == CM_PING || type == CM_PONG || type == CM_MEET) {
        if (!l->inbound) {
            if (l->node->flags & CN_HANDSHAKE) {
                if (sender) {
                    if (update_address_if_needed(sender, l, h)) cl.todo |= CT_SAVE | CT_STATE;
                    cl_node_del(l->node); /* frees l too */
                    return -1;
                }
                cl_node_rename(l->node, (const char *)h + H_SENDER);
                l->node->flags &= ~CN_HANDSHAKE;
                l->node->flags |= flags & (CN_MASTER | CN_SLAVE);
                cl.todo |= CT_SAVE;
            } else if (memcmp(l->node->name, h + H_SENDER, CL_NAMELEN) != 0) {
                cnode *n = l->node;
                n->flags |= CN_NOADDR;
                n->ip[0] = '\0';
                n->port = n->pport = n->cport = 0;
                cl_link_free(l);
                cl.todo |= CT_SAVE;
                return -1;
            }
        }
        if (sender) {
            sender->flags &= ~CN_NOFAILOVER;
            sender->flags |= flags & CN_NOFAILOVER;
        }
        if (sender && type == CM_PING && !(sender->flags & CN_HANDSHAKE) && update_address_if_needed(sender, l, h))
            cl.todo |= CT_SAVE | CT_STATE;
        if (!l->inbound && type == CM_PONG) {
            l->node->pong_received = now;
            l->node->ping_sent = 0;
            if (l->node->flags & CN_PFAIL) {
                l->node->flags &= ~CN_PFAIL;
                cl.todo |= CT_SAVE | CT_STATE;
            } else if (l->node->flags & CN_FAIL) {
                clear_failure_if_needed(l->node);
            }
        }
        if (sender) {
            static const char zero[CL_NAMELEN];
            if (!memcmp(h + H_SLAVEOF, zero, CL_NAMELEN)) {
                cl_set_node_as_master(sender);
            } else {
                cnode *master = cl_lookup((const char *)h + H_SLAVEOF, CL_NAMELEN);
                if (sender->flags & CN_MASTER) {
                    cl_del_node_slots(sender);
                    sender->flags &= ~(CN_MASTER | CN_MIGRATE_TO);
                    sender->flags |= CN_SLAVE;
                    cl.todo |= CT_SAVE | CT_STATE;
                }
                if (master && sender->slaveof != master) {
                    if (sender->slaveof) cl_node_remove_slave(sender->slaveof, sender);
                    cl_node_add_slave(master, sender);
                    sender->slaveof = master;
                    cl.todo |= CT_SAVE;
                }
            }
        }
        cnode *sender_master = NULL;
        int dirty = 0;
        if (sender) {
            sender_master = (sender->flags & CN_MASTER) ? sender : sender->slaveof;
            if (sender_master) dirty = memcmp(sender_master->slots, h + H_SLOTS, CL_SLOTS / 8) != 0;
        }
        if (sender && (sender->flags & CN_MASTER) && dirty) cl_update_slots_with(sender, sender_cfg, h + H_SLOTS);
        if (sender && dirty) {
            for (int j = 0; j < CL_SLOTS; j++) {
                if (!cl_slot_bit(h + H_SLOTS, j)) continue;
                if (cl.slots[j] == sender || !cl.slots[j] || cl_slot_bit(cl.owner_not_claiming, j)) continue;
                if (cl.slots[j]->config_epoch > sender_cfg) {
                    log_verbose("Node %.40s has old slots configuration, sending an UPDATE message about %.40s",
                                sender->name, cl.slots[j]->name);
                    cl_send_update(sender->link, cl.slots[j]);
                    break;
                }
            }
        }
        if (sender && (cl.myself->flags & CN_MASTER) && (sender->flags & CN_MASTER) &&
            sender_cfg == cl.myself->config_epoch && sender->config_epoch == cl.myself->config_epoch &&
            memcmp(sender->name, cl.myself->name, CL_NAMELEN) > 0) {
            /* Config epoch collision: the smaller name takes a new epoch. */
            cl.current_epoch++;
            cl.myself->config_epoch = cl.current_epoch;
            cl_save_config(1);
            log_verbose("WARNING: configEpoch collision with node %.40s. configEpoch set to %llu", sender->name,
                        (unsigned long long)cl.myself->config_epoch);
        }
        if (sender) {
            process_gossip(h, l);
            process_extensions(h, l, totlen);
        }
    } else if (type == CM_FAIL) {
        if (sender) {
            cnode *f = cl_lookup((const char *)h + H_LEN, CL_NAMELEN);
            if (f && !(f->flags & (CN_FAIL | CN_MYSELF))) {
                log_notice("FAIL message received from %.40s about %.40s", sender->name, f->name);
                f->flags |= CN_FAIL;
                f->fail_time = now;
                f->flags &= ~CN_PFAIL;
                cl.todo |= CT_SAVE | CT_STATE;
            }
        }
    } else if (type == CM_PUBLISH || type == CM_PUBLISHSHARD) {
        if (!sender) return 0;
        uint32_t chn = g32(h + H_LEN), msgn = g32(h + H_LEN + 4);
        if (publish_hook)
            publish_hook((const char *)h + H_LEN + 8, chn, (const char *)h + H_LEN + 8 + chn, msgn,
                         type == CM_PUBLISHSHARD);
    } else if (type == CM_AUTH_REQUEST) {
        if (!sender) return 0;
        cl_send_failover_auth_if_needed(sender, h);
    } else if (type == CM_AUTH_ACK) {
        if (!sender) return 0;
        if ((sender->flags & CN_MASTER) && sender->numslots > 0 && sender_cur >= cl.failover_auth_epoch) {
            cl.failover_auth_count++;
            cl.todo |= CT_FAILOVER;
        }
    } else if (type == CM_MFSTART) {
        if (!sender || sender->slaveof != cl.myself) return 0;
        cl_reset_manual_failover();
        cl.mf_end = now + 5000;
        cl.mf_slave = sender;
        session_pause(SESSION_PAUSE_BY_FAILOVER, now + 5000 * 2, SESSION_PAUSE_WRITE);
        log_warn("Manual failover requested by replica %.40s.", sender->name);
        cl_send_ping(l, CM_PING);
    } else if (type == CM_UPDATE) {
        if (!sender) return 0;
        uint64_t reported = g64(h + H_LEN);
        cnode *n = cl_lookup((const char *)h + H_LEN + 8, CL_NAMELEN);
        if (!n || n->config_epoch >= reported) return 0;
        if (n->flags & CN_SLAVE) cl_set_node_as_master(n);
        n->config_epoch = reported;
        cl.todo |= CT_SAVE | CT_FSYNC;
        cl_update_slots_with(n, reported, h + H_LEN + 8 + CL_NAMELEN);
    } else if (type == CM_MODULE) {
        /* No modules here: module messages are dropped. */
    } else {
        log_warn("Received unknown packet type: %d", type);
    }
    return 0;
}

/* ---- the transport's calls (bus thread) ------------------------------- */

const cluster_transport *cl_tp;
void cluster_set_transport(const cluster_transport *t) { cl_tp = t; }

void *cluster_bus_accepted(int h) {
    clink *l = calloc(1, sizeof(*l));
    if (!l) abort();
    l->h = h;
    l->ctime = cl_mstime();
    l->inbound = 1;
    l->connected = 1;
    return l;
}

void cluster_bus_connected(void *lp, int ok) {
    clink *l = lp;
    cl_wrlock();
    cnode *n = l->node;
    if (!ok || !n) {
        if (n) log_verbose("Connection with Node %.40s at %s:%d failed", n->name, n->ip, n->cport);
        cl_link_free(l);
    } else {
        l->connected = 1;
        int64_t old = n->ping_sent;
        cl_send_ping(l, (n->flags & CN_MEET) ? CM_MEET : CM_PING);
        if (old) n->ping_sent = old;
        n->flags &= ~CN_MEET;
    }
    cl_unlock_todo();
}

int cluster_bus_message(void *lp, const unsigned char *p, size_t n) {
    clink *l = lp;
    cl_wrlock();
    l->rcvd += n;
    int rc = process(l, p, n);
    cl_unlock_todo();
    return rc;
}

void cluster_bus_closed(void *lp) {
    clink *l = lp;
    cl_wrlock();
    l->h = -1; /* the transport closed it */
    cl_link_free(l);
    cl_unlock_todo();
}

/* ---- the cron (every 100 ms) ------------------------------------------- */

static void reconnect(cnode *n, int64_t handshake_timeout, int64_t now) {
    if (n->flags & (CN_MYSELF | CN_NOADDR)) return;
    if (n->flags & CN_PFAIL) cl.pfail_nodes++;
    if ((n->flags & CN_HANDSHAKE) && now - n->ctime > handshake_timeout) {
        cl_node_del(n);
        return;
    }
    if (!n->link && cl_tp) {
        clink *l = calloc(1, sizeof(*l));
        if (!l) abort();
        l->ctime = now;
        l->node = n;
        n->link = l;
        l->h = cl_tp->connect(n->ip, n->cport, l);
        if (l->h < 0) {
            if (n->ping_sent == 0) n->ping_sent = cl_mstime();
            cl_link_free(l);
        }
    }
}

/* A replica of the master with the most working replicas moves to a master
 * left with none (Redis's clusterHandleSlaveMigration): only while the
 * cluster is ok, if its own master keeps more than cluster-migration-barrier
 * working replicas, if it is the replica with the smallest name among those
 * masters' replicas, and once the master has been orphaned for 5 s (its own
 * replicas may be announcing a failover meanwhile). cl lock held. */
#define SLAVE_MIGRATION_DELAY 5000
static void handle_slave_migration(int max_slaves) {
    cnode *mymaster = cl.myself->slaveof, *target = NULL, *candidate = cl.myself;
    if (cl.state != 0 || !mymaster) return;
    int okslaves = 0;
    for (int j = 0; j < mymaster->nslaves; j++)
        if (!(mymaster->slaves[j]->flags & (CN_FAIL | CN_PFAIL))) okslaves++;
    if (okslaves <= cls.migration_barrier) return;
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *n = cl.nodes[i];
        int ok = 0, orphaned = 1;
        if ((n->flags & (CN_SLAVE | CN_FAIL)) || !(n->flags & CN_MIGRATE_TO)) orphaned = 0;
        if (n->flags & CN_MASTER) ok = cl_count_ok_slaves(n);
        if (ok > 0) orphaned = 0;
        if (orphaned) {
            if (!target && n->numslots > 0) target = n;
            if (!n->orphaned_time) n->orphaned_time = cl_mstime();
        } else {
            n->orphaned_time = 0;
        }
        if (ok == max_slaves)
            for (int j = 0; j < n->nslaves; j++)
                if (memcmp(n->slaves[j]->name, candidate->name, CL_NAMELEN) < 0) candidate = n->slaves[j];
    }
    if (target && candidate == cl.myself && cl_mstime() - target->orphaned_time > SLAVE_MIGRATION_DELAY) {
        log_warn("Migrating to orphaned master %.40s", target->name);
        cl_set_master(target);
        cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
    }
}

void cluster_bus_tick(void) {
    static uint64_t iteration;
    cl_refresh_settings();
    cl_wrlock();
    iteration++;
    snprintf(cl.myself->hostname, sizeof(cl.myself->hostname), "%s", cls.announce_hostname);
    int64_t now = cl_mstime(), handshake_timeout = cls.node_timeout < 1000 ? 1000 : cls.node_timeout;
    cl.pfail_nodes = 0;
    for (int i = cl.nnodes - 1; i >= 0; i--)
        if (i < cl.nnodes) reconnect(cl.nodes[i], handshake_timeout, now);
    if (!(iteration % 10)) {
        cnode *min = NULL;
        for (int j = 0; j < 5 && cl.nnodes; j++) {
            cnode *n = cl.nodes[rand() % cl.nnodes];
            if (!n->link || n->ping_sent != 0 || (n->flags & (CN_MYSELF | CN_HANDSHAKE))) continue;
            if (!min || min->pong_received > n->pong_received) min = n;
        }
        if (min) cl_send_ping(min->link, CM_PING);
    }
    int update_state = 0, orphaned_masters = 0, max_slaves = 0, this_slaves = 0;
    /* A link whose peer does not read (a stopped process) would hold ever
     * more of what is sent to it: past cluster-link-sendbuf-limit it is
     * freed (and made again by the next tick), as Redis's
     * clusterNodeCronFreeLinkOnBufferLimitReached. */
    if (cls.link_sendbuf_limit > 0 && cl_tp)
        for (int i = 0; i < cl.nnodes; i++) {
            cnode *n = cl.nodes[i];
            clink *ls[2] = {n->link, n->inbound_link};
            for (int j = 0; j < 2; j++)
                if (ls[j] && ls[j]->h >= 0 && cl_tp->pending(ls[j]->h) > (size_t)cls.link_sendbuf_limit) {
                    cl_link_free(ls[j]);
                    __atomic_fetch_add(&cl.links_limit_exceeded, 1, __ATOMIC_RELAXED);
                }
        }
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *n = cl.nodes[i];
        now = cl_mstime();
        if (n->flags & (CN_MYSELF | CN_NOADDR | CN_HANDSHAKE)) continue;
        /* Masters left without a working replica, for replica migration. */
        if ((cl.myself->flags & CN_SLAVE) && (n->flags & CN_MASTER) && !(n->flags & CN_FAIL)) {
            int ok = cl_count_ok_slaves(n);
            if (ok == 0 && n->numslots > 0 && (n->flags & CN_MIGRATE_TO)) orphaned_masters++;
            if (ok > max_slaves) max_slaves = ok;
            if (cl.myself->slaveof == n) this_slaves = ok;
        }
        int64_t ping_delay = now - n->ping_sent, data_delay = now - n->data_received;
        if (n->link && now - n->link->ctime > cls.node_timeout && n->ping_sent && ping_delay > cls.node_timeout / 2 &&
            data_delay > cls.node_timeout / 2)
            cl_link_free(n->link);
        if (n->link && n->ping_sent == 0 && now - n->pong_received > cls.node_timeout / 2) {
            cl_send_ping(n->link, CM_PING);
            continue;
        }
        if (cl.mf_end && (cl.myself->flags & CN_MASTER) && cl.mf_slave == n && n->link) {
            cl_send_ping(n->link, CM_PING);
            continue;
        }
        if (n->ping_sent == 0) continue;
        int64_t delay = ping_delay < data_delay ? ping_delay : data_delay;
        if (delay > cls.node_timeout && !(n->flags & (CN_PFAIL | CN_FAIL))) {
            log_debug("*** NODE %.40s possibly failing", n->name);
            n->flags |= CN_PFAIL;
            update_state = 1;
        }
    }
    if ((cl.myself->flags & CN_SLAVE) && !repl_is_replica() && cl.myself->slaveof && !(cl.myself->slaveof->flags & CN_NOADDR) &&
        cl.myself->slaveof->ip[0]) {
        char err[256];
        repl_replicaof(cl.myself->slaveof->ip, cl.myself->slaveof->port, err, sizeof(err));
    }
    cl_manual_failover_check_timeout();
    if (cl.myself->flags & CN_SLAVE) {
        cl_handle_manual_failover();
        if (!(cl.todo & CT_FAILOVER)) cl_handle_slave_failover();
        /* Worth trying only if some master has at least two working replicas. */
        if (orphaned_masters && max_slaves >= 2 && this_slaves == max_slaves && cls.allow_replica_migration &&
            (cl.myself->flags & CN_SLAVE))
            handle_slave_migration(max_slaves);
    }
    if (update_state || cl.state == 1) cl_update_state();
    cl_unlock_todo();
}
