/* tls.h -- the TLS contexts every listener and replication link shares.
 *
 * OpenSSL does the TLS; this module turns the tls-* directives into its
 * contexts, as Redis 7.0 does: one server context (every listener: RESP's
 * tls-port, the memcache and HTTP front-ends' memcache-tls-port and
 * http-tls-port) and, when tls-client-cert-file and tls-client-key-file
 * are set, a client context
 * for the connections this server opens (a replica to its primary);
 * without them those use the server context. The transports drive the
 * SSL objects themselves (net/ for client connections, cmd/repl for the
 * links).
 *
 * A CONFIG SET of any context setting rebuilds both contexts from the
 * current values once all of that CONFIG SET's values are stored; a build
 * that fails (a missing file, a key that does not match its certificate)
 * keeps the contexts in use and refuses the CONFIG SET with Redis's
 * message. Connections keep the context they were accepted with; new ones
 * get the new one. */
#ifndef GOBLIN_BASE_TLS_H
#define GOBLIN_BASE_TLS_H
#include <stddef.h>
#include <sys/types.h>

#include <openssl/ssl.h>

/* tls-auth-clients, in the order of the config table's enum. */
enum { TLS_AUTH_NO = 0, TLS_AUTH_YES = 1, TLS_AUTH_OPTIONAL = 2 };

/* Bind the tls-* directives and their commit hook (before config_load). */
void tls_config_register(void);
/* At start-up, after config_load: build the contexts when tls-port,
 * memcache-tls-port, http-tls-port, tls-replication or tls-cluster asks
 * for TLS. 0 ok (or nothing to do), -1 with Redis's log lines. */
int tls_init(void);
/* Build the contexts from the current values (the old ones stay on
 * failure). 0 ok, -1 with a log line saying why. */
int tls_configure(void);
int tls_configured(void);
/* The directives' current values. */
int tls_port(void);
int tls_replication(void);
int tls_cluster(void);
/* memcache-tls-port and http-tls-port (0: no such listener; start-up
 * only). */
int tls_memcache_port(void);
int tls_http_port(void);

/* A server-side SSL for an accepted socket, in accept state, with the
 * peer verification tls-auth-clients asks for, reading ahead (its reader
 * must go on while SSL_has_pending); NULL when TLS is not configured or
 * OpenSSL fails. */
SSL *tls_accept_new(int fd);
/* A client-side SSL for a connected socket (replication), in connect
 * state: the client context, else the server one. NULL as above. */
SSL *tls_connect_new(int fd);
/* The error text Redis shows for an SSL call that returned ret <= 0 with
 * SSL_get_error code err: OpenSSL's error string, strerror(errno) for a
 * system call error, "(null)" for a bare EOF. */
const char *tls_error_text(int err, char *buf, size_t len);

/* read(2) and write(2) over an established ssl, for the replication
 * links' own threads: bytes moved (>0); for a read 0 when the peer closed;
 * -1 with errno EAGAIN when OpenSSL waits for the socket (*want_other set
 * to 1 when it needs the other direction: a read that must write, a
 * write that must read), else errno as the system call left it or EIO. */
ssize_t tls_read(SSL *ssl, void *buf, size_t n, int *want_other);
ssize_t tls_write(SSL *ssl, const void *buf, size_t n, int *want_other);
/* All n bytes over ssl on a blocking socket: 0, or -1. */
int tls_write_all(SSL *ssl, const void *buf, size_t n);
/* The client handshake on a blocking socket (its timeouts apply): 0, or
 * -1 with Redis's error text in err. */
int tls_connect_blocking(SSL *ssl, char *err, size_t errlen);
/* Blocking I/O over ssl on a blocking socket with a deadline, as Redis's
 * connTLSSync* calls (the socket's SO_SNDTIMEO/SO_RCVTIMEO follow the time
 * left; timeout_ms <= 0: none), for MIGRATE. tls_sync_timeout sets both
 * to timeout_ms (before a tls_connect_blocking). tls_sync_write: the count
 * written (n when whole; less on an error or at the deadline, then errno,
 * ETIMEDOUT at the deadline). tls_sync_read_line: one line without its CR
 * LF into buf (cut to size - 1, NUL-terminated), its length, or -1 on EOF,
 * an error or the deadline; byte by byte, as sock_read_line. */
void tls_sync_timeout(SSL *ssl, long timeout_ms);
ssize_t tls_sync_write(SSL *ssl, const void *p, size_t n, long timeout_ms);
ssize_t tls_sync_read_line(SSL *ssl, char *buf, size_t size, long timeout_ms);
/* close_notify (best effort), then free. */
void tls_close(SSL *ssl);
/* Free with nothing sent: the connection goes on in another process (a
 * forked Lua debugging session), whose copy of the SSL speaks on it. */
void tls_free_silently(SSL *ssl);
#endif
