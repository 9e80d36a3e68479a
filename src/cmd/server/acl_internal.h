/* acl_internal.h -- what the ACL files share; the rest of the server sees
 * acl.h only.
 *
 *   acl_rules.c  the command table as ACLs see it, selectors, users and the
 *                user set, rule parsing and describing
 *   acl_check.c  the permission check, AUTH, the client's user,
 *                requirepass, the ACL log and ACL LOG
 *   acl_file.c   "user" directives and the ACL file: start-up, ACL LOAD,
 *                ACL SAVE
 *   acl_cmd.c    the ACL command, the family's init and shutdown
 *
 * Concurrency (docs/locking.md): users, their rules and the user set are
 * guarded by acl_lock, a leaf rwlock: read by AUTH and by the permission
 * check of users that are not allowed everything (those are recognised by
 * an atomic flag without the lock), written by the ACL command. Every client
 * authenticated as a user holds a reference on it, and the user set holds
 * one, so a deleted user stays valid until its clients (which are killed)
 * are gone. The default user is static and never freed; ACL LOAD copies the
 * new default rules into it. The ACL log has its own leaf lock. */
#ifndef GOBLIN_CMD_ACL_INTERNAL_H
#define GOBLIN_CMD_ACL_INTERNAL_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/server/acl.h"
#include "util/sha256.h"

/* ---- Flags and limits ---------------------------------------------------- */

enum { SEL_ROOT = 1, SEL_ALLKEYS = 2, SEL_ALLCHANNELS = 4, SEL_ALLCOMMANDS = 8 };
enum { U_ENABLED = 1, U_DISABLED = 2, U_NOPASS = 4, U_SKIP_SANITIZE = 8, U_SANITIZE = 16 };
enum { KP_READ = 1, KP_WRITE = 2, KP_ALL = 3 };
enum { CTX_TOPLEVEL = 0, CTX_MULTI = 1, CTX_LUA = 2 }; /* ACL LOG context, as Redis: a script's call is "lua" */

#define ACL_MAX_CMDS 1024
#define ACL_WORDS (ACL_MAX_CMDS / 64)

/* Errors of a single rule; messages as Redis's ACLSetUserStringError. */
enum { OPE_OK, OPE_SYNTAX, OPE_NOENT, OPE_KEYSTAR, OPE_CHANSTAR, OPE_NOPASS, OPE_BADHASH, OPE_CHILD };
const char *acl_op_error(int e);

/* Command categories, in Redis's order: ACL CAT lists them so, and the
 * describer tries them so. */
#define ACL_NCATS 21
extern const char *const acl_cat_names[ACL_NCATS];
/* Id of a category name, or -1. */
int acl_cat_index(const char *p, size_t n);

/* User flags as ACL LIST and GETUSER name them. */
typedef struct acl_flag_name {
    const char *name;
    uint32_t flag;
} acl_flag_name;
#define ACL_NUSERFLAGS 5
extern const acl_flag_name acl_user_flags[ACL_NUSERFLAGS];

/* ---- Users and selectors -------------------------------------------------- */

typedef struct keypat {
    char *p;
    int flags;  /* KP_* */
} keypat;

typedef struct acl_sel {
    uint32_t flags;
    int future;                /* +@all was the last all-rule: may run any command */
    uint64_t bits[ACL_WORDS];
    char ***firstargs;         /* NULL, or per command NULL or a NULL-terminated list */
    keypat *pats;
    int npats;
    char **chans;
    int nchans;
} acl_sel;

typedef struct acl_user {
    char *name;                /* immutable while the user exists */
    size_t namelen;
    uint32_t flags;
    char (*pw)[SHA256_HEX_LEN + 1];
    int npw;
    acl_sel *sel;              /* sel[0] is the root selector */
    int nsel;
    int refs;                  /* atomic: the user set + authenticated clients */
    int unrestricted;          /* atomic: every command, key and channel allowed */
} acl_user;

