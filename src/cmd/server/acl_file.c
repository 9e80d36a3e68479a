/* acl_file.c -- users from configuration: the config file's "user"
 * directives and the ACL file (aclfile), read at start-up, by ACL LOAD and
 * written by ACL SAVE.
 *
 * An ACL file is parsed whole into a new user set before anything changes:
 * on any error the previous rules stay and the error lists every bad line,
 * in Redis's wording. A loaded set replaces the old one under acl_lock's
 * write lock; the default user keeps its identity (its rules are copied in),
 * the clients of every other old user are disconnected. ACL SAVE writes a
 * temporary file, fsyncs it and renames it over the ACL file. Start-up
 * refuses "user" directives together with an aclfile, as Redis does. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/server/acl_internal.h"
#include "session/reply.h"
#include "base/config.h"
#include "base/log.h"

/* Parse an ACL file into a new user set. NULL and *out filled, or the
 * error text (caller frees), Redis's wording, with nothing changed. */
static char *aclfile_parse(const char *path, acl_user ***out, int *nout, acl_user **newdef) {
    FILE *f = fopen(path, "r");
    sbuf err = {0};
    if (!f) {
        acl_sb_cat(&err, "Error loading ACLs, opening file '");
        acl_sb_cat(&err, path);
        acl_sb_cat(&err, "': ");
        acl_sb_cat(&err, strerror(errno));
        return err.p;
    }
    sbuf all = {0};
    char chunk[4096];
    size_t r;
    while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) acl_sb_add(&all, chunk, r);
    fclose(f);
    acl_user **set = NULL;
    int nset = 0;
    acl_user *def = NULL;
    char line_err[1024];
    size_t pos = 0;
    for (int linenum = 1; all.p && pos <= all.len; linenum++) {
        size_t end = pos;
        while (end < all.len && all.p[end] != '\n') end++;
        const char *s = all.p + pos;
        size_t n = end - pos;
        pos = end + 1;
        while (n && strchr(" \t\r\n", s[0])) s++, n--;
        while (n && strchr(" \t\r\n", s[n - 1])) n--;
        if (n == 0) {
            if (end >= all.len) break;
            continue;
        }
        /* Words are separated by single spaces, as Redis splits them. */
        argv_t w = {0};
        for (size_t i = 0, st = 0; i <= n; i++)
            if (i == n || s[i] == ' ') {
                acl_argv_push(&w, s + st, i - st);
                st = i + 1;
            }
        if (w.n < 2 || strcmp(w.v[0], "user") != 0) {
            snprintf(line_err, sizeof(line_err), "%s:%d should start with user keyword followed by the username. ",
                     cfg.aclfile, linenum);
            acl_sb_cat(&err, line_err);
            acl_argv_free(&w);
            continue;
        }
        if (acl_has_space(w.v[1], w.l[1])) {
            snprintf(line_err, sizeof(line_err), "'%s:%d: username '%s' contains invalid characters. ", cfg.aclfile,
                     linenum, w.v[1]);
            acl_sb_cat(&err, line_err);
            acl_argv_free(&w);
            continue;
        }
        int dup = 0;
        for (int i = 0; i < nset; i++)
            if (set[i]->namelen == w.l[1] && memcmp(set[i]->name, w.v[1], w.l[1]) == 0) dup = 1;
        if (dup) {
            snprintf(line_err, sizeof(line_err), "WARNING: Duplicate user '%s' found on line %d. ", w.v[1], linenum);
            acl_sb_cat(&err, line_err);
            acl_argv_free(&w);
            continue;
        }
        acl_user *u = acl_user_new(w.v[1], w.l[1]);
        set = realloc(set, sizeof(acl_user *) * (size_t)(nset + 1));
        set[nset++] = u;
        argv_t m = {0};
        int badidx;
        if (acl_merge_selectors(w.v + 2, w.l + 2, w.n - 2, &m, &badidx) != 0) {
            snprintf(line_err, sizeof(line_err), "%s:%d: Unmatched parenthesis in selector definition.",
                     cfg.aclfile, linenum);
            acl_sb_cat(&err, line_err);
        }
        for (int i = 0; i < m.n; i++) {
            const char *op = m.v[i];
            size_t ol = m.l[i];
            while (ol && strchr("\t\r\n", op[0])) op++, ol--;
            while (ol && strchr("\t\r\n", op[ol - 1])) ol--;
            int e = acl_user_op(u, op, ol);
            if (e) {
                snprintf(line_err, sizeof(line_err), "%s:%d: %s. ", cfg.aclfile, linenum, acl_op_error(e));
                acl_sb_cat(&err, line_err);
            }
        }
        acl_argv_free(&m);
        acl_argv_free(&w);
    }
    free(all.p);
    if (err.len) {
        for (int i = 0; i < nset; i++) acl_user_unref(set[i]);
        free(set);
        acl_sb_cat(&err, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        return err.p;
    }
    for (int i = 0; i < nset; i++)
        if (set[i]->namelen == 7 && memcmp(set[i]->name, "default", 7) == 0) def = set[i];
    *out = set;
    *nout = nset;
    *newdef = def;
    return NULL;
}

/* Replace the user set by a parsed one. Clients of the old users (but the
 * default user, whose rules are replaced in place) are disconnected. Takes
 * the write lock. */
