/* cfail.c -- replica elections and manual failover (Redis 7.0's rules).
 *
 * A replica whose master is FAIL (or that runs a manual failover) waits
 * 500 ms + random(0..500) + rank * 1000 ms, the rank being the number of
 * replicas of the same master with a bigger replication offset; then it
 * bumps currentEpoch and asks every master for a vote (AUTH_REQUEST). A
 * master votes once per epoch, only for a replica of a FAIL master (or a
 * forced one), not twice for the same master within 2 * node-timeout, and
 * only when no claimed slot has a newer epoch. A majority of the masters
 * serving slots elects the replica, which takes its master's slots with the
 * election epoch and tells everyone with a PONG. A manual failover (CLUSTER
 * FAILOVER) first has the master pause writes and report its offset
 * (MFSTART, then pings with the PAUSED flag); the replica starts once it
 * has applied that offset. Runs under the cluster write lock. */
#include "cmd/cluster/cluster_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd/repl/repl.h"
#include "session/session.h"

enum { CANT_NONE, CANT_DATA_AGE, CANT_WAITING_DELAY, CANT_EXPIRED, CANT_WAITING_VOTES };

static uint64_t rd64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* h: the AUTH_REQUEST message (currentEpoch at 16, configEpoch at 24, the
 * claimed slots at 80, message flags at 2253). */
void cl_send_failover_auth_if_needed(cnode *n, const unsigned char *h) {
    cnode *master = n->slaveof;
    uint64_t req_cur = rd64(h + 16), req_cfg = rd64(h + 24);
    const unsigned char *claimed = h + 80;
    int force_ack = h[2253] & 2;
    if ((cl.myself->flags & CN_SLAVE) || cl.myself->numslots == 0) return;
    if (req_cur < cl.current_epoch) {
        log_warn("Failover auth denied to %.40s: reqEpoch (%llu) < curEpoch(%llu)", n->name,
                 (unsigned long long)req_cur, (unsigned long long)cl.current_epoch);
        return;
    }
    if (cl.last_vote_epoch == cl.current_epoch) {
        log_warn("Failover auth denied to %.40s: already voted for epoch %llu", n->name,
                 (unsigned long long)cl.current_epoch);
        return;
    }
    if ((n->flags & CN_MASTER) || !master || (!(master->flags & CN_FAIL) && !force_ack)) {
        if (n->flags & CN_MASTER) log_warn("Failover auth denied to %.40s: it is a master node", n->name);
        else if (!master) log_warn("Failover auth denied to %.40s: I don't know its master", n->name);
        else log_warn("Failover auth denied to %.40s: its master is up", n->name);
        return;
    }
    int64_t now = cl_mstime();
    if (now - master->voted_time < cls.node_timeout * 2) {
        log_warn("Failover auth denied to %.40s: can't vote about this master before %lld milliseconds", n->name,
                 (long long)(cls.node_timeout * 2 - (now - master->voted_time)));
        return;
    }
    for (int j = 0; j < CL_SLOTS; j++) {
        if (!cl_slot_bit(claimed, j)) continue;
        if (!cl.slots[j] || cl_slot_bit(cl.owner_not_claiming, j) || cl.slots[j]->config_epoch <= req_cfg) continue;
        log_warn("Failover auth denied to %.40s: slot %d epoch (%llu) > reqEpoch (%llu)", n->name, j,
                 (unsigned long long)cl.slots[j]->config_epoch, (unsigned long long)req_cfg);
        return;
    }
    cl.last_vote_epoch = cl.current_epoch;
    master->voted_time = now;
    cl.todo |= CT_SAVE | CT_FSYNC;
    /* The ACK: a bare header. */
    cl_send_bare_to(n, CM_AUTH_ACK);
    log_warn("Failover auth granted to %.40s for epoch %llu", n->name, (unsigned long long)cl.current_epoch);
}

static int slave_rank(void) {
    cnode *m = cl.myself->slaveof;
    if (!m) return 0;
    long long myoff = cl_my_repl_offset();
    int rank = 0;
    for (int j = 0; j < m->nslaves; j++)
        if (m->slaves[j] != cl.myself && !(m->slaves[j]->flags & CN_NOFAILOVER) && m->slaves[j]->repl_offset > myoff)
            rank++;
    return rank;
}

static void log_cant_failover(int reason) {
    static int64_t last_log;
    int64_t now = cl_mstime();
    if (reason == cl.cant_failover_reason && now - last_log < 300000) return;
    cl.cant_failover_reason = reason;
    if (cl.myself->slaveof && (cl.myself->slaveof->flags & CN_FAIL) &&
        now - cl.myself->slaveof->fail_time < cls.node_timeout + 5000)
        return;
    const char *msg = reason == CANT_DATA_AGE        ? "Disconnected from master for longer than allowed. Please check "
                                                       "the 'cluster-replica-validity-factor' configuration option."
                      : reason == CANT_WAITING_DELAY ? "Waiting the delay before I can start a new failover."
                      : reason == CANT_EXPIRED       ? "Failover attempt expired."
                      : reason == CANT_WAITING_VOTES ? "Waiting for votes, but majority still not reached."
                                                     : "Unknown reason code.";
    last_log = now;
    log_warn("Currently unable to failover: %s", msg);
}

