/* acl_cmd.c -- the ACL command (CAT, DELUSER, DRYRUN, GENPASS, GETUSER,
 * HELP, LIST, SETUSER, USERS, WHOAMI; LOG is in acl_check.c, LOAD and SAVE
 * in acl_file.c) and the family's start-up and shutdown.
 *
 * ACL SETUSER applies the rules to a staging copy of the user, so a bad
 * rule changes nothing; the copy replaces the user's rules under the write
 * lock. Users removed (DELUSER) or losing channels (SETUSER) have their
 * clients disconnected after the lock is released; the set's reference
 * keeps a removed user valid until then. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cmd/server/acl_internal.h"
#include "cmd/server/admin_family.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "util/sha256.h"
#include "base/config.h"

#define GENPASS_MAX_BITS 4096

/* ---- The ACL command ------------------------------------------------------------ */

/* A copy of a user's channel patterns (checked by acl_chan_matches). */
typedef struct chan_list {
    char **v;
    size_t n;
} chan_list;

static int chan_list_allows(void *arg, const char *name, size_t n, int is_pattern) {
    const chan_list *l = arg;
    return acl_chan_matches(l->v, l->n, name, n, is_pattern);
}

static void aclSetuserCommand(client *c) {
    garg namearg = c->argv[2];
    const garg *name = &namearg;
    int nops = c->argc - 3;
    char **v = malloc(sizeof(char *) * (size_t)(nops + 1));
    size_t *l = malloc(sizeof(size_t) * (size_t)(nops + 1));
    for (int i = 0; i < nops; i++) {
        v[i] = c->argv[3 + i].p;
        l[i] = c->argv[3 + i].n;
    }
    /* Rules carry passwords: SLOWLOG and MONITOR never see them. */
    for (int i = 2; i < c->argc; i++) cmd_redact_arg(c, i);
    if (acl_has_space(name->p, name->n)) {
        reply_error(c, "ERR Usernames can't contain spaces or null characters");
        free(v);
        free(l);
        return;
    }
    argv_t m = {0};
    int bad;
    int merged = acl_merge_selectors(v, l, nops, &m, &bad);
    if (merged != 0) reply_errorf(c, "ERR Unmatched parenthesis in acl selector starting at '%s'.", v[bad]);
    free(v);
    free(l);
    if (merged != 0) return;
    acl_user tmp;
    acl_user_init(&tmp, name->p, name->n);
    pthread_rwlock_wrlock(&acl_lock);
    acl_user *u = acl_user_find(name->p, name->n);
    if (u) acl_user_copy_rules(&tmp, u);
    int e = acl_user_apply(&tmp, m.v, m.l, m.n, &bad);
    if (e) {
        pthread_rwlock_unlock(&acl_lock);
        reply_errorf(c, "ERR Error in ACL SETUSER modifier '%s': %s", m.v[bad], acl_op_error(e));
        acl_user_temp_free(&tmp);
        acl_argv_free(&m);
        return;
    }
    /* Redis 7.0's ACLKillPubsubClientsIfNeeded: when the new channel
     * patterns (of all selectors) are not allchannels nor a superset of the
     * old ones, the user's subscribers whose current subscriptions are no
     * longer allowed lose their connection; the others stay. The new list
     * is copied (up) to be checked after acl_lock is released. */
    int revoke = 0;
    chan_list up = {0};
    if (u) {
        int all = 0;
        for (int i = 0; i < tmp.nsel; i++) all |= (tmp.sel[i].flags & SEL_ALLCHANNELS) != 0;
        for (int i = 0; i < u->nsel && !all && !revoke; i++) {
            if (u->sel[i].flags & SEL_ALLCHANNELS) revoke = 1;
            for (int j = 0; j < u->sel[i].nchans && !revoke; j++) {
                int found = 0;
                for (int a = 0; a < tmp.nsel && !found; a++)
                    for (int b = 0; b < tmp.sel[a].nchans && !found; b++)
                        found = strcmp(tmp.sel[a].chans[b], u->sel[i].chans[j]) == 0;
                if (!found) revoke = 1;
            }
        }
        if (revoke) {
            for (int a = 0; a < tmp.nsel; a++) up.n += tmp.sel[a].nchans;
            up.v = malloc(sizeof(char *) * (up.n ? up.n : 1));
            if (!up.v) abort();
            up.n = 0;
            for (int a = 0; a < tmp.nsel; a++)
                for (int b = 0; b < tmp.sel[a].nchans; b++) up.v[up.n++] = strdup(tmp.sel[a].chans[b]);
        }
    } else {
        u = acl_user_new(name->p, name->n);
        acl_set_insert(u);
    }
    acl_user_copy_rules(u, &tmp);
    acl_user_derive(u);
    if (revoke) acl_user_ref(u);
    pthread_rwlock_unlock(&acl_lock);
    acl_user_temp_free(&tmp);
    acl_argv_free(&m);
    if (revoke) {
        uint64_t *ids = NULL;
        size_t n = pubsub_denied_clients(u, chan_list_allows, &up, &ids);
        client_kill_user_ids(u, c, ids, n);
        free(ids);
        for (size_t i = 0; i < up.n; i++) free(up.v[i]);
        free(up.v);
        acl_user_unref(u);
    }
    reply_ok(c);
}

