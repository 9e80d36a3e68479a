/* slowflush_fs.c -- a pass-through FUSE file system whose fsync and
 * fdatasync take a fixed extra time, for the appendfsync benchmarks.
 *
 * Usage: slowflush_fs BACKING_DIR MOUNTPOINT FLUSH_US [fuse options]
 *
 * Every operation is passed to the same path under BACKING_DIR; fsync and
 * fdatasync are passed through and then sleep FLUSH_US microseconds. The
 * count of flushes so far is the extended attribute user.slowflush.flushes
 * of any path in the mount (`getfattr -n user.slowflush.flushes MNT`). It
 * stands for a disk whose flush takes that long (a drive without a
 * power-safe write cache, a network volume): the virtual disk of a cloud VM
 * often acknowledges a flush in a fraction of a millisecond, too fast to
 * tell how a server's group commit behaves when the flush dominates a
 * request. Both servers under comparison run on the same mount, so both
 * pay the same FUSE cost per write and the same delay per flush.
 *
 * libfuse3's high-level API (Debian libfuse3-dev) does the protocol; the
 * handlers below are thin wrappers over the system calls. */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char backing[PATH_MAX];
static long flush_us;
static unsigned long flushes; /* atomic */

/* The backing path of p (which starts with '/'). */
static const char *real(const char *p, char *buf) {
    snprintf(buf, PATH_MAX, "%s%s", backing, p);
    return buf;
}

static int sf_getattr(const char *p, struct stat *st, struct fuse_file_info *fi) {
    char b[PATH_MAX];
    int r = fi ? fstat((int)fi->fh, st) : lstat(real(p, b), st);
    return r ? -errno : 0;
}

static int sf_readdir(const char *p, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags fl) {
    (void)off, (void)fi, (void)fl;
    char b[PATH_MAX];
    DIR *d = opendir(real(p, b));
    if (!d) return -errno;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st = {0};
        st.st_ino = e->d_ino;
        st.st_mode = (mode_t)e->d_type << 12;
        if (fill(buf, e->d_name, &st, 0, 0)) break;
    }
    closedir(d);
    return 0;
}

static int sf_mkdir(const char *p, mode_t m) {
    char b[PATH_MAX];
    return mkdir(real(p, b), m) ? -errno : 0;
}
static int sf_unlink(const char *p) {
    char b[PATH_MAX];
    return unlink(real(p, b)) ? -errno : 0;
}
static int sf_rmdir(const char *p) {
    char b[PATH_MAX];
    return rmdir(real(p, b)) ? -errno : 0;
}
static int sf_rename(const char *from, const char *to, unsigned int flags) {
    char a[PATH_MAX], b[PATH_MAX];
    if (flags) return -EINVAL;
    return rename(real(from, a), real(to, b)) ? -errno : 0;
}
static int sf_chmod(const char *p, mode_t m, struct fuse_file_info *fi) {
    char b[PATH_MAX];
    return (fi ? fchmod((int)fi->fh, m) : chmod(real(p, b), m)) ? -errno : 0;
}
static int sf_truncate(const char *p, off_t size, struct fuse_file_info *fi) {
    char b[PATH_MAX];
    return (fi ? ftruncate((int)fi->fh, size) : truncate(real(p, b), size)) ? -errno : 0;
}
static int sf_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi) {
    char b[PATH_MAX];
    return (fi ? futimens((int)fi->fh, tv) : utimensat(AT_FDCWD, real(p, b), tv, AT_SYMLINK_NOFOLLOW)) ? -errno : 0;
}

static int sf_open(const char *p, struct fuse_file_info *fi) {
    char b[PATH_MAX];
    int fd = open(real(p, b), fi->flags);
    if (fd < 0) return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}
static int sf_create(const char *p, mode_t m, struct fuse_file_info *fi) {
    char b[PATH_MAX];
    int fd = open(real(p, b), fi->flags, m);
    if (fd < 0) return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}
static int sf_read(const char *p, char *buf, size_t n, off_t off, struct fuse_file_info *fi) {
    (void)p;
    ssize_t r = pread((int)fi->fh, buf, n, off);
    return r < 0 ? -errno : (int)r;
}
static int sf_write(const char *p, const char *buf, size_t n, off_t off, struct fuse_file_info *fi) {
    (void)p;
    ssize_t r = pwrite((int)fi->fh, buf, n, off);
    return r < 0 ? -errno : (int)r;
}
static int sf_statfs(const char *p, struct statvfs *st) {
    char b[PATH_MAX];
    return statvfs(real(p, b), st) ? -errno : 0;
}
static int sf_release(const char *p, struct fuse_file_info *fi) {
    (void)p;
    close((int)fi->fh);
    return 0;
}

static void slow(void) {
    __atomic_add_fetch(&flushes, 1, __ATOMIC_RELAXED);
    struct timespec ts = {flush_us / 1000000, (flush_us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
static int sf_fsync(const char *p, int datasync, struct fuse_file_info *fi) {
    (void)p;
    int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
    if (r) return -errno;
    slow();
    return 0;
}
static int sf_fsyncdir(const char *p, int datasync, struct fuse_file_info *fi) {
    (void)datasync, (void)fi;
    char b[PATH_MAX];
    int fd = open(real(p, b), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    int r = fsync(fd) ? -errno : 0;
    close(fd);
    if (!r) slow();
    return r;
}

static int sf_getxattr(const char *p, const char *name, char *val, size_t size) {
    (void)p;
    if (strcmp(name, "user.slowflush.flushes")) return -ENODATA;
    char b[32];
    int n = snprintf(b, sizeof(b), "%lu", __atomic_load_n(&flushes, __ATOMIC_RELAXED));
    if (size == 0) return n;
    if (size < (size_t)n) return -ERANGE;
    memcpy(val, b, (size_t)n);
    return n;
}

static void *sf_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    (void)conn;
    cfg->use_ino = 1;
    cfg->attr_timeout = 0; /* sizes as the backing file has them */
    cfg->entry_timeout = 0;
    cfg->negative_timeout = 0;
    return NULL;
}

static const struct fuse_operations ops = {
    .init = sf_init,
    .getattr = sf_getattr,
    .readdir = sf_readdir,
    .mkdir = sf_mkdir,
    .unlink = sf_unlink,
    .rmdir = sf_rmdir,
    .rename = sf_rename,
    .chmod = sf_chmod,
    .truncate = sf_truncate,
    .utimens = sf_utimens,
    .open = sf_open,
    .create = sf_create,
    .read = sf_read,
    .write = sf_write,
    .statfs = sf_statfs,
    .release = sf_release,
    .fsync = sf_fsync,
    .fsyncdir = sf_fsyncdir,
    .getxattr = sf_getxattr,
};

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BACKING_DIR MOUNTPOINT FLUSH_US [fuse options]\n", argv[0]);
        return 2;
    }
    if (!realpath(argv[1], backing)) {
        perror(argv[1]);
        return 2;
    }
    flush_us = atol(argv[3]);
    /* fuse_main sees: prog MOUNTPOINT [options] */
    char **fa = calloc((size_t)argc, sizeof(char *));
    int fn = 0;
    fa[fn++] = argv[0];
    fa[fn++] = argv[2];
    for (int i = 4; i < argc; i++) fa[fn++] = argv[i];
    return fuse_main(fn, fa, &ops, NULL);
}