static void users_replace(acl_user **set, int nset, acl_user *newdef, client *self) {
    pthread_rwlock_wrlock(&acl_lock);
    acl_user **old = acl_set;
    int nold = acl_nset;
    acl_set = NULL;
    acl_nset = acl_capset = 0;
    if (newdef) {
        acl_user_copy_rules(&acl_default_user, newdef);
    } else {
        acl_user tmp;
        acl_user_init(&tmp, "default", 7);
        acl_default_user_reset(&tmp);
        acl_user_copy_rules(&acl_default_user, &tmp);
        acl_user_temp_free(&tmp);
    }
    acl_user_derive(&acl_default_user);
    acl_set_insert(&acl_default_user);
    for (int i = 0; i < nset; i++) {
        if (set[i] == newdef) continue;
        acl_user_derive(set[i]);
        acl_set_insert(set[i]);
    }
    pthread_rwlock_unlock(&acl_lock);
    if (newdef) acl_user_unref(newdef);
    for (int i = 0; i < nold; i++) {
        if (old[i] == &acl_default_user) continue;
        client_kill_user(old[i], self, 0);
        acl_user_unref(old[i]);
    }
    free(old);
    free(set);
}

void acl_load_at_startup(void) {
    if (cfg.aclfile && cfg.aclfile[0] && cfg.nacl_users) {
        log_warn("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is "
                 "invalid. This setup is very likely to lead to configuration errors and security holes, please "
                 "define either an ACL file or declare users directly in your redis.conf, but not both.");
        fprintf(stderr, "goblin-core: both 'user' directives and an 'aclfile' are configured; use one of them\n");
        exit(1);
    }
    for (int k = 0; k < cfg.nacl_users; k++) {
        const config_user *cu = &cfg.acl_users[k];
        size_t *lens = malloc(sizeof(size_t) * (size_t)(cu->argc + 1));
        for (int i = 0; i < cu->argc; i++) lens[i] = strlen(cu->argv[i]);
        const char *why = NULL;
        const char *what = cu->argc ? cu->argv[0] : "";
        if (cu->argc < 1) {
            why = "wrong number of arguments";
        } else if (acl_has_space(cu->argv[0], lens[0])) {
            why = "Spaces not allowed in ACL usernames";
        } else {
            argv_t m = {0};
            int bad;
            if (acl_merge_selectors(cu->argv + 1, lens + 1, cu->argc - 1, &m, &bad) != 0) {
                why = "Unmatched parenthesis in selector definition";
                what = cu->argv[1 + bad];
            } else {
                acl_user *u = acl_user_find(cu->argv[0], lens[0]);
                if (!u) {
                    u = acl_user_new(cu->argv[0], lens[0]);
                    acl_set_insert(u);
                } else if (u == &acl_default_user) {
                    acl_user_op(u, "reset", 5);
                } else {
                    why = "Duplicate user found. A user can only be defined once in config files";
                }
                int e = why ? OPE_OK : acl_user_apply(u, m.v, m.l, m.n, &bad);
                if (e) {
                    why = acl_op_error(e);
                    what = m.v[bad];
                }
                acl_user_derive(u);
                if (!why && (u->flags & U_DISABLED))
                    log_notice("The user '%s' is disabled (there is no 'on' modifier in the user description). "
                               "Make sure this is not a configuration error.",
                               u->name);
            }
            acl_argv_free(&m);
        }
        free(lens);
        if (why) {
            fprintf(stderr, "goblin-core: error in user declaration '%s': %s\n", what, why);
            exit(1);
        }
    }
    if (cfg.aclfile && cfg.aclfile[0]) {
        acl_user **set;
        int nset;
        acl_user *def;
        char *err = aclfile_parse(cfg.aclfile, &set, &nset, &def);
        if (err) {
            log_warn("Aborting Redis startup because of ACL errors: %s", err);
            fprintf(stderr, "goblin-core: aborting start-up because of ACL errors: %s\n", err);
            free(err);
            exit(1);
        }
        users_replace(set, nset, def, NULL);
    }
}

static int aclfile_configured(client *c) {
    if (cfg.aclfile && cfg.aclfile[0]) return 1;
    reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via "
                   "the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration "
                   "file set) in order to store users in the Redis configuration.");
    return 0;
}

void aclSaveCommand(client *c) {
    if (!aclfile_configured(c)) return;
    sbuf b = {0};
    acl_sb_cat(&b, "");
    pthread_rwlock_rdlock(&acl_lock);
    for (int i = 0; i < acl_nset; i++) {
        acl_describe_user(acl_set[i], &b);
        acl_sb_cat(&b, "\n");
    }
    pthread_rwlock_unlock(&acl_lock);
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%lld", cfg.aclfile, (int)getpid(), (long long)acl_wall_ms());
    int ok = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        log_warn("Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    } else if (write(fd, b.p, b.len) != (ssize_t)b.len) {
        log_warn("Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        log_warn("Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else {
        fd = -1;
        if (rename(tmp, cfg.aclfile) != 0) log_warn("Renaming ACL file for ACL SAVE: %s", strerror(errno));
        else ok = 1;
    }
    if (fd >= 0) close(fd);
    if (!ok) unlink(tmp);
    free(b.p);
    if (ok) reply_ok(c);
    else
        reply_error(c, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                       "information");
}

void aclLoadCommand(client *c) {
    if (!aclfile_configured(c)) return;
    acl_user **set;
    int nset;
    acl_user *def;
    char *err = aclfile_parse(cfg.aclfile, &set, &nset, &def);
    if (err) {
        reply_errorf(c, "ERR %s", err);
        free(err);
        return;
    }
    users_replace(set, nset, def, c);
    reply_ok(c);
}