/* commands, keys and channels of a selector, as GETUSER shows them. */
static void reply_selector(client *c, const acl_sel *s) {
    sbuf b = {0};
    acl_describe_rules(s, &b);
    reply_bulk_cstr(c, "commands");
    reply_bulk(c, b.p, b.len);
    b.len = 0;
    acl_sb_cat(&b, "");
    if (s->flags & SEL_ALLKEYS) {
        acl_sb_cat(&b, "~*");
    } else {
        for (int k = 0; k < s->npats; k++) {
            if (k) acl_sb_cat(&b, " ");
            acl_describe_pattern(&s->pats[k], &b);
        }
    }
    reply_bulk_cstr(c, "keys");
    reply_bulk(c, b.p, b.len);
    b.len = 0;
    acl_sb_cat(&b, "");
    if (s->flags & SEL_ALLCHANNELS) {
        acl_sb_cat(&b, "&*");
    } else {
        for (int k = 0; k < s->nchans; k++) {
            if (k) acl_sb_cat(&b, " ");
            acl_sb_cat(&b, "&");
            acl_sb_cat(&b, s->chans[k]);
        }
    }
    reply_bulk_cstr(c, "channels");
    reply_bulk(c, b.p, b.len);
    free(b.p);
}

static void aclGetuserCommand(client *c) {
    pthread_rwlock_rdlock(&acl_lock);
    acl_user *u = acl_user_find(c->argv[2].p, c->argv[2].n);
    if (!u) {
        pthread_rwlock_unlock(&acl_lock);
        reply_null(c);
        return;
    }
    reply_map(c, 6);
    reply_bulk_cstr(c, "flags");
    int nf = 0;
    for (int i = 0; i < ACL_NUSERFLAGS; i++) nf += (u->flags & acl_user_flags[i].flag) != 0;
    reply_set(c, nf);
    for (int i = 0; i < ACL_NUSERFLAGS; i++)
        if (u->flags & acl_user_flags[i].flag) reply_bulk_cstr(c, acl_user_flags[i].name);
    reply_bulk_cstr(c, "passwords");
    reply_array(c, u->npw);
    for (int i = 0; i < u->npw; i++) reply_bulk(c, u->pw[i], SHA256_HEX_LEN);
    for (int i = 0; i < u->nsel; i++) {
        /* The root selector at the top level, then the others. */
        if (i == 1) {
            reply_bulk_cstr(c, "selectors");
            reply_array(c, u->nsel - 1);
        }
        if (i) reply_map(c, 3);
        reply_selector(c, &u->sel[i]);
    }
    if (u->nsel == 1) {
        reply_bulk_cstr(c, "selectors");
        reply_array(c, 0);
    }
    pthread_rwlock_unlock(&acl_lock);
}

static void aclDeluserCommand(client *c) {
    for (int i = 2; i < c->argc; i++)
        if (c->argv[i].n == 7 && memcmp(c->argv[i].p, "default", 7) == 0) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    acl_user **gone = malloc(sizeof(acl_user *) * (size_t)c->argc);
    int ngone = 0;
    pthread_rwlock_wrlock(&acl_lock);
    for (int i = 2; i < c->argc; i++) {
        int p = acl_user_pos(c->argv[i].p, c->argv[i].n);
        if (p < 0) continue;
        gone[ngone++] = acl_set[p];
        acl_set_remove(p);
    }
    pthread_rwlock_unlock(&acl_lock);
    /* The set's references keep the users valid while their clients go. */
    for (int i = 0; i < ngone; i++) {
        client_kill_user(gone[i], c, 0);
        acl_user_unref(gone[i]);
    }
    free(gone);
    reply_int(c, ngone);
}

static void list_users(client *c, int names_only) {
    pthread_rwlock_rdlock(&acl_lock);
    reply_array(c, acl_nset);
    for (int i = 0; i < acl_nset; i++) {
        if (names_only) {
            reply_bulk(c, acl_set[i]->name, acl_set[i]->namelen);
            continue;
        }
        sbuf b = {0};
        acl_describe_user(acl_set[i], &b);
        reply_bulk(c, b.p, b.len);
        free(b.p);
    }
    pthread_rwlock_unlock(&acl_lock);
}

static void aclListCommand(client *c) { list_users(c, 0); }
static void aclUsersCommand(client *c) { list_users(c, 1); }

static void aclWhoamiCommand(client *c) { reply_bulk_cstr(c, acl_client_user(c)->name); }

static int implemented(const cmd_def *d) { return cmd_registered(d); }

