/* acl.h -- users and permissions (Redis 7.0 ACLs), as the rest of the
 * server sees them: authentication, the permission check the dispatcher
 * runs before every command, and the client's user name.
 *
 * A client points at its user (client.acl_user, NULL meaning the default
 * user) and holds a reference on it, so a user deleted by ACL DELUSER or
 * replaced by ACL LOAD stays valid until its last client is gone; those
 * clients are disconnected. Rules are read under the ACL lock (a leaf lock,
 * docs/locking.md); a user allowed everything is recognised without it. */
#ifndef GOBLIN_CMD_ACL_H
#define GOBLIN_CMD_ACL_H
#include <stddef.h>

#include "cmd/command.h"

struct acl_user;

/* Results of a permission check, ordered as Redis orders them when several
 * selectors fail (the highest is reported). */
enum { ACL_OK = 0, ACL_DENIED_CMD = 1, ACL_DENIED_KEY = 2, ACL_DENIED_AUTH = 3, ACL_DENIED_CHANNEL = 4 };

/* Whether c must authenticate before running commands that need it: the
 * default user has a password (or is off) and c has not authenticated. */
int acl_auth_required(const client *c);
/* The default user has no password (protected mode applies). */
int acl_default_nopass(void);
/* Whether a new connection starts authenticated (default user nopass, on). */
int acl_new_client_authenticated(void);

/* The permission check of a call about to run (c->argv, cmd resolved to the
 * subcommand). NULL when allowed; otherwise the denial is logged (ACL LOG)
 * and the error to reply is returned ("NOPERM ..."; inside EXEC, in_exec
 * set, Redis's "ACLs rules changed..." text). */
const char *acl_check_call(client *c, const cmd_def *cmd, int in_exec);

/* Whether c's user may run cmd with argv, without an ACL LOG entry (the
 * scripts' redis.acl_check_cmd). */
int acl_allows(client *c, const cmd_def *cmd, garg *argv, int argc);

/* Whether a selector of c's user allows c's call of cmd and reads every
 * key (allkeys, or a read pattern "*"): SORT's BY and GET read keys no
 * key position names, as Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess. */
int acl_allows_any_key(client *c, const cmd_def *cmd);

/* AUTH / HELLO AUTH: 0 and c authenticated as user, or -1 (failure logged,
 * with argv[0] of c as the object). */
int acl_authenticate(client *c, const char *user, size_t ulen, const char *pass, size_t plen);

/* RESET: back to the default user, authenticated as a new connection is. */
void acl_client_reset(client *c);
/* The client is going away: drop its user reference. */
void acl_client_gone(client *c);
/* The user c is authenticated as (never NULL), and its name. Safe from any
 * thread under the client registry lock. */
struct acl_user *acl_client_user(const client *c);
const char *acl_user_name(const struct acl_user *u);

/* A user by name with a reference taken (acl_user_release), or NULL. */
struct acl_user *acl_user_get(const char *name, size_t len);
void acl_user_release(struct acl_user *u);

/* Client registry helpers, in cmd/client_cmd.c. */
/* Make u c's user (NULL: default) under the registry lock; returns the
 * previous one, whose reference the caller now owns. */
struct acl_user *client_swap_user(client *c, struct acl_user *u);
/* Disconnect the clients authenticated as u (self after its reply); with
 * pubsub_only, those in Pub/Sub mode only. Returns how many. */
long client_kill_user(const struct acl_user *u, client *self, int pubsub_only);
/* Disconnect the clients of u whose id is in ids[0..n) (self after its
 * reply). Returns how many. */
long client_kill_user_ids(const struct acl_user *u, client *self, const uint64_t *ids, size_t n);
/* In cmd/pubsub.c: the ids (malloc'd into *ids, count returned) of the
 * clients of u holding a subscription that allowed() refuses; is_pattern
 * is set for PSUBSCRIBE patterns. Runs under the Pub/Sub lock (allowed()
 * must take no lock). */
typedef int pubsub_allowed_fn(void *arg, const char *name, size_t n, int is_pattern);
size_t pubsub_denied_clients(const struct acl_user *u, pubsub_allowed_fn *allowed, void *arg, uint64_t **ids);
/* c's CLIENT LIST line without the newline (malloc'd). */
char *client_info_dup(const client *c);
#endif
