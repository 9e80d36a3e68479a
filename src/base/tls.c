/* tls.c -- the tls-* directives and the OpenSSL contexts built from them.
 *
 * The settings are bound to tls_set below and read whenever a context is
 * built. A build makes a complete new server context (and client context)
 * before anything is replaced, so a failure leaves the running contexts
 * untouched (Redis's tlsConfigure is atomic the same way). The pointers
 * are swapped under ctx_lock; an SSL takes a reference on its context
 * (SSL_new), so a swapped-out context lives until its last connection
 * ends. Context options follow Redis 7.0: no SSLv2/v3, no compression, no
 * client-initiated renegotiation, partial writes and moving write buffers,
 * the protocols of tls-protocols (default TLSv1.2 and TLSv1.3), the
 * session cache of tls-session-caching. One server context serves every
 * TLS listener: tls-port (RESP), memcache-tls-port and http-tls-port (the
 * front-ends), so a reload reaches them all. */
#include "base/tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include "base/config.h"
#include "base/log.h"

static struct {
    int port;
    char *cert_file, *key_file, *key_file_pass;
    char *client_cert_file, *client_key_file, *client_key_file_pass;
    char *dh_params_file, *ca_cert_file, *ca_cert_dir;
    int auth_clients;
    char *protocols, *ciphers, *ciphersuites;
    int prefer_server_ciphers, session_caching, session_cache_size, session_cache_timeout;
    int replication, cluster;
    long long memcache_port, http_port; /* the front-ends' TLS listeners */
} tls_set;

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static SSL_CTX *server_ctx, *client_ctx;

enum { PROTO_TLSV1 = 1, PROTO_TLSV1_1 = 2, PROTO_TLSV1_2 = 4, PROTO_TLSV1_3 = 8 };

/* An empty string is no value, as Redis's EMPTY_STRING_IS_NULL. */
static const char *opt(const char *s) { return s && s[0] ? s : NULL; }

static int parse_protocols(const char *s) {
    if (!opt(s)) return PROTO_TLSV1_2 | PROTO_TLSV1_3;
    int p = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(t, "tlsv1")) p |= PROTO_TLSV1;
        else if (!strcasecmp(t, "tlsv1.1")) p |= PROTO_TLSV1_1;
        else if (!strcasecmp(t, "tlsv1.2")) p |= PROTO_TLSV1_2;
        else if (!strcasecmp(t, "tlsv1.3")) p |= PROTO_TLSV1_3;
        else {
            log_warn("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and "
                     "'TLSv1.3'.");
            p = -1;
            break;
        }
    }
    free(copy);
    return p;
}

static int password_cb(char *buf, int size, int rwflag, void *u) {
    (void)rwflag;
    const char *pass = u;
    if (!pass) return -1;
    size_t n = strlen(pass);
    if (n > (size_t)size) return -1;
    memcpy(buf, pass, n);
    return (int)n;
}

/* What the server and client contexts share; client picks the
 * tls-client-* certificate and key. */
