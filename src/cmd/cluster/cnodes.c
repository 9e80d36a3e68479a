/* cnodes.c -- the cluster's node table, slot owners, epochs and nodes.conf.
 *
 * Invariants (cl_lock held): cl.slots[s] == n iff bit s of n->slots is set,
 * and n->numslots counts those bits; a replica n with n->slaveof == m is in
 * m->slaves exactly once; myself is in cl.nodes and never freed. nodes.conf
 * is the CLUSTER NODES text of every node but those in handshake, then
 * "vars currentEpoch N lastVoteEpoch M". When an epoch or a vote changed
 * it is written to a temporary file, fsynced and renamed over the old one
 * (a crash leaves either file); other changes are written in place without
 * a flush, as Redis does. */
#include "cmd/cluster/cluster_int.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "cmd/repl/repl.h"
#include "db/db.h"
#include "util/fdio.h"

cstate cl;

void cl_random_name(char *name) {
    unsigned char r[CL_NAMELEN];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        for (int i = 0; i < CL_NAMELEN; i++) r[i] = (unsigned char)rand();
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < CL_NAMELEN; i++) name[i] = hex[r[i] & 15];
}

int cl_is_valid_name(const char *s, size_t n) {
    if (n != CL_NAMELEN) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
    }
    return 1;
}

cnode *cl_node_new(const char *name, int flags) {
    cnode *n = calloc(1, sizeof(*n));
    if (!n) abort();
    if (name)
        memcpy(n->name, name, CL_NAMELEN);
    else
        cl_random_name(n->name);
    n->ctime = cl_mstime();
    n->flags = flags;
    return n;
}

void cl_node_add(cnode *n) {
    cl.nodes = realloc(cl.nodes, sizeof(cnode *) * (size_t)(cl.nnodes + 1));
    if (!cl.nodes) abort();
    cl.nodes[cl.nnodes++] = n;
}

cnode *cl_lookup(const char *name, size_t len) {
    if (len != CL_NAMELEN) return NULL;
    for (int i = 0; i < cl.nnodes; i++)
        if (memcmp(cl.nodes[i]->name, name, CL_NAMELEN) == 0) return cl.nodes[i];
    return NULL;
}

void cl_node_rename(cnode *n, const char *name) { memcpy(n->name, name, CL_NAMELEN); }

void cl_link_free(clink *l) {
    if (!l) return;
    if (l->h >= 0 && cl_tp) cl_tp->close(l->h);
    l->h = -1;
    if (l->node) {
        if (l->node->link == l) l->node->link = NULL;
        else if (l->node->inbound_link == l) l->node->inbound_link = NULL;
    }
    free(l);
}

/* ---- failure reports ---------------------------------------------------- */

int cl_add_failure_report(cnode *failing, cnode *sender) {
    for (int i = 0; i < failing->nreports; i++)
        if (failing->reports[i].node == sender) {
            failing->reports[i].time = cl_mstime();
            return 0;
        }
    failing->reports = realloc(failing->reports, sizeof(cfail_report) * (size_t)(failing->nreports + 1));
    if (!failing->reports) abort();
    failing->reports[failing->nreports].node = sender;
    failing->reports[failing->nreports].time = cl_mstime();
    failing->nreports++;
    return 1;
}

static void reports_cleanup(cnode *n) {
    int64_t maxtime = cls.node_timeout * 2, now = cl_mstime();
    int j = 0;
    for (int i = 0; i < n->nreports; i++)
        if (now - n->reports[i].time <= maxtime) n->reports[j++] = n->reports[i];
    n->nreports = j;
}

int cl_del_failure_report(cnode *n, cnode *sender) {
    int i;
    for (i = 0; i < n->nreports; i++)
        if (n->reports[i].node == sender) break;
    if (i == n->nreports) return 0;
    n->reports[i] = n->reports[--n->nreports];
    reports_cleanup(n);
    return 1;
}

int cl_failure_reports(cnode *n) {
    reports_cleanup(n);
    return n->nreports;
}

/* ---- masters and replicas ----------------------------------------------- */

int cl_node_remove_slave(cnode *m, cnode *s) {
    for (int j = 0; j < m->nslaves; j++)
        if (m->slaves[j] == s) {
            memmove(m->slaves + j, m->slaves + j + 1, sizeof(cnode *) * (size_t)(m->nslaves - j - 1));
            m->nslaves--;
            if (m->nslaves == 0) m->flags &= ~CN_MIGRATE_TO;
            return 0;
        }
    return -1;
}

