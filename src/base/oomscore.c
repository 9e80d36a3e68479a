/* oomscore.c -- oom-score-adj and oom-score-adj-values, as Redis 7.0.
 *
 * The kernel's OOM killer picks its victim by /proc/PID/oom_score_adj.
 * With oom-score-adj yes (or relative) the process writes there the value
 * oom-score-adj-values gives its role -- primary, replica, forked child
 * (BGSAVE, AOF rewrite, a replica's full sync) -- added to the score it had
 * when it first took control; absolute writes the value as is; no writes
 * the score from before back, once. Scores are clamped to -1000..1000.
 *
 * Invariant: `adjusted` is set exactly while the file holds a value this
 * process wrote, and `base` is then the score from before. The settings
 * are plain ints under mu (a leaf lock); a forked child reads them without
 * the lock, as the fork left them. */
#include "base/oomscore.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"

enum { OOM_NO, OOM_RELATIVE, OOM_ABSOLUTE };
enum { CLASS_PRIMARY, CLASS_REPLICA, CLASS_CHILD };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int mode, values[3] = {0, 200, 800}, replica;
static int adjusted, base;

/* Write the score of class cls, or the one from before when turned off:
 * 0, or -1 (logged unless quiet: a forked child never logs) when /proc
 * cannot be read or written. */
static int apply_class(int cls, int quiet) {
    char buf[32];
    int v;
    if (mode != OOM_NO) {
        if (!adjusted) {
            int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
            ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
            if (fd >= 0) close(fd);
            if (n < 0) {
                if (!quiet) log_warn("Unable to read oom_score_adj: %s", strerror(errno));
                return -1;
            }
            buf[n] = '\0';
            base = atoi(buf);
            adjusted = 1;
        }
        v = values[cls] + (mode == OOM_RELATIVE ? base : 0);
        v = v > 1000 ? 1000 : v < -1000 ? -1000 : v;
    } else if (adjusted) {
        adjusted = 0;
        v = base;
    } else {
        return 0;
    }
    int len = snprintf(buf, sizeof(buf), "%d\n", v);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, buf, (size_t)len) < 0) {
        if (!quiet) log_warn("Unable to write oom_score_adj: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* "no", "yes", "relative", "absolute": yes and relative are one mode and
 * show as "yes", as Redis's enum. */
static int mode_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    if (strcasecmp(v, "relative") != 0) return 0; /* the enum checks the rest */
    snprintf(norm, normlen, "yes");
    return 1;
}

static void mode_apply(const char *v) {
    pthread_mutex_lock(&mu);
    mode = !strcasecmp(v, "no") ? OOM_NO : !strcasecmp(v, "absolute") ? OOM_ABSOLUTE : OOM_RELATIVE;
    pthread_mutex_unlock(&mu);
}

/* Three integers of -2000..2000: primary, replica, child. */
static int values_parse(const char *v, int out[3], char *err, size_t errlen) {
    char extra;
    char w[3][32];
    if (sscanf(v, "%31s %31s %31s %c", w[0], w[1], w[2], &extra) != 3) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        long x = strtol(w[i], &end, 10);
        if (*end || errno || x < -2000 || x > 2000) {
            snprintf(err, errlen, "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
            return -1;
        }
        out[i] = (int)x;
    }
    return 0;
}

static int values_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    int x[3];
    if (values_parse(v, x, err, errlen) != 0) return -1;
    if (x[CLASS_REPLICA] < x[CLASS_PRIMARY] || x[CLASS_CHILD] < x[CLASS_REPLICA])
        log_warn("The oom-score-adj-values configuration may not work for non-privileged processes! "
                 "Please consult the documentation.");
    snprintf(norm, normlen, "%d %d %d", x[0], x[1], x[2]);
    return 1;
}

static void values_apply(const char *v) {
    char err[128];
    int x[3];
    if (values_parse(v, x, err, sizeof(err)) != 0) return;
    pthread_mutex_lock(&mu);
    memcpy(values, x, sizeof(values));
    pthread_mutex_unlock(&mu);
}

/* CONFIG SET of either: the score follows, or the whole CONFIG SET is
 * refused (and its old values committed back). */
static int oom_commit(char *err, size_t errlen) {
    pthread_mutex_lock(&mu);
    int rc = apply_class(replica ? CLASS_REPLICA : CLASS_PRIMARY, 0);
    pthread_mutex_unlock(&mu);
    if (rc != 0) snprintf(err, errlen, "Failed to set current oom_score_adj. Check server logs.");
    return rc;
}

void oomscore_config_register(void) {
    static const config_hook mode_hook = {mode_check, mode_apply, oom_commit};
    static const config_hook values_hook = {values_check, values_apply, oom_commit};
    if (config_register_hook("oom-score-adj", &mode_hook) != 0 ||
        config_register_hook("oom-score-adj-values", &values_hook) != 0)
        abort();
}

void oomscore_init(void) {
    char err[128];
    oom_commit(err, sizeof(err));
}

void oomscore_set_role(int is_replica) {
    pthread_mutex_lock(&mu);
    int changed = replica != is_replica;
    replica = is_replica;
    if (changed) apply_class(replica ? CLASS_REPLICA : CLASS_PRIMARY, 0);
    pthread_mutex_unlock(&mu);
}

void oomscore_child(void) {
    if (mode != OOM_NO) apply_class(CLASS_CHILD, 1);
}
