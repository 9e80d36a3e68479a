/* sockio.h -- blocking TCP client sockets with a deadline on every step:
 * the connect, a whole write, one reply line. For the server's own
 * outgoing links that run on a worker (MIGRATE) or a thread of their own
 * (the replica's link to its primary). */
#ifndef GOBLIN_UTIL_SOCKIO_H
#define GOBLIN_UTIL_SOCKIO_H
#include <stddef.h>
#include <sys/types.h>

/* A blocking socket connected to host:port (TCP_NODELAY set), trying each
 * address getaddrinfo gives within timeout_ms in all (<= 0: no limit).
 * The fd; -1 with errno (ETIMEDOUT when the time ran out) and a message
 * in err; -2 likewise when the last address refused only after the
 * connect had started (ECONNREFUSED found once the socket was writable:
 * Redis's blocking connect takes that for a connection and fails on the
 * first write, which MIGRATE reproduces). */
int sock_connect(const char *host, int port, long timeout_ms, char *err, size_t errlen);
/* sock_connect from a local address (source, numeric; NULL or "": any, the
 * kernel's choice): the socket is bound to it before the connect, and a
 * source that cannot be bound fails the address ("bind: ..." in err). */
int sock_connect_from(const char *host, int port, const char *source, long timeout_ms, char *err, size_t errlen);
/* Bind fd, a socket of family, to the numeric address source (port 0).
 * 0, or -1 with errno and a message in err. */
int sock_bind_source(int fd, int family, const char *source, char *err, size_t errlen);
/* Write n bytes within timeout_ms: the count written (n when whole; less
 * on an error or at the deadline, then errno, ETIMEDOUT at the deadline). */
ssize_t sock_write(int fd, const void *p, size_t n, long timeout_ms);
/* Read one line within timeout_ms, without its CR LF, into buf (cut to
 * size - 1 bytes, NUL-terminated). Its length, or -1 on EOF, an error or
 * the deadline (errno ETIMEDOUT). Byte by byte: nothing after the line is
 * taken from the socket. */
ssize_t sock_read_line(int fd, char *buf, size_t size, long timeout_ms);
/* The address of fd's peer (peer != 0) or of its own end, as Redis writes
 * one in CLIENT LIST: ip:port, [ip6]:port. 0, or -1 (buf empty). */
int sock_addr_text(int fd, int peer, char *buf, size_t n);
/* 1 when addr (ip:port or [ip6]:port, as sock_addr_text writes it) is
 * 127.0.0.1 or ::1: Redis's islocalClient, which protected mode and the
 * "local" value of enable-debug-command and enable-protected-configs use
 * (other 127/8 addresses are not local to it). */
int sock_addr_is_local(const char *addr);
#endif