int cl_node_add_slave(cnode *m, cnode *s) {
    for (int j = 0; j < m->nslaves; j++)
        if (m->slaves[j] == s) return -1;
    m->slaves = realloc(m->slaves, sizeof(cnode *) * (size_t)(m->nslaves + 1));
    if (!m->slaves) abort();
    m->slaves[m->nslaves++] = s;
    m->flags |= CN_MIGRATE_TO;
    return 0;
}

int cl_count_ok_slaves(cnode *n) {
    int ok = 0;
    for (int j = 0; j < n->nslaves; j++)
        if (!(n->slaves[j]->flags & CN_FAIL)) ok++;
    return ok;
}

void cl_node_del(cnode *del) {
    assert(!(del->flags & CN_MYSELF));
    for (int j = 0; j < CL_SLOTS; j++) {
        if (cl.importing_from[j] == del) cl.importing_from[j] = NULL;
        if (cl.migrating_to[j] == del) cl.migrating_to[j] = NULL;
        if (cl.slots[j] == del) cl_del_slot(j);
    }
    for (int i = 0; i < cl.nnodes; i++) cl_del_failure_report(cl.nodes[i], del);
    if (cl.mf_slave == del) cl.mf_slave = NULL;
    for (int j = 0; j < del->nslaves; j++) del->slaves[j]->slaveof = NULL;
    if ((del->flags & CN_SLAVE) && del->slaveof) cl_node_remove_slave(del->slaveof, del);
    else if (del->slaveof) cl_node_remove_slave(del->slaveof, del);
    cl_link_free(del->link);
    cl_link_free(del->inbound_link);
    for (int i = 0; i < cl.nnodes; i++)
        if (cl.nodes[i] == del) {
            cl.nodes[i] = cl.nodes[--cl.nnodes];
            break;
        }
    free(del->reports);
    free(del->slaves);
    free(del);
}

/* ---- slots -------------------------------------------------------------- */

int cl_slot_bit(const unsigned char *bm, int slot) { return (bm[slot >> 3] >> (slot & 7)) & 1; }

static int masters_have_slaves(void) {
    for (int i = 0; i < cl.nnodes; i++)
        if (!(cl.nodes[i]->flags & CN_SLAVE) && cl.nodes[i]->nslaves) return 1;
    return 0;
}

int cl_add_slot(cnode *n, int slot) {
    if (cl.slots[slot]) return -1;
    if (!cl_slot_bit(n->slots, slot)) {
        n->slots[slot >> 3] |= (unsigned char)(1 << (slot & 7));
        n->numslots++;
        if (n->numslots == 1 && masters_have_slaves()) n->flags |= CN_MIGRATE_TO;
    }
    cl.slots[slot] = n;
    return 0;
}

int cl_del_slot(int slot) {
    cnode *n = cl.slots[slot];
    if (!n) return -1;
    if (cl_slot_bit(n->slots, slot)) {
        n->slots[slot >> 3] &= (unsigned char)~(1 << (slot & 7));
        n->numslots--;
    }
    cl.slots[slot] = NULL;
    return 0;
}

int cl_del_node_slots(cnode *n) {
    int deleted = 0;
    for (int j = 0; j < CL_SLOTS; j++)
        if (cl_slot_bit(n->slots, j)) {
            cl_del_slot(j);
            deleted++;
        }
    return deleted;
}

void cl_close_all_slots(void) {
    memset(cl.migrating_to, 0, sizeof(cl.migrating_to));
    memset(cl.importing_from, 0, sizeof(cl.importing_from));
}

/* ---- state -------------------------------------------------------------- */

#define REJOIN_MAX 5000
#define REJOIN_MIN 500
#define WRITABLE_DELAY 2000

