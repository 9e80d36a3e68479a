/* keyspec.h -- key extraction from the command table's key specs (see
 * keyspec.c). */
#ifndef GOBLIN_CMD_KEYSPEC_H
#define GOBLIN_CMD_KEYSPEC_H
#include "cmd/command.h"

enum {
    KF_RO = 1 << 0,
    KF_RW = 1 << 1,
    KF_OW = 1 << 2,
    KF_RM = 1 << 3,
    KF_ACCESS = 1 << 4,
    KF_UPDATE = 1 << 5,
    KF_INSERT = 1 << 6,
    KF_DELETE = 1 << 7,
    KF_NOT_KEY = 1 << 8,
    KF_INCOMPLETE = 1 << 9,
    KF_VARIABLE_FLAGS = 1 << 10,
};
/* In the order Redis prints them. */
extern const char *const keyflag_names[];
#define NKEYFLAGS 11

enum { BS_UNKNOWN, BS_INDEX, BS_KEYWORD };
enum { FK_UNKNOWN, FK_RANGE, FK_KEYNUM };

typedef struct keyspec {
    unsigned flags;
    int bs;
    long long index;                 /* BS_INDEX */
    const char *kw;                  /* BS_KEYWORD */
    size_t kwlen;
    long long startfrom;
    int fk;
    long long lastkey, keystep, limit;  /* FK_RANGE (keystep shared) */
    long long keynumidx, firstkey;      /* FK_KEYNUM */
} keyspec;

typedef struct keyref {
    int pos;
    unsigned flags;
} keyref;

/* The key specs of d, parsed from its metadata (malloc'd; *nspecs set). */
keyspec *keyspec_parse(const cmd_def *d, int *nspecs);
/* The native extractor of d, NULL when its specs suffice. */
typedef int keyspec_native_fn(garg *argv, int argc, keyref *out);
keyspec_native_fn *keyspec_native(const cmd_def *d);
/* The keys of a call (argv[0] is the command name) with their spec flags;
 * *out is malloc'd (caller frees, also when the count is 0). */
int keyspec_call_keys(const cmd_def *d, const keyspec *specs, int nspecs, garg *argv, int argc, keyref **out);

/* The keys of a call and how each is used: CMD_KEY_READ when its value is
 * read, CMD_KEY_WRITE when it is inserted, updated or deleted (Redis's
 * key-spec flags). Returns the count; *out is malloc'd (caller frees, also
 * when the count is 0). For ACL key checks. */
enum { CMD_KEY_READ = 1, CMD_KEY_WRITE = 2 };
typedef struct cmd_keyacc {
    int pos;
    int access;
} cmd_keyacc;
int cmd_call_keys(const cmd_def *d, garg *argv, int argc, cmd_keyacc **out);
#endif
