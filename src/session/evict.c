/* evict.c -- maxmemory-clients: Redis 7.0's client eviction.
 *
 * A client's memory (session_client_memory) is what CLIENT LIST shows as
 * tot-mem. Each client remembers what it last added to a process-wide
 * total (mem_noted); a change of its buffers is noted (session_client_
 * mem_note: after a read and the commands it ran, when the output buffer
 * grows or goes), adding the difference, and session_unregister takes its
 * share out. A client whose buffers keep their size adds nothing: no
 * shared write per request.
 *
 * When the total reaches the limit, a pass is due; the worker runs it at
 * the end of its loop iteration, holding no lock (a note comes from deep
 * inside a command or a delivery). The pass, under the registry lock,
 * measures every client again: the normal and Pub/Sub ones count (the
 * primary's link does not), and those of them without CLIENT NO-EVICT and
 * not already closing are the candidates; the largest are closed (at
 * their worker's next turn) until the rest are under the limit, as Redis
 * empties its largest memory buckets first. Invariant: after a pass, the
 * clients not closing hold less than the limit, or every candidate is
 * closing. The limit is maxmemory-clients: bytes, or a percentage of
 * maxmemory; 0 (or 0% of maxmemory 0) is no limit, and a limit is never
 * under 128 KiB, as in Redis, so a server can still be talked to. */
#include "session/session.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "base/log.h"

static size_t clients_mem;     /* atomics: the sum of the clients' mem_noted */
static long long limit_bytes;  /* atomics: maxmemory-clients in bytes, or */
static int limit_pct;          /* ... a percentage of maxmemory (0: bytes) */
uint64_t session_stat_evicted_clients;

#define EVICT_LIMIT_MIN (128 * 1024)

/* Redis's argv_len_sum: the arguments of c's command while it runs (c is
 * self, the client asking, whose argv is stable; inside EXEC, EXEC's own,
 * as Redis leaves it) or waits blocked, and those of a partial request
 * already parsed (published by net/). */
size_t session_client_argv_memory(const client *c, const client *self) {
    size_t n = __atomic_load_n(&c->qbuf_argv, __ATOMIC_RELAXED) + __atomic_load_n(&c->argv_blocked, __ATOMIC_RELAXED);
    if (client_flags_peek(c) & CLIENT_IN_EXEC) n += __atomic_load_n(&c->exec_argv, __ATOMIC_RELAXED);
    else if (c == self)
        for (int i = 0; i < c->argc; i++) n += c->argv[i].n;
    return n;
}

/* A subscription's share (a channel or pattern of the client): its slot
 * in the client's set and in the channel's list of subscribers, as Redis
 * counts the pointers and not the names, which are shared. */
#define SUB_BYTES 32

size_t session_client_memory(const client *c, const client *self) {
    size_t subs = (size_t)__atomic_load_n(&c->sub_count, __ATOMIC_RELAXED) +
                  (size_t)__atomic_load_n(&c->psub_count, __ATOMIC_RELAXED) +
                  (size_t)__atomic_load_n(&c->ssub_count, __ATOMIC_RELAXED);
    return __atomic_load_n(&c->ocap, __ATOMIC_RELAXED) + __atomic_load_n(&c->qbuf_len, __ATOMIC_RELAXED) +
           __atomic_load_n(&c->qbuf_free, __ATOMIC_RELAXED) + session_client_argv_memory(c, self) +
           __atomic_load_n(&c->multi_mem, __ATOMIC_RELAXED) + __atomic_load_n(&c->state_mem, __ATOMIC_RELAXED) +
           subs * SUB_BYTES + sizeof(client);
}

/* What c counts toward the limit: nothing for the primary's link (Redis
 * counts only its normal and Pub/Sub classes). */
static size_t counted(const client *c, const client *self) {
    return (client_flags_peek(c) & CLIENT_PRIMARY) ? 0 : session_client_memory(c, self);
}

long long session_client_eviction_limit(void) {
    long long b = __atomic_load_n(&limit_bytes, __ATOMIC_RELAXED);
    int pct = __atomic_load_n(&limit_pct, __ATOMIC_RELAXED);
    if (pct) b = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED) / 100 * pct;
    if (b <= 0) return 0;
    return b < EVICT_LIMIT_MIN ? EVICT_LIMIT_MIN : b;
}

typedef struct cand {
    client *c;
    size_t mem;
} cand;

typedef struct pass {
    cand *v;
    size_t n, cap;
    size_t total;
    int nomem;
} pass;

static void pass_cb(void *arg, client *c) {
    pass *p = arg;
    uint32_t f = client_flags_peek(c);
    if (f & CLIENT_CLOSE_ASAP) return; /* its memory goes back soon */
    size_t m = counted(c, NULL);
    if (!m) return;
    p->total += m;
    if (f & CLIENT_NO_EVICT) return;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        cand *nv = realloc(p->v, nc * sizeof(*nv));
        if (!nv) {
            p->nomem = 1;
            return;
        }
        p->v = nv;
        p->cap = nc;
    }
    p->v[p->n++] = (cand){c, m};
}

