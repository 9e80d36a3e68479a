/* t_persist.c -- the snapshot commands: SAVE, BGSAVE [SCHEDULE] and
 * LOAD [path] (a Goblin command: replace the dataset with a file's
 * contents, atomically). LASTSAVE lives with the admin family and reads
 * srv.lastsave, which persist/ keeps true.
 *
 * The work is in persist/persist.c; this file parses, picks the lock and
 * speaks Redis's replies. SAVE and BGSAVE run under the keyspace write
 * lock (SAVE writes the whole dataset while nobody changes it; BGSAVE only
 * holds it across fork()). LOAD takes its own locks: the file is read and
 * verified with no lock held, and only the final exchange of datasets
 * holds the write lock. LOAD itself runs on its own thread (loadCommand). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/server/admin_family.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "session/session.h"
#include "persist/persist.h"
#include "base/config.h"

static void saveCommand(client *c) {
    char err[600];
    int rc = persist_save(err, sizeof(err));
    if (rc == RDB_OK) reply_ok(c);
    else if (rc == RDB_ERR_BUSY) reply_error(c, "ERR Background save already in progress");
    else reply_errorf(c, "ERR Error saving DB on disk: %s", err);
}

static void bgsaveCommand(client *c) {
    int schedule = 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "schedule")) {
        schedule = 1;
    } else if (c->argc > 1) {
        reply_err_syntax(c);
        return;
    }
    if (persist_bgsave_in_progress()) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    if (client_flags_peek(c) & CLIENT_IN_EXEC) {
        /* As Redis: a BGSAVE inside a transaction runs after it. */
        persist_bgsave_schedule();
        reply_simple(c, "Background saving scheduled");
        return;
    }
    char err[600];
    int rc = persist_bgsave(err, sizeof(err));
    if (rc == RDB_OK) reply_simple(c, "Background saving started");
    else if (rc == RDB_ERR_OTHER_CHILD && schedule) {
        persist_bgsave_schedule();
        reply_simple(c, "Background saving scheduled");
    } else if (rc == RDB_ERR_BUSY) reply_error(c, "ERR Background save already in progress");
    else reply_errorf(c, "ERR %s", err);
}

/* LOAD runs on a thread of its own: reading and verifying a big file takes
 * a while, and the worker that received LOAD serves other connections
 * meanwhile (from the old dataset). The client is parked (CLIENT_BLOCKED
 * stops its input) and gets its reply on its own worker when the load is
 * done; a client that went away in between is simply not answered. */
typedef struct load_job {
    uint64_t id;
    int wid;
    char *path;
    int rc;
    uint64_t keys;
    char err[1024];
} load_job;

static void load_reply(client *c, const load_job *j) {
    if (j->rc == RDB_OK) reply_ok(c);
    else if (j->rc == RDB_ERR_BUSY) reply_errorf(c, "ERR %s", j->err);
    else reply_errorf(c, "ERR Error loading '%s': %s: %s", j->path, rdb_err_name(j->rc), j->err);
}

static void load_job_free(load_job *j) {
    free(j->path);
    free(j);
}

/* On the client's worker. */
static void load_done(void *arg) {
    load_job *j = arg;
    client *c = session_worker_find_client(j->wid, j->id);
    if (c && (client_flags_peek(c) & CLIENT_BLOCKED) && !c->bstate) {
        client_flag_off(c, CLIENT_BLOCKED);
        load_reply(c, j);
        session_client_resume(c);
    }
    load_job_free(j);
}

/* LOAD threads still running (shutdown waits for them). */
static int load_inflight;

static void *load_thread(void *arg) {
    load_job *j = arg;
    pthread_setname_np(pthread_self(), "goblin-load");
    j->rc = persist_load(j->path, &j->keys, j->err, sizeof(j->err));
    session_post(j->wid, load_done, j);
    __atomic_fetch_sub(&load_inflight, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void loadCommand(client *c) {
    if (c->argc > 2) {
        reply_err_syntax(c);
        return;
    }
    load_job *j = calloc(1, sizeof(*j));
    if (j) j->path = c->argc == 2 ? strdup(c->argv[1].p) : config_value("dbfilename");
    if (!j || !j->path) {
        free(j);
        reply_error(c, "ERR out of memory");
        return;
    }
    j->id = c->id;
    j->wid = c->worker_id;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int async = !(client_flags_peek(c) & (CLIENT_MULTI | CLIENT_IN_EXEC)) && !db_keyspace_write_held();
    if (async) {
        client_flag_on(c, CLIENT_BLOCKED);
        __atomic_fetch_add(&load_inflight, 1, __ATOMIC_ACQUIRE);
        if (pthread_create(&t, &at, load_thread, j) != 0) {
            __atomic_fetch_sub(&load_inflight, 1, __ATOMIC_RELEASE);
            client_flag_off(c, CLIENT_BLOCKED);
            async = 0;
        }
    }
    pthread_attr_destroy(&at);
    if (async) return;
    j->rc = persist_load(j->path, &j->keys, j->err, sizeof(j->err));
    load_reply(c, j);
    load_job_free(j);
}

/* LOAD is not a Redis command, so it has metadata only once its line is in
 * command_meta.inc; registering a name without metadata would abort the
 * server, so look first. */
static int load_has_metadata(void) {
    int found = 0;
#define CMD_META(n, p, a, f, fk, lk, st, acl, info, docs) found |= strcmp(n, "load") == 0;
#include "cmd/command_meta.inc"
#undef CMD_META
    return found;
}

static const cmd_handler load_handlers[] = {
    {"load", loadCommand, CMD_LOCK_SELF},
    {NULL, NULL, 0},
};

void persist_family_init(void) {
    if (load_has_metadata()) cmd_register(load_handlers);
    persist_start();
}

/* Called while the workers still run: a LOAD in progress is told to stop
 * and gets to post its reply before the workers go away. */
void persist_family_shutdown(void) {
    if (__atomic_load_n(&load_inflight, __ATOMIC_ACQUIRE)) persist_abort_loading();
    for (int i = 0; i < 1000 && __atomic_load_n(&load_inflight, __ATOMIC_ACQUIRE); i++) usleep(10000);
    persist_stop();
}

const cmd_handler persist_handlers[] = {
    {"save", saveCommand, CMD_LOCK_ALL},
    {"bgsave", bgsaveCommand, CMD_LOCK_ALL},
    {NULL, NULL, 0},
};
