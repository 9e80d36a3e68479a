/* aof_internal.h -- what the AOF modules share: the manifest (its in-memory
 * form, reading, formatting, the atomic write) and the file names. Not for
 * use outside persist/aof*.c. */
#ifndef GOBLIN_PERSIST_AOF_INTERNAL_H
#define GOBLIN_PERSIST_AOF_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#define AOF_NAME_MAX 512

typedef struct aof_file {
    char name[AOF_NAME_MAX];
    long long seq;
    char type;                /* 'b', 'h' or 'i' */
} aof_file;

/* Invariant: at most one base; incr seqs strictly increasing. */
typedef struct aof_manifest {
    aof_file base;
    int has_base;
    aof_file *hist, *incr;
    int nhist, nincr;
    long long base_seq, incr_seq; /* the highest sequence numbers in use */
} aof_manifest;

void aofm_init(aof_manifest *m);
void aofm_free(aof_manifest *m);
int aofm_copy(aof_manifest *dst, const aof_manifest *src);
/* Parse path. 0 ok; -1 with err (Redis's text, the bad line named). */
int aofm_read(const char *path, aof_manifest *m, char *err, size_t errlen);
/* Temp file, fsync, rename over dir/<appendfilename>.manifest, fsync of the
 * directory. 0 ok; -1 with err. */
int aofm_write(const char *dir, const char *fname, const aof_manifest *m, char *err, size_t errlen);
/* Add a new incr file (seq = incr_seq + 1); returns its entry. */
aof_file *aofm_new_incr(aof_manifest *m, const char *fname);
/* Make a new base (the old one, if any, becomes history first). */
aof_file *aofm_new_base(aof_manifest *m, const char *fname, int rdb);
/* After a rewrite: the first n incr files become history, at its head in
 * their order (before the old base aofm_new_base put there), as Redis. */
void aofm_incr_to_history(aof_manifest *m, int n);

/* dir/name into buf. */
void aof_path(char *buf, size_t len, const char *dir, const char *name);
/* fsync of the directory holding path (or of dir itself when it is one). */
int aof_fsync_dir(const char *dir);

/* Load the files of m from dir in order (aof_load.c): the base (RDB
 * snapshot or commands), then the incr files, replaying commands through
 * fn. A torn last command of the last file is cut off when load_truncated
 * is set (logged as Redis does), fatal otherwise. progress (optional)
 * hears the bytes read so far of the total now and then. *sizes: the base
 * file's and all files' bytes. 0 ok; -1 with err. */
int aof_load_files(const char *dir, const aof_manifest *m, int load_truncated,
                   int (*fn)(int, int, const char *const *, const size_t *, char *, size_t),
                   void (*progress)(uint64_t loaded, uint64_t total), uint64_t *base_size, uint64_t *total_size,
                   char *err, size_t errlen);

/* Write the dataset at path as commands (aof_rewrite.c): the base of a
 * rewrite with aof-use-rdb-preamble no. The caller is a fork child or
 * holds the keyspace write lock. incremental_fsync: fdatasync every 4 MB;
 * timestamp: a #TS annotation first. 0, or -1 with err (path removed). */
int aof_rewrite_commands(const char *path, int incremental_fsync, int timestamp, char *err, size_t errlen);
#endif
