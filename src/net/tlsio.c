/* tlsio.c -- a TLS connection's reads, writes and handshake, on OpenSSL.
 *
 * The socket stays non-blocking and in its worker's event loop; OpenSSL
 * only turns bytes into records. The handshake runs step by step from the
 * connection's events (SSL_accept returning WANT_READ waits for the read
 * event, which is always on; WANT_WRITE adds the write event), so a slow
 * or silent peer holds nothing but its own connection. The same holds
 * after the handshake: an SSL_read that needs to write (a TLS 1.3 key
 * update answer) marks TLSIO_READ_WANTS_WRITE and adds the write event; an
 * SSL_write that needs to read marks TLSIO_WRITE_WANTS_READ; conn.c
 * retries the call from the other event. Decrypted bytes OpenSSL still
 * holds (SSL_has_pending: decrypted bytes, and whole records read ahead:
 * client connections read ahead, one recv for many records instead of
 * two per record) are read by conn.c before it leaves the read event, so
 * no request waits for a socket event that will not come. Writes are
 * partial (SSL_MODE_ENABLE_PARTIAL_WRITE, base/tls.c), so a large reply
 * goes out as the socket takes it, like a plaintext write. */
#include <errno.h>
#include <stdio.h>

#include <openssl/err.h>

#include "net/internal.h"
#include "base/log.h"
#include "base/tls.h"

static void want_write(conn *k) {
    if (!k->wev_on) {
        event_add(k->wev, NULL);
        k->wev_on = 1;
    }
}

int tlsio_handshake(conn *k, int first) {
    ERR_clear_error();
    int r = SSL_accept(k->ssl);
    if (r == 1) {
        k->tls_hs = 0;
        if (k->wev_on) {
            event_del(k->wev);
            k->wev_on = 0;
        }
        return 1;
    }
    int e = SSL_get_error(k->ssl, r);
    if (e == SSL_ERROR_WANT_READ) {
        if (k->wev_on) {
            event_del(k->wev);
            k->wev_on = 0;
        }
        return 0;
    }
    if (e == SSL_ERROR_WANT_WRITE) {
        want_write(k);
        return 0;
    }
    char eb[256];
    const char *why = tls_error_text(e, eb, sizeof(eb));
    if (first) log_warn("Error accepting a client connection: %s (conn: fd=%d)", why, k->c.fd);
    else log_warn("Error accepting a client connection: %s", why);
    ERR_clear_error();
    return -1;
}

ssize_t tlsio_read(conn *k, char *buf, size_t n) {
    ERR_clear_error();
    int r = SSL_read(k->ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
    if (r > 0) return r;
    int e = SSL_get_error(k->ssl, r);
    switch (e) {
    case SSL_ERROR_WANT_READ: errno = EAGAIN; return -1;
    case SSL_ERROR_WANT_WRITE:
        k->tls_want |= TLSIO_READ_WANTS_WRITE;
        want_write(k);
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN: return 0; /* close_notify */
    case SSL_ERROR_SYSCALL:
        if (!errno) return 0; /* EOF */
        /* fall through */
    default: {
        char eb[256];
        log_verbose("Reading from client: %s", tls_error_text(e, eb, sizeof(eb)));
        ERR_clear_error();
        errno = EIO;
        return -1;
    }
    }
}

ssize_t tlsio_write(conn *k, const char *buf, size_t n) {
    if (k->tls_hs) { /* output before the handshake ended: it waits for it */
        errno = EAGAIN;
        return -1;
    }
    ERR_clear_error();
    int r = SSL_write(k->ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
    if (r > 0) return r;
    int e = SSL_get_error(k->ssl, r);
    switch (e) {
    case SSL_ERROR_WANT_WRITE: errno = EAGAIN; return -1;
    case SSL_ERROR_WANT_READ:
        k->tls_want |= TLSIO_WRITE_WANTS_READ;
        errno = EAGAIN;
        return -1;
    default: {
        char eb[256];
        log_verbose("Error writing to client: %s", tls_error_text(e, eb, sizeof(eb)));
        ERR_clear_error();
        errno = EPIPE;
        return -1;
    }
    }
}

int tlsio_pending(conn *k) { return SSL_has_pending(k->ssl); }

void tlsio_free(conn *k) {
    if (!k->tls_hs) {
        ERR_clear_error();
        SSL_shutdown(k->ssl);
        ERR_clear_error();
    }
    SSL_free(k->ssl);
    k->ssl = NULL;
}