void cl_update_state(void) {
    static int64_t among_minority_time, first_call;
    int64_t now = cl_mstime();
    cl.todo &= ~CT_STATE;
    if (!first_call) first_call = now;
    if ((cl.myself->flags & CN_MASTER) && cl.state == 1 && now - first_call < WRITABLE_DELAY) return;
    int new_state = 0, reachable = 0;
    if (cls.require_full_coverage)
        for (int j = 0; j < CL_SLOTS; j++)
            if (!cl.slots[j] || (cl.slots[j]->flags & CN_FAIL)) {
                new_state = 1;
                break;
            }
    cl.size = 0;
    for (int i = 0; i < cl.nnodes; i++) {
        cnode *n = cl.nodes[i];
        if ((n->flags & CN_MASTER) && n->numslots) {
            cl.size++;
            if (!(n->flags & (CN_FAIL | CN_PFAIL))) reachable++;
        }
    }
    if (reachable < cl.size / 2 + 1) {
        new_state = 1;
        among_minority_time = now;
    }
    if (new_state != cl.state) {
        int64_t rejoin = cls.node_timeout;
        if (rejoin > REJOIN_MAX) rejoin = REJOIN_MAX;
        if (rejoin < REJOIN_MIN) rejoin = REJOIN_MIN;
        if (new_state == 0 && (cl.myself->flags & CN_MASTER) && now - among_minority_time < rejoin) return;
        log_warn("Cluster state changed: %s", new_state == 0 ? "ok" : "fail");
        cl.state = new_state;
    }
}

void cl_set_node_as_master(cnode *n) {
    if (n->flags & CN_MASTER) return;
    if (n->slaveof) {
        cl_node_remove_slave(n->slaveof, n);
        if (n != cl.myself) n->flags |= CN_MIGRATE_TO;
    }
    n->flags &= ~CN_SLAVE;
    n->flags |= CN_MASTER;
    n->slaveof = NULL;
    cl.todo |= CT_SAVE | CT_STATE;
}

/* Make this node a replica of n (its replication follows n's address). */
void cl_set_master(cnode *n) {
    assert(n != cl.myself && cl.myself->numslots == 0);
    if (cl.myself->flags & CN_MASTER) {
        cl.myself->flags &= ~(CN_MASTER | CN_MIGRATE_TO);
        cl.myself->flags |= CN_SLAVE;
        cl_close_all_slots();
    } else if (cl.myself->slaveof) {
        cl_node_remove_slave(cl.myself->slaveof, cl.myself);
    }
    cl.myself->slaveof = n;
    cl_node_add_slave(n, cl.myself);
    if (n->ip[0] && n->port) {
        char err[256];
        if (repl_replicaof(n->ip, n->port, err, sizeof(err)) != 0) log_warn("cluster: %s", err);
    }
    cl_reset_manual_failover();
}

long long cl_my_repl_offset(void) { return (long long)repl_offset(); }

/* ---- epochs ------------------------------------------------------------- */

uint64_t cl_max_epoch(void) {
    uint64_t max = 0;
    for (int i = 0; i < cl.nnodes; i++)
        if (cl.nodes[i]->config_epoch > max) max = cl.nodes[i]->config_epoch;
    return max < cl.current_epoch ? cl.current_epoch : max;
}

int cl_bump_epoch_without_consensus(void) {
    uint64_t max = cl_max_epoch();
    if (cl.myself->config_epoch == 0 || cl.myself->config_epoch != max) {
        cl.current_epoch++;
        cl.myself->config_epoch = cl.current_epoch;
        cl.todo |= CT_SAVE | CT_FSYNC;
        log_warn("New configEpoch set to %llu", (unsigned long long)cl.myself->config_epoch);
        return 0;
    }
    return -1;
}

/* ---- the blacklist of forgotten nodes (60 s) ---------------------------- */

static void blacklist_cleanup(void) {
    int64_t now = cl_mstime();
    int j = 0;
    for (int i = 0; i < cl.nblacklist; i++)
        if (cl.blacklist[i].until >= now) cl.blacklist[j++] = cl.blacklist[i];
    cl.nblacklist = j;
}

void cl_blacklist_add(cnode *n) {
    blacklist_cleanup();
    for (int i = 0; i < cl.nblacklist; i++)
        if (memcmp(cl.blacklist[i].name, n->name, CL_NAMELEN) == 0) {
            cl.blacklist[i].until = cl_mstime() + 60000;
            return;
        }
    cl.blacklist = realloc(cl.blacklist, sizeof(*cl.blacklist) * (size_t)(cl.nblacklist + 1));
    if (!cl.blacklist) abort();
    memcpy(cl.blacklist[cl.nblacklist].name, n->name, CL_NAMELEN);
    cl.blacklist[cl.nblacklist].until = cl_mstime() + 60000;
    cl.nblacklist++;
}

int cl_blacklist_has(const char *name) {
    blacklist_cleanup();
    for (int i = 0; i < cl.nblacklist; i++)
        if (memcmp(cl.blacklist[i].name, name, CL_NAMELEN) == 0) return 1;
    return 0;
}

/* ---- CLUSTER NODES text and nodes.conf ---------------------------------- */