static void aclCatCommand(client *c) {
    if (c->argc == 2) {
        reply_array(c, ACL_NCATS);
        for (int i = 0; i < ACL_NCATS; i++) reply_bulk_cstr(c, acl_cat_names[i]);
        return;
    }
    if (c->argc != 3) {
        admin_reply_subcommand_syntax(c, "ACL");
        return;
    }
    int cat = acl_cat_index(c->argv[2].p, c->argv[2].n);
    if (cat < 0) {
        reply_errorf(c, "ERR Unknown category '%.128s'", c->argv[2].p);
        return;
    }
    size_t h = reply_defer(c);
    long n = 0;
    for (int id = 0; id < acl_ncmds; id++)
        if ((acl_cmd_cats[id] & (1u << cat)) && implemented(&acl_ctab[id])) {
            reply_bulk_cstr(c, acl_ctab[id].fullname);
            n++;
        }
    reply_defer_array(c, h, n);
}

static void aclGenpassCommand(client *c) {
    long long bits = 256;
    if (c->argc > 3) {
        admin_reply_subcommand_syntax(c, "ACL");
        return;
    }
    if (c->argc == 3 && arg_ll(c, &c->argv[2], &bits) != 0) return;
    if (bits <= 0 || bits > GENPASS_MAX_BITS) {
        reply_errorf(c,
                     "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                     "number up to %d",
                     GENPASS_MAX_BITS);
        return;
    }
    static const char hexd[] = "0123456789abcdef";
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[GENPASS_MAX_BITS / 8];
    char out[GENPASS_MAX_BITS / 4];
    size_t need = (chars + 1) / 2, got = 0;
    while (got < need) {
        ssize_t r = getrandom(raw + got, need - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            reply_error(c, "ERR Unable to read random bytes");
            return;
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < chars; i++) out[i] = hexd[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
    reply_bulk(c, out, chars);
}

static void aclDryrunCommand(client *c) {
    acl_user *u = acl_user_get(c->argv[2].p, c->argv[2].n);
    if (!u) {
        reply_errorf(c, "ERR User '%s' not found", c->argv[2].p);
        return;
    }
    garg *argv = c->argv + 3;
    int argc = c->argc - 3;
    const cmd_def *cmd = cmd_lookup(argv[0].p, argv[0].n);
    if (cmd && cmd->parent) cmd = NULL;
    if (cmd && cmd->subs && argc >= 2) cmd = cmd_lookup_full(argv, argc);
    if (!cmd) {
        reply_errorf(c, "ERR Command '%s' not found", argv[0].p);
        acl_user_release(u);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        acl_user_release(u);
        return;
    }
    int pos = 0;
    pthread_rwlock_rdlock(&acl_lock);
    int r = acl_user_check(u, cmd, argv, argc, &pos);
    pthread_rwlock_unlock(&acl_lock);
    acl_user_release(u);
    char msg[512];
    if (r == ACL_OK) {
        reply_ok(c);
        return;
    } else if (r == ACL_DENIED_CMD) {
        snprintf(msg, sizeof(msg), "This user has no permissions to run the '%s' command", cmd->fullname);
    } else {
        snprintf(msg, sizeof(msg), "This user has no permissions to access the '%.*s' %s", (int)argv[pos].n,
                 argv[pos].p, r == ACL_DENIED_KEY ? "key" : "channel");
    }
    reply_bulk_cstr(c, msg);
}

static void aclHelpCommand(client *c) {
    static const char *const help[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        NULL,
    };
    admin_reply_help(c, "ACL", help);
}

/* ---- The family ------------------------------------------------------------ */

void acl_family_init(void) {
    acl_cmd_index_init();
    acl_user_init(&acl_default_user, "default", 7);
    acl_default_user_reset(&acl_default_user);
    acl_user_derive(&acl_default_user);
    acl_set_insert(&acl_default_user);
    /* Applies the value loaded from the config file and flags at once. */
    static const config_hook requirepass_hook = {NULL, acl_requirepass_apply};
    config_register_hook("requirepass", &requirepass_hook);
    acl_load_at_startup();
}

void acl_family_shutdown(void) { acl_log_free(); }

const cmd_handler acl_handlers[] = {
    {"acl|cat", aclCatCommand, CMD_LOCK_NONE},         {"acl|deluser", aclDeluserCommand, CMD_LOCK_NONE},
    {"acl|dryrun", aclDryrunCommand, CMD_LOCK_NONE},   {"acl|genpass", aclGenpassCommand, CMD_LOCK_NONE},
    {"acl|getuser", aclGetuserCommand, CMD_LOCK_NONE}, {"acl|help", aclHelpCommand, CMD_LOCK_NONE},
    {"acl|list", aclListCommand, CMD_LOCK_NONE},       {"acl|load", aclLoadCommand, CMD_LOCK_NONE},
    {"acl|log", aclLogCommand, CMD_LOCK_NONE},         {"acl|save", aclSaveCommand, CMD_LOCK_NONE},
    {"acl|setuser", aclSetuserCommand, CMD_LOCK_NONE}, {"acl|users", aclUsersCommand, CMD_LOCK_NONE},
    {"acl|whoami", aclWhoamiCommand, CMD_LOCK_NONE},   {NULL, NULL, 0},
};