void cl_reset_manual_failover(void) {
    if (cl.mf_slave) session_unpause(SESSION_PAUSE_BY_FAILOVER);
    cl.mf_end = 0;
    cl.mf_can_start = 0;
    cl.mf_slave = NULL;
    cl.mf_master_offset = -1;
}

void cl_manual_failover_check_timeout(void) {
    if (cl.mf_end && cl.mf_end < cl_mstime()) {
        log_warn("Manual failover timed out.");
        cl_reset_manual_failover();
    }
}

void cl_handle_manual_failover(void) {
    if (cl.mf_end == 0 || cl.mf_can_start || cl.mf_master_offset == -1) return;
    if (cl.mf_master_offset == cl_my_repl_offset()) {
        cl.mf_can_start = 1;
        log_warn("All master replication stream processed, manual failover can start.");
        cl.todo |= CT_FAILOVER;
        return;
    }
    cl.todo |= CT_MANUAL;
}

void cl_failover_replace_master(void) {
    cnode *old = cl.myself->slaveof;
    if ((cl.myself->flags & CN_MASTER) || !old) return;
    cl_set_node_as_master(cl.myself);
    char err[256];
    repl_replicaof(NULL, 0, err, sizeof(err));
    for (int j = 0; j < CL_SLOTS; j++)
        if (cl_slot_bit(old->slots, j)) {
            cl_del_slot(j);
            cl_add_slot(cl.myself, j);
        }
    cl_update_state();
    cl_save_config(1);
    cl_broadcast_pong(0);
    cl_reset_manual_failover();
}

void cl_handle_slave_failover(void) {
    int64_t now = cl_mstime();
    int64_t auth_age = now - cl.failover_auth_time;
    int quorum = cl.size / 2 + 1;
    int manual = cl.mf_end != 0 && cl.mf_can_start;
    cl.todo &= ~CT_FAILOVER;
    int64_t auth_timeout = cls.node_timeout * 2;
    if (auth_timeout < 2000) auth_timeout = 2000;
    int64_t auth_retry = auth_timeout * 2;
    cnode *m = cl.myself->slaveof;
    if ((cl.myself->flags & CN_MASTER) || !m || (!(m->flags & CN_FAIL) && !manual) ||
        (cls.replica_no_failover && !manual) || m->numslots == 0) {
        cl.cant_failover_reason = CANT_NONE;
        return;
    }
    /* A replica cut off from its primary for long has old data: it does
     * not run for election (unless asked by hand), as Redis's
     * cluster-replica-validity-factor check. The node timeout it took to
     * flag the primary FAIL is the baseline. */
    long long data_age = repl_data_age_ms();
    if (data_age > cls.node_timeout) data_age -= cls.node_timeout;
    if (cls.validity_factor && !manual &&
        data_age > cls.repl_ping_period_ms + cls.node_timeout * cls.validity_factor) {
        log_cant_failover(CANT_DATA_AGE);
        return;
    }
    if (auth_age > auth_retry) {
        cl.failover_auth_time = now + 500 + rand() % 500;
        cl.failover_auth_count = 0;
        cl.failover_auth_sent = 0;
        cl.failover_auth_rank = slave_rank();
        cl.failover_auth_time += cl.failover_auth_rank * 1000;
        if (cl.mf_end) {
            cl.failover_auth_time = now;
            cl.failover_auth_rank = 0;
            cl.todo |= CT_FAILOVER;
        }
        log_warn("Start of election delayed for %lld milliseconds (rank #%d, offset %lld).",
                 (long long)(cl.failover_auth_time - now), cl.failover_auth_rank, cl_my_repl_offset());
        cl_broadcast_pong(1);
        return;
    }
    if (cl.failover_auth_sent == 0 && cl.mf_end == 0) {
        int newrank = slave_rank();
        if (newrank > cl.failover_auth_rank) {
            long long added = (long long)(newrank - cl.failover_auth_rank) * 1000;
            cl.failover_auth_time += added;
            cl.failover_auth_rank = newrank;
            log_warn("Replica rank updated to #%d, added %lld milliseconds of delay.", newrank, added);
        }
    }
    if (now < cl.failover_auth_time) {
        log_cant_failover(CANT_WAITING_DELAY);
        return;
    }
    if (auth_age > auth_timeout) {
        log_cant_failover(CANT_EXPIRED);
        return;
    }
    if (cl.failover_auth_sent == 0) {
        cl.current_epoch++;
        cl.failover_auth_epoch = cl.current_epoch;
        log_warn("Starting a failover election for epoch %llu.", (unsigned long long)cl.current_epoch);
        cl_request_failover_auth();
        cl.failover_auth_sent = 1;
        cl.todo |= CT_SAVE | CT_STATE | CT_FSYNC;
        return;
    }
    if (cl.failover_auth_count >= quorum) {
        log_warn("Failover election won: I'm the new master.");
        if (cl.myself->config_epoch < cl.failover_auth_epoch) {
            cl.myself->config_epoch = cl.failover_auth_epoch;
            log_warn("configEpoch set to %llu after successful failover", (unsigned long long)cl.myself->config_epoch);
        }
        cl_failover_replace_master();
    } else {
        log_cant_failover(CANT_WAITING_VOTES);
    }
}