static const struct {
    int flag;
    const char *name;
} flag_names[] = {
    {CN_MYSELF, "myself"}, {CN_MASTER, "master"},       {CN_SLAVE, "slave"},   {CN_PFAIL, "fail?"},
    {CN_FAIL, "fail"},     {CN_HANDSHAKE, "handshake"}, {CN_NOADDR, "noaddr"}, {CN_NOFAILOVER, "nofailover"},
};

/* The slot ranges shown for n: from the owner table (as Redis's
 * slot_info_pairs), so a node's line lists the slots cl.slots gives it. */
static void describe_slots(strbuf *b, cnode *n) {
    int start = -1;
    for (int j = 0; j <= CL_SLOTS; j++) {
        int mine = j < CL_SLOTS && cl.slots[j] == n;
        if (mine && start < 0) start = j;
        if (!mine && start >= 0) {
            if (start == j - 1) strbuf_addf(b, " %d", start);
            else strbuf_addf(b, " %d-%d", start, j - 1);
            start = -1;
        }
    }
}

void cl_describe_node(strbuf *b, cnode *n, int use_pport) {
    int port = use_pport && n->pport ? n->pport : n->port;
    strbuf_addf(b, "%.40s ", n->name);
    if (n->hostname[0]) strbuf_addf(b, "%s:%d@%d,%s ", n->ip, port, n->cport, n->hostname);
    else strbuf_addf(b, "%s:%d@%d ", n->ip, port, n->cport);
    int any = 0;
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        if (n->flags & flag_names[i].flag) {
            strbuf_addf(b, "%s%s", any ? "," : "", flag_names[i].name);
            any = 1;
        }
    if (!any) strbuf_addf(b, "noflags");
    if (n->slaveof) strbuf_addf(b, " %.40s", n->slaveof->name);
    else strbuf_addf(b, " -");
    uint64_t epoch = (n->flags & CN_SLAVE) && n->slaveof ? n->slaveof->config_epoch : n->config_epoch;
    strbuf_addf(b, " %lld %lld %llu %s", (long long)n->ping_sent, (long long)n->pong_received,
                (unsigned long long)epoch, (n->link || (n->flags & CN_MYSELF)) ? "connected" : "disconnected");
    describe_slots(b, n);
    if (n->flags & CN_MYSELF)
        for (int j = 0; j < CL_SLOTS; j++) {
            if (cl.migrating_to[j]) strbuf_addf(b, " [%d->-%.40s]", j, cl.migrating_to[j]->name);
            else if (cl.importing_from[j]) strbuf_addf(b, " [%d-<-%.40s]", j, cl.importing_from[j]->name);
        }
}

void cl_describe_nodes(strbuf *b, int filter, int use_pport) {
    for (int i = 0; i < cl.nnodes; i++) {
        if (cl.nodes[i]->flags & filter) continue;
        cl_describe_node(b, cl.nodes[i], use_pport);
        strbuf_addf(b, "\n");
    }
}

static char *config_path(void) {
    char *f = config_value("cluster-config-file");
    if (!f || !f[0]) {
        free(f);
        return strdup("nodes.conf");
    }
    return f;
}

/* Generations of nodes.conf texts: taken (cl_lock held) and written
 * (save_mu held), so a late writer never puts back an older text. */
static uint64_t gen_taken;
static uint64_t gen_written;
static pthread_mutex_t save_mu = PTHREAD_MUTEX_INITIALIZER;

void cl_config_snapshot(cl_conf_text *t, int do_fsync) {
    cl.todo &= ~(CT_SAVE | CT_FSYNC);
    memset(t, 0, sizeof(*t));
    cl_describe_nodes(&t->b, CN_HANDSHAKE, 0);
    strbuf_addf(&t->b, "vars currentEpoch %llu lastVoteEpoch %llu\n", (unsigned long long)cl.current_epoch,
                (unsigned long long)cl.last_vote_epoch);
    t->gen = ++gen_taken;
    t->fsync = do_fsync;
}

