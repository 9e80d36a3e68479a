/* fdio.c -- whole writes to a descriptor (see fdio.h). */
#include "util/fdio.h"

#include <errno.h>
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