static int by_mem_desc(const void *a, const void *b) {
    size_t x = ((const cand *)a)->mem, y = ((const cand *)b)->mem;
    return x < y ? 1 : x > y ? -1 : 0;
}

void session_evict_clients(void) {
    long long lim = session_client_eviction_limit();
    if (!lim) return;
    pass p = {0};
    session_registry_lock();
    session_clients_each(pass_cb, &p);
    if (p.total >= (size_t)lim) {
        if (p.n) qsort(p.v, p.n, sizeof(*p.v), by_mem_desc); /* p.v is NULL with no candidate */
        size_t i = 0;
        for (; i < p.n && p.total >= (size_t)lim; i++) {
            client *c = p.v[i].c;
            log_notice("Evicting client: id=%llu addr=%s laddr=%s fd=%d name=%s tot-mem=%zu", (unsigned long long)c->id,
                       c->addr, c->laddr, c->fd, c->name ? c->name : "", p.v[i].mem);
            session_client_kill(c);
            p.total -= p.v[i].mem;
            __atomic_fetch_add(&session_stat_evicted_clients, 1, __ATOMIC_RELAXED);
        }
        if (p.total >= (size_t)lim && !p.nomem) {
            /* Once a second at most: each note over the limit comes here. */
            static int64_t warned_s;
            int64_t now_s = (int64_t)time(NULL);
            if (__atomic_exchange_n(&warned_s, now_s, __ATOMIC_RELAXED) != now_s)
                log_warn("Over client maxmemory after evicting all evictable clients");
        }
    }
    session_registry_unlock();
    free(p.v);
}

/* A pass is due (atomics): notes come from deep inside commands and
 * deliveries, under locks the pass would take; the worker runs it at the
 * end of its loop iteration (session_evict_pending). */
static int pass_wanted;

/* mem_noted of a client that left the registry: a note then (its buffers
 * let go while it is freed) adds nothing. */
#define MEM_GONE SIZE_MAX

void session_client_mem_note(client *c) {
    size_t m = counted(c, NULL);
    size_t was = __atomic_load_n(&c->mem_noted, __ATOMIC_RELAXED);
    do {
        if (was == MEM_GONE || was == m) return;
    } while (!__atomic_compare_exchange_n(&c->mem_noted, &was, m, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    size_t total = __atomic_add_fetch(&clients_mem, m - was, __ATOMIC_RELAXED); /* wraps back for m < was */
    long long lim = m > was ? session_client_eviction_limit() : 0;
    if (lim && total >= (size_t)lim) __atomic_store_n(&pass_wanted, 1, __ATOMIC_RELAXED);
}

void session_evict_request(void) {
    if (session_client_eviction_limit()) __atomic_store_n(&pass_wanted, 1, __ATOMIC_RELAXED);
}

void session_evict_pending(void) {
    if (__atomic_load_n(&pass_wanted, __ATOMIC_RELAXED) && __atomic_exchange_n(&pass_wanted, 0, __ATOMIC_RELAXED))
        session_evict_clients();
}

void session_client_mem_forget(client *c) {
    size_t was = __atomic_exchange_n(&c->mem_noted, MEM_GONE, __ATOMIC_RELAXED);
    if (was != MEM_GONE) __atomic_sub_fetch(&clients_mem, was, __ATOMIC_RELAXED);
}

/* maxmemory-clients: a memory value, or 0-100 followed by '%'. */
static int limit_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    size_t n = strlen(v);
    if (n > 1 && v[n - 1] == '%') {
        char *end;
        long long pct = strtoll(v, &end, 10);
        if (end != v + n - 1 || v[0] == '-' || v[0] == '+' || v[0] == ' ') {
            snprintf(err, errlen, "argument must be a memory or percent value");
            return -1;
        }
        if (pct > 100) {
            snprintf(err, errlen, "percentage argument must be less or equal to 100");
            return -1;
        }
        snprintf(norm, normlen, "%lld%%", pct);
        return 1;
    }
    long long b;
    if (v[0] == '-' || config_parse_size(v, &b) != 0) {
        snprintf(err, errlen, "argument must be a memory or percent value");
        return -1;
    }
    snprintf(norm, normlen, "%lld", b);
    return 1;
}

static void limit_apply(const char *v) {
    size_t n = strlen(v);
    if (n && v[n - 1] == '%') {
        __atomic_store_n(&limit_pct, atoi(v), __ATOMIC_RELAXED);
        __atomic_store_n(&limit_bytes, 0, __ATOMIC_RELAXED);
    } else {
        long long b = 0;
        if (config_parse_size(v, &b) != 0) b = 0;
        __atomic_store_n(&limit_pct, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&limit_bytes, b, __ATOMIC_RELAXED);
    }
    /* A lower limit takes effect at once (this iteration's end), as with
     * Redis's apply function. */
    session_evict_request();
}

void session_evict_config_register(void) {
    static const config_hook hook = {limit_check, limit_apply, NULL};
    if (config_register_hook("maxmemory-clients", &hook) != 0) abort();
}