int cl_config_write(cl_conf_text *t) {
    char *path = config_path();
    int rc = -1, e = 0;
    pthread_mutex_lock(&save_mu);
    if (t->gen <= gen_written) {
        /* A newer text is there already: it only has to reach the disk. */
        rc = t->fsync ? fsync_path(path, O_RDONLY) : 0;
        e = errno;
    } else if (!t->fsync) {
        /* A slot's owner (SETSLOT, gossip): as Redis, written in place
         * without a flush (a killed process loses nothing; a node that lost
         * it to a machine crash relearns it from the cluster). A rename
         * would make the filesystem flush the data: a disk write per slot
         * of a reshard. */
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) {
            if (fd_pwrite_all(fd, t->b.p, t->b.len, 0) == 0 && ftruncate(fd, (off_t)t->b.len) == 0) rc = 0;
            e = errno;
            close(fd);
        } else {
            e = errno;
        }
    } else {
        /* An epoch or a vote: a temporary file, fsynced, renamed over the
         * old one, so a crash leaves either whole file. */
        size_t tl = strlen(path) + 32;
        char *tmp = malloc(tl);
        if (!tmp) abort();
        snprintf(tmp, tl, "%s.tmp-%d", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            if (fd_pwrite_all(fd, t->b.p, t->b.len, 0) == 0 && fsync(fd) == 0) rc = 0;
            e = errno;
            close(fd);
            if (rc == 0 && rename(tmp, path) != 0) {
                rc = -1;
                e = errno;
            }
            if (rc != 0) unlink(tmp);
        } else {
            e = errno;
        }
        free(tmp);
    }
    if (rc == 0 && t->gen > gen_written) gen_written = t->gen;
    pthread_mutex_unlock(&save_mu);
    free(path);
    free(t->b.p);
    t->b.p = NULL;
    errno = e;
    return rc;
}

int cl_save_config(int do_fsync) {
    cl_conf_text t;
    cl_config_snapshot(&t, do_fsync);
    return cl_config_write(&t);
}

/* Split a line on spaces (nodes.conf has no quoting). */
static int split_words(char *line, char **argv, int max) {
    int argc = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && argc < max; t = strtok_r(NULL, " \t\r\n", &save))
        argv[argc++] = t;
    return argc;
}

static cnode *lookup_or_add(const char *name) {
    cnode *n = cl_lookup(name, CL_NAMELEN);
    if (!n) {
        n = cl_node_new(name, 0);
        cl_node_add(n);
    }
    return n;
}