static SSL_CTX *base_ctx(int protocols, int client) {
    const char *cert = client ? tls_set.client_cert_file : tls_set.cert_file;
    const char *key = client ? tls_set.client_key_file : tls_set.key_file;
    const char *pass = opt(client ? tls_set.client_key_file_pass : tls_set.key_file_pass);
    char eb[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    if (!ctx) return NULL;
    SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS |
                                 SSL_OP_NO_COMPRESSION);
    if (!(protocols & PROTO_TLSV1)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1);
    if (!(protocols & PROTO_TLSV1_1)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_1);
    if (!(protocols & PROTO_TLSV1_2)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_2);
    if (!(protocols & PROTO_TLSV1_3)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_3);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)pass);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        ERR_error_string_n(ERR_get_error(), eb, sizeof(eb));
        log_warn("Failed to load certificate: %s: %s", cert, eb);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        ERR_error_string_n(ERR_get_error(), eb, sizeof(eb));
        log_warn("Failed to load private key: %s: %s", key, eb);
        goto fail;
    }
    const char *cafile = opt(tls_set.ca_cert_file), *cadir = opt(tls_set.ca_cert_dir);
    if ((cafile || cadir) && SSL_CTX_load_verify_locations(ctx, cafile, cadir) <= 0) {
        ERR_error_string_n(ERR_get_error(), eb, sizeof(eb));
        log_warn("Failed to configure CA certificate(s) file/directory: %s", eb);
        goto fail;
    }
    if (opt(tls_set.ciphers) && !SSL_CTX_set_cipher_list(ctx, tls_set.ciphers)) {
        log_warn("Failed to configure ciphers: %s", tls_set.ciphers);
        goto fail;
    }
    if (opt(tls_set.ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, tls_set.ciphersuites)) {
        log_warn("Failed to configure ciphersuites: %s", tls_set.ciphersuites);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

static int load_dh_params(SSL_CTX *ctx, const char *path) {
    char eb[256];
    FILE *f = fopen(path, "r");
    if (!f) {
        log_warn("Failed to load %s: %s", path, strerror(errno));
        return -1;
    }
    EVP_PKEY *pkey = NULL;
    OSSL_DECODER_CTX *d = OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, "DH",
                                                        OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, NULL, NULL);
    if (!d) {
        log_warn("No decoder for DH params.");
        fclose(f);
        return -1;
    }
    int ok = OSSL_DECODER_from_fp(d, f);
    OSSL_DECODER_CTX_free(d);
    fclose(f);
    if (!ok) {
        log_warn("%s: failed to read DH params.", path);
        return -1;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {
        ERR_error_string_n(ERR_get_error(), eb, sizeof(eb));
        log_warn("Failed to load DH params file: %s: %s", path, eb);
        EVP_PKEY_free(pkey);
        return -1;
    }
    return 0;
}

int tls_configure(void) {
    SSL_CTX *ctx = NULL, *cctx = NULL;
    if (!opt(tls_set.cert_file)) {
        log_warn("No tls-cert-file configured!");
        return -1;
    }
    if (!opt(tls_set.key_file)) {
        log_warn("No tls-key-file configured!");
        return -1;
    }
    if ((tls_set.auth_clients != TLS_AUTH_NO || tls_set.cluster || tls_set.replication) &&
        !opt(tls_set.ca_cert_file) && !opt(tls_set.ca_cert_dir)) {
        log_warn("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication "
                 "or tls-auth-clients are enabled!");
        return -1;
    }
    int protocols = parse_protocols(tls_set.protocols);
    if (protocols < 0) return -1;
    ERR_clear_error();
    if (!(ctx = base_ctx(protocols, 0))) goto fail;
    if (tls_set.session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, tls_set.session_cache_size);
        SSL_CTX_set_timeout(ctx, tls_set.session_cache_timeout);
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"redis", 5);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    /* Client-initiated renegotiation is refused: OpenSSL 3 refuses it
     * unless SSL_OP_ALLOW_CLIENT_RENEGOTIATION is set; older ones have
     * this option. */
#ifdef SSL_OP_NO_CLIENT_RENEGOTIATION
    SSL_CTX_set_options(ctx, SSL_OP_NO_CLIENT_RENEGOTIATION);
#endif
    SSL_CTX_set_options(ctx, SSL_OP_SINGLE_DH_USE);
    if (tls_set.prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (opt(tls_set.dh_params_file)) {
        if (load_dh_params(ctx, tls_set.dh_params_file) != 0) goto fail;
    } else {
        SSL_CTX_set_dh_auto(ctx, 1);
    }
    if (opt(tls_set.client_cert_file) && opt(tls_set.client_key_file) && !(cctx = base_ctx(protocols, 1)))
        goto fail;
    pthread_mutex_lock(&ctx_lock);
    SSL_CTX *old = server_ctx, *cold = client_ctx;
    server_ctx = ctx;
    client_ctx = cctx;
    pthread_mutex_unlock(&ctx_lock);
    SSL_CTX_free(old);
    SSL_CTX_free(cold);
    return 0;
fail:
    SSL_CTX_free(ctx);
    SSL_CTX_free(cctx);
    return -1;
}

int tls_configured(void) {
    pthread_mutex_lock(&ctx_lock);
    int r = server_ctx != NULL;
    pthread_mutex_unlock(&ctx_lock);
    return r;
}

int tls_port(void) { return __atomic_load_n(&tls_set.port, __ATOMIC_RELAXED); }
int tls_replication(void) { return __atomic_load_n(&tls_set.replication, __ATOMIC_RELAXED); }
int tls_cluster(void) { return __atomic_load_n(&tls_set.cluster, __ATOMIC_RELAXED); }
int tls_memcache_port(void) { return (int)tls_set.memcache_port; }
int tls_http_port(void) { return (int)tls_set.http_port; }

static int tls_wanted(void) {
    return tls_set.port || tls_set.replication || tls_set.cluster || tls_set.memcache_port || tls_set.http_port;
}

/* The commit of every context setting, as Redis's applyTlsCfg: rebuild
 * when TLS is in use. */
static int commit_ctx(char *err, size_t errlen) {
    if (tls_wanted() && tls_configure() != 0) {
        snprintf(err, errlen, "Unable to update TLS configuration. Check server logs.");
        return -1;
    }
    return 0;
}

static const config_hook ctx_hook = {.commit = commit_ctx};

void tls_config_register(void) {
    static const struct {
        const char *name;
        char **v;
    } strs[] = {
        {"tls-cert-file", &tls_set.cert_file},
        {"tls-key-file", &tls_set.key_file},
        {"tls-key-file-pass", &tls_set.key_file_pass},
        {"tls-client-cert-file", &tls_set.client_cert_file},
        {"tls-client-key-file", &tls_set.client_key_file},
        {"tls-client-key-file-pass", &tls_set.client_key_file_pass},
        {"tls-dh-params-file", &tls_set.dh_params_file},
        {"tls-ca-cert-file", &tls_set.ca_cert_file},
        {"tls-ca-cert-dir", &tls_set.ca_cert_dir},
        {"tls-protocols", &tls_set.protocols},
        {"tls-ciphers", &tls_set.ciphers},
        {"tls-ciphersuites", &tls_set.ciphersuites},
    };
    static const struct {
        const char *name;
        int *v;
        int ctx; /* part of the context: rebuilt on change */
    } ints[] = {
        {"tls-port", &tls_set.port, 0},
        {"tls-auth-clients", &tls_set.auth_clients, 0},
        {"tls-prefer-server-ciphers", &tls_set.prefer_server_ciphers, 1},
        {"tls-session-caching", &tls_set.session_caching, 1},
        {"tls-session-cache-size", &tls_set.session_cache_size, 1},
        {"tls-session-cache-timeout", &tls_set.session_cache_timeout, 1},
        {"tls-replication", &tls_set.replication, 1},
        {"tls-cluster", &tls_set.cluster, 1},
    };
    int rc = 0;
    /* Start-up only, as the front-ends' plaintext ports. */
    rc |= config_bind_ll("memcache-tls-port", &tls_set.memcache_port);
    rc |= config_bind_ll("http-tls-port", &tls_set.http_port);
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        rc |= config_bind_string(strs[i].name, strs[i].v);
        rc |= config_register_hook(strs[i].name, &ctx_hook);
    }
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        rc |= config_bind_int(ints[i].name, ints[i].v);
        if (ints[i].ctx) rc |= config_register_hook(ints[i].name, &ctx_hook);
    }
    if (rc) {
        fprintf(stderr, "goblin-core: the TLS settings do not match the config table\n");
        abort();
    }
}

