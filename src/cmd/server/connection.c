/* connection.c -- connection commands: PING, ECHO, QUIT, SELECT, AUTH,
 * HELLO, RESET. Credentials are checked by the ACL users (cmd/server/acl_check.c),
 * which compare password hashes in constant time. */
#include <stdio.h>
#include <string.h>

#include "cmd/cluster/cluster.h"
#include "cmd/server/acl.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "base/config.h"
#include "base/process.h"
#include "cmd/server/client_cmd.h"

static void pingCommand(client *c) {
    if (c->argc > 2) {
        reply_err_arity(c);
        return;
    }
    if (client_flags_peek(c) & CLIENT_PUBSUB && c->resp == 2) {
        reply_array(c, 2);
        reply_bulk(c, "pong", 4);
        if (c->argc == 1) reply_bulk(c, "", 0);
        else reply_bulk(c, c->argv[1].p, c->argv[1].n);
        return;
    }
    if (c->argc == 1) reply_simple(c, "PONG");
    else reply_bulk(c, c->argv[1].p, c->argv[1].n);
}

static void echoCommand(client *c) { reply_bulk(c, c->argv[1].p, c->argv[1].n); }

static void quitCommand(client *c) {
    /* Under CLIENT REPLY OFF or SKIP the +OK is held back, as in Redis 7.0.
     * Redis then keeps the connection open with nothing more read from it
     * until something is written to it; here it closes at once. */
    reply_ok(c);
    client_flag_on(c, CLIENT_CLOSE_AFTER_REPLY);
}

static void selectCommand(client *c) {
    long long id;
    if (arg_ll_range(c, &c->argv[1], &id, -2147483648LL, 2147483647LL,
                     "ERR value is not an integer or out of range") != 0)
        return;
    if (cluster_enabled() && id != 0) {
        reply_error(c, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (id < 0 || id >= db_count()) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    __atomic_store_n(&c->db, (int)id, __ATOMIC_RELAXED);
    reply_ok(c);
}

static void authCommand(client *c) {
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    garg pass = c->argv[c->argc - 1];
    const char *user = c->argc == 3 ? c->argv[1].p : "default";
    size_t ulen = c->argc == 3 ? c->argv[1].n : 7;
    /* SLOWLOG and MONITOR show "(redacted)" for the credentials. */
    cmd_redact_arg(c, 1);
    cmd_redact_arg(c, 2);
    if (c->argc == 2 && acl_default_nopass()) {
        reply_error(c, "ERR AUTH <password> called without any password configured for the default user. "
                       "Are you sure your configuration is correct?");
        return;
    }
    if (acl_authenticate(c, user, ulen, pass.p, pass.n) != 0) {
        reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    reply_ok(c);
}

static int valid_client_name(const garg *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->p[i] < '!' || a->p[i] > '~') return 0;
    return 1;
}

static void helloCommand(client *c) {
    long long ver = 0;
    int i = 1;
    if (c->argc >= 2) {
        if (arg_ll_range(c, &c->argv[1], &ver, -2147483648LL, 2147483647LL,
                         "ERR Protocol version is not an integer or out of range") != 0)
            return;
        i = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    /* Options act as they are read, as in Redis: an AUTH or SETNAME error
     * wins over a later syntax error, and an earlier SETNAME sticks. */
    for (; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(&c->argv[i], "AUTH") && more >= 2) {
            garg u = c->argv[i + 1], p = c->argv[i + 2];
            cmd_redact_arg(c, i + 1);
            cmd_redact_arg(c, i + 2);
            if (acl_authenticate(c, u.p, u.n, p.p, p.n) != 0) {
                reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
                return;
            }
            i += 2;
        } else if (arg_is(&c->argv[i], "SETNAME") && more >= 1) {
            if (!valid_client_name(&c->argv[i + 1])) {
                reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
            client_set_name(c, c->argv[i + 1].p, c->argv[i + 1].n);
            i += 1;
        } else {
            reply_errorf(c, "ERR Syntax error in HELLO option '%.128s'", c->argv[i].p);
            return;
        }
    }
    if (!(client_flags_peek(c) & CLIENT_AUTHENTICATED)) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                       "AUTH <user> <pass> option can be used to authenticate the client and select the "
                       "RESP protocol version at the same time");
        return;
    }
    if (ver) __atomic_store_n(&c->resp, (int)ver, __ATOMIC_RELAXED);
    reply_map(c, 7);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "redis");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, GOBLIN_REDIS_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_int(c, c->resp);
    reply_bulk_cstr(c, "id");
    reply_int(c, (long long)c->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_array(c, 0);
}

static void resetCommand(client *c) {
    client_reset_state(c);
    client_flag_off(c, CLIENT_ASKING | CLIENT_READONLY);
    reply_simple(c, "RESET");
}

const cmd_handler connection_handlers[] = {
    {"ping", pingCommand, CMD_LOCK_NONE},     {"echo", echoCommand, CMD_LOCK_NONE},
    {"quit", quitCommand, CMD_LOCK_NONE},     {"select", selectCommand, CMD_LOCK_NONE},
    {"auth", authCommand, CMD_LOCK_NONE},     {"hello", helloCommand, CMD_LOCK_NONE},
    {"reset", resetCommand, CMD_LOCK_NONE},   {NULL, NULL, 0},
};