/* 1 loaded, 0 no file (or empty), -1 corrupt (err set). */
static int load_config(const char *path, char *err, size_t errlen) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "Loading the cluster node config from %s: %s", path, strerror(errno));
        return -1;
    }
    size_t maxline = 1024 + CL_SLOTS * 128;
    char *line = malloc(maxline);
    char **argv = malloc(sizeof(char *) * (CL_SLOTS + 64));
    if (!line || !argv) abort();
    int any = 0, bad = 0;
    while (!bad && fgets(line, (int)maxline, fp)) {
        if (line[0] == '\n' || line[0] == '\0') continue;
        int argc = split_words(line, argv, CL_SLOTS + 64);
        if (argc == 0) continue;
        any = 1;
        if (strcasecmp(argv[0], "vars") == 0) {
            if (!(argc % 2)) {
                bad = 1;
                break;
            }
            for (int j = 1; j < argc; j += 2) {
                if (!strcasecmp(argv[j], "currentEpoch")) cl.current_epoch = strtoull(argv[j + 1], NULL, 10);
                else if (!strcasecmp(argv[j], "lastVoteEpoch")) cl.last_vote_epoch = strtoull(argv[j + 1], NULL, 10);
                else log_warn("Skipping unknown cluster config variable '%s'", argv[j]);
            }
            continue;
        }
        if (argc < 8 || !cl_is_valid_name(argv[0], strlen(argv[0]))) {
            bad = 1;
            break;
        }
        cnode *n = lookup_or_add(argv[0]);
        char *host = strchr(argv[1], ',');
        if (host) {
            *host++ = '\0';
            snprintf(n->hostname, sizeof(n->hostname), "%s", host);
        } else {
            n->hostname[0] = '\0';
        }
        char *p = strrchr(argv[1], ':');
        if (!p) {
            bad = 1;
            break;
        }
        *p = '\0';
        snprintf(n->ip, sizeof(n->ip), "%s", argv[1]);
        char *busp = strchr(p + 1, '@');
        if (busp) *busp++ = '\0';
        n->port = atoi(p + 1);
        n->cport = busp ? atoi(busp) : n->port + CL_PORT_INCR;
        char *save = NULL;
        for (char *f = strtok_r(argv[2], ",", &save); f; f = strtok_r(NULL, ",", &save)) {
            if (!strcasecmp(f, "myself")) {
                if (cl.myself) {
                    bad = 1;
                    break;
                }
                cl.myself = n;
                n->flags |= CN_MYSELF;
            } else if (!strcasecmp(f, "master")) n->flags |= CN_MASTER;
            else if (!strcasecmp(f, "slave")) n->flags |= CN_SLAVE;
            else if (!strcasecmp(f, "fail?")) n->flags |= CN_PFAIL;
            else if (!strcasecmp(f, "fail")) {
                n->flags |= CN_FAIL;
                n->fail_time = cl_mstime();
            } else if (!strcasecmp(f, "handshake")) n->flags |= CN_HANDSHAKE;
            else if (!strcasecmp(f, "noaddr")) n->flags |= CN_NOADDR;
            else if (!strcasecmp(f, "nofailover")) n->flags |= CN_NOFAILOVER;
            else if (strcasecmp(f, "noflags")) {
                bad = 1;
                break;
            }
        }
        if (bad) break;
        if (argv[3][0] != '-') {
            if (!cl_is_valid_name(argv[3], strlen(argv[3]))) {
                bad = 1;
                break;
            }
            cnode *m = lookup_or_add(argv[3]);
            n->slaveof = m;
            cl_node_add_slave(m, n);
        }
        if (atoll(argv[4])) n->ping_sent = cl_mstime();
        if (atoll(argv[5])) n->pong_received = cl_mstime();
        n->config_epoch = ((n->flags & CN_SLAVE) && n->slaveof) ? 0 : strtoull(argv[6], NULL, 10);
        for (int j = 8; j < argc && !bad; j++) {
            int start, stop;
            if (argv[j][0] == '[') {
                char *d = strchr(argv[j], '-');
                if (!d) {
                    bad = 1;
                    break;
                }
                *d = '\0';
                char dir = d[1];
                int slot = atoi(argv[j] + 1);
                char *nm = d + 3, *pr = strchr(nm, ']');
                if (slot < 0 || slot >= CL_SLOTS || !pr || !cl_is_valid_name(nm, (size_t)(pr - nm))) {
                    bad = 1;
                    break;
                }
                cnode *cn = lookup_or_add(nm);
                if (dir == '>') cl.migrating_to[slot] = cn;
                else cl.importing_from[slot] = cn;
                continue;
            }
            char *d = strchr(argv[j], '-');
            if (d) {
                *d = '\0';
                start = atoi(argv[j]);
                stop = atoi(d + 1);
            } else {
                start = stop = atoi(argv[j]);
            }
            if (start < 0 || start >= CL_SLOTS || stop < 0 || stop >= CL_SLOTS) {
                bad = 1;
                break;
            }
            while (start <= stop) cl_add_slot(n, start++);
        }
    }
    free(line);
    free(argv);
    fclose(fp);
    if (!any && !bad) return 0;
    if (bad || !cl.myself) {
        snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file.");
        return -1;
    }
    log_notice("Node configuration loaded, I'm %.40s", cl.myself->name);
    if (cl_max_epoch() > cl.current_epoch) cl.current_epoch = cl_max_epoch();
    return 1;
}

int cl_load_or_create(char *err, size_t errlen) {
    char *path = config_path();
    int rc = load_config(path, err, errlen);
    free(path);
    if (rc < 0) return -1;
    if (rc == 0) {
        cl.myself = cl_node_new(NULL, CN_MYSELF | CN_MASTER);
        cl_node_add(cl.myself);
        log_notice("No cluster configuration found, I'm %.40s", cl.myself->name);
        if (cl_save_config(1) != 0) {
            snprintf(err, errlen, "Fatal: can't update cluster config file.");
            return -1;
        }
    }
    return 0;
}

/* ---- RESET -------------------------------------------------------------- */

void cl_reset(int hard) {
    /* A replica's data was dropped by the caller (outside this lock). */
    if (cl.myself->flags & CN_SLAVE) cl_set_node_as_master(cl.myself);
    cl_close_all_slots();
    cl_reset_manual_failover();
    for (int j = 0; j < CL_SLOTS; j++) cl_del_slot(j);
    for (int i = cl.nnodes - 1; i >= 0; i--)
        if (cl.nodes[i] != cl.myself) cl_node_del(cl.nodes[i]);
    if (hard) {
        cl.current_epoch = 0;
        cl.last_vote_epoch = 0;
        cl.myself->config_epoch = 0;
        log_warn("configEpoch set to 0 via CLUSTER RESET HARD");
        cl_random_name(cl.myself->name);
        log_notice("Node hard reset, now I'm %.40s", cl.myself->name);
    }
    cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
}