int tls_init(void) {
    OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
    if (!RAND_poll()) log_warn("OpenSSL: Failed to seed random number generator.");
    if (tls_wanted() && tls_configure() != 0) {
        log_warn("Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    return 0;
}

SSL *tls_accept_new(int fd) {
    pthread_mutex_lock(&ctx_lock);
    SSL *ssl = server_ctx ? SSL_new(server_ctx) : NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (!ssl) return NULL;
    switch (__atomic_load_n(&tls_set.auth_clients, __ATOMIC_RELAXED)) {
    case TLS_AUTH_NO: SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL); break;
    case TLS_AUTH_OPTIONAL: SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL); break;
    default: SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL); break;
    }
    SSL_set_fd(ssl, fd);
    SSL_set_accept_state(ssl);
    /* Records read ahead: net/ reads while SSL_has_pending says so. */
    SSL_set_read_ahead(ssl, 1);
    return ssl;
}

SSL *tls_connect_new(int fd) {
    pthread_mutex_lock(&ctx_lock);
    SSL_CTX *ctx = client_ctx ? client_ctx : server_ctx;
    SSL *ssl = ctx ? SSL_new(ctx) : NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (!ssl) return NULL;
    SSL_set_fd(ssl, fd);
    SSL_set_connect_state(ssl);
    return ssl;
}

