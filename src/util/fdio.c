/* fdio.c -- whole writes to a descriptor (see fdio.h). */
#include "util/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int fd_write_all(int fd, const void *p, size_t n) {
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int fd_pwrite_all(int fd, const void *p, size_t n, off_t off) {
    const char *s = p;
    while (n) {
        ssize_t w = pwrite(fd, s, n, off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return -1;
        }
        s += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

int fsync_path(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}