extern pthread_rwlock_t acl_lock;
extern acl_user acl_default_user;
extern acl_user **acl_set;     /* sorted by name, bytewise */
extern int acl_nset, acl_capset;
/* Default-user state read on every connection and command without a lock. */
extern int acl_def_requires_auth, acl_def_nopass;

/* ---- The command table as ACLs see it -------------------------------------- */

extern const cmd_def *acl_ctab;
extern int acl_ncmds;
extern uint32_t acl_cmd_cats[ACL_MAX_CMDS];   /* category bits per command */
extern int acl_id_publish, acl_id_spublish, acl_id_subscribe, acl_id_ssubscribe, acl_id_psubscribe;
/* Index cmd_table() (once, at family init). */
void acl_cmd_index_init(void);

static inline int acl_cmd_id(const cmd_def *d) { return (int)(d - acl_ctab); }
static inline int acl_bit_get(const uint64_t *b, int id) { return (int)((b[id >> 6] >> (id & 63)) & 1); }

/* ---- Rules ------------------------------------------------------------------ */

/* Whether a name holds a space or NUL (refused in user names and patterns). */
int acl_has_space(const char *p, size_t n);

/* A growable list of words with their lengths. */
typedef struct argv_t {
    char **v;
    size_t *l;
    int n, cap;
} argv_t;
void acl_argv_push(argv_t *a, const char *p, size_t n);
void acl_argv_free(argv_t *a);
/* Rules spread over several words ("(+get", "~k)") joined into one "(...)"
 * rule. -1 (and *bad the index of the opening word) when a parenthesis is
 * not closed. */
int acl_merge_selectors(char **v, const size_t *l, int n, argv_t *out, int *bad);

/* A user: name copied, off, no password, a root selector allowing no
 * command or key. */
void acl_user_init(acl_user *u, const char *name, size_t len);
/* A new user for the set, with the set's reference. */
acl_user *acl_user_new(const char *name, size_t len);
void acl_user_copy_rules(acl_user *dst, const acl_user *src);
void acl_user_temp_free(acl_user *u);
/* Apply one rule; OPE_OK or the error. */
int acl_user_op(acl_user *u, const char *op, size_t n);
int acl_user_apply(acl_user *u, char **v, const size_t *l, int n, int *bad);
/* +@all ~* &* on nopass. */
void acl_default_user_reset(acl_user *u);
void acl_user_derive(acl_user *u);
void acl_user_ref(acl_user *u);
void acl_user_unref(acl_user *u);

/* The user set, under acl_lock. Position of name, or -(insertion point)-1. */
int acl_user_pos(const char *name, size_t len);
acl_user *acl_user_find(const char *name, size_t len);
void acl_set_insert(acl_user *u);
void acl_set_remove(int i);

/* ---- Describing rules ----------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;
void acl_sb_add(sbuf *b, const char *p, size_t n);
void acl_sb_cat(sbuf *b, const char *s);
void acl_describe_rules(const acl_sel *s, sbuf *b);
void acl_describe_pattern(const keypat *k, sbuf *b);
void acl_describe_user(const acl_user *u, sbuf *b);

/* ---- Checks and the log (acl_check.c) ---------------------------------------- */

/* Whether channel ch matches a glob of pats (a PSUBSCRIBE pattern, literal,
 * compared as a string). */
int acl_chan_matches(char *const *pats, size_t npats, const char *ch, size_t n, int literal);
/* ACL_OK, or the most relevant denial and the argument at fault. Under the
 * read lock. */
int acl_user_check(const acl_user *u, const cmd_def *cmd, garg *argv, int argc, int *pos);
/* The default user follows requirepass (the config hook's apply). */
void acl_requirepass_apply(const char *pass);
int64_t acl_wall_ms(void);
void acl_log_free(void);
void aclLogCommand(client *c);

/* ---- Users from configuration (acl_file.c) ------------------------------------ */

/* "user" directives, then the ACL file; exits on errors, as Redis does. */
void acl_load_at_startup(void);
void aclLoadCommand(client *c);
void aclSaveCommand(client *c);
#endif