const char *tls_error_text(int err, char *buf, size_t len) {
    if (err == SSL_ERROR_SYSCALL) {
        if (!errno) return "(null)";
        snprintf(buf, len, "%s", strerror(errno));
        return buf;
    }
    ERR_error_string_n(ERR_get_error(), buf, len);
    return buf;
}

static ssize_t io_result(SSL *ssl, int r, int want, int *want_other) {
    int e = SSL_get_error(ssl, r);
    if (want_other) *want_other = 0;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        if (want_other) *want_other = e != want;
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && !errno)) {
        ERR_clear_error();
        if (want == SSL_ERROR_WANT_READ) return 0;
        errno = EPIPE;
        return -1;
    }
    if (e != SSL_ERROR_SYSCALL) errno = EIO;
    ERR_clear_error();
    return -1;
}

ssize_t tls_read(SSL *ssl, void *buf, size_t n, int *want_other) {
    ERR_clear_error();
    int r = SSL_read(ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
    return r > 0 ? r : io_result(ssl, r, SSL_ERROR_WANT_READ, want_other);
}

ssize_t tls_write(SSL *ssl, const void *buf, size_t n, int *want_other) {
    ERR_clear_error();
    int r = SSL_write(ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
    return r > 0 ? r : io_result(ssl, r, SSL_ERROR_WANT_WRITE, want_other);
}

int tls_write_all(SSL *ssl, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = tls_write(ssl, p, n, NULL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int tls_connect_blocking(SSL *ssl, char *err, size_t errlen) {
    ERR_clear_error();
    int r = SSL_connect(ssl);
    if (r == 1) return 0;
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) snprintf(err, errlen, "%s", strerror(ETIMEDOUT));
    else {
        char eb[256];
        snprintf(err, errlen, "%s", tls_error_text(e, eb, sizeof(eb)));
    }
    ERR_clear_error();
    return -1;
}

static long long sync_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tls_sync_timeout(SSL *ssl, long timeout_ms) {
    struct timeval tv = {0, 0};
    if (timeout_ms > 0) {
        tv.tv_sec = timeout_ms / 1000;
        tv.tv_usec = (timeout_ms % 1000) * 1000;
    }
    int fd = SSL_get_fd(ssl);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Set the socket timeouts to what is left until deadline (-1: none): 0,
 * or -1 with errno ETIMEDOUT when nothing is left. */
static int sync_left(SSL *ssl, long long deadline) {
    if (deadline < 0) return 0;
    long long left = deadline - sync_now_ms();
    if (left <= 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    tls_sync_timeout(ssl, (long)left);
    return 0;
}

ssize_t tls_sync_write(SSL *ssl, const void *p, size_t n, long timeout_ms) {
    const char *s = p;
    size_t done = 0;
    long long deadline = timeout_ms > 0 ? sync_now_ms() + timeout_ms : -1;
    if (deadline < 0) tls_sync_timeout(ssl, 0);
    while (done < n) {
        if (sync_left(ssl, deadline) != 0) break;
        ssize_t w = tls_write(ssl, s + done, n - done, NULL);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN) errno = ETIMEDOUT; /* SO_SNDTIMEO */
        break;
    }
    return (ssize_t)done;
}

ssize_t tls_sync_read_line(SSL *ssl, char *buf, size_t size, long timeout_ms) {
    size_t len = 0;
    long long deadline = timeout_ms > 0 ? sync_now_ms() + timeout_ms : -1;
    if (deadline < 0) tls_sync_timeout(ssl, 0);
    for (;;) {
        char ch;
        if (sync_left(ssl, deadline) != 0) return -1;
        ssize_t r = tls_read(ssl, &ch, 1, NULL);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) errno = ETIMEDOUT; /* SO_RCVTIMEO */
        if (r == 0) errno = ECONNRESET; /* EOF */
        if (r <= 0) return -1;
        if (ch == '\n') break;
        if (len + 1 < size) buf[len++] = ch;
    }
    if (len && buf[len - 1] == '\r') len--;
    if (size) buf[len] = '\0';
    return (ssize_t)len;
}

void tls_free_silently(SSL *ssl) {
    if (!ssl) return;
    SSL_set_quiet_shutdown(ssl, 1);
    SSL_free(ssl);
}

void tls_close(SSL *ssl) {
    if (!ssl) return;
    ERR_clear_error();
    SSL_shutdown(ssl);
    ERR_clear_error();
    SSL_free(ssl);
}
