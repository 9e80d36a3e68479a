/* fdio.h -- whole writes to a descriptor. */
#ifndef GOBLIN_UTIL_FDIO_H
#define GOBLIN_UTIL_FDIO_H
#include <stddef.h>

/* Write all n bytes of p to fd (blocking descriptors; EINTR retried).
 * 0, or -1 with errno when a write failed or wrote nothing. */
int fd_write_all(int fd, const void *p, size_t n);
#endif
