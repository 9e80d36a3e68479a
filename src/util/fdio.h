/* fdio.h -- whole writes to a descriptor, fsync of a path. */
#ifndef GOBLIN_UTIL_FDIO_H
#define GOBLIN_UTIL_FDIO_H
#include <stddef.h>
#include <sys/types.h>

/* Write all n bytes of p to fd (blocking descriptors; EINTR retried).
 * 0, or -1 with errno when a write failed or wrote nothing. */
int fd_write_all(int fd, const void *p, size_t n);
/* The same at offset off on (pwrite: the file offset is left alone). */
int fd_pwrite_all(int fd, const void *p, size_t n, off_t off);
/* Open path with flags (O_RDONLY, O_RDONLY | O_DIRECTORY) and fsync it:
 * 0, or -1 with errno. */
int fsync_path(const char *path, int flags);
#endif
