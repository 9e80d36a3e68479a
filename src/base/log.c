/* log.c -- "pid:role dd Mon yyyy hh:mm:ss.mmm <level> message", as Redis, to
 * logfile or standard output; with syslog-enabled, the message to syslog(3)
 * too, at the level Redis maps it to. */
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"

static FILE *logfp;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_open(void) {
    if (cfg.logfile && cfg.logfile[0]) {
        FILE *f = fopen(cfg.logfile, "a");
        if (f) logfp = f;
    }
    if (cfg.syslog_enabled) {
        static const int facility[] = {LOG_USER,   LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3,
                                       LOG_LOCAL4, LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};
        int fi = cfg.syslog_facility >= 0 && cfg.syslog_facility < 9 ? cfg.syslog_facility : 1;
        openlog(cfg.syslog_ident ? cfg.syslog_ident : "redis", LOG_PID | LOG_NDELAY | LOG_NOWAIT, facility[fi]);
    }
}

void log_msg(int level, const char *fmt, ...) {
    if (level < cfg.loglevel) return;
    static const char marks[] = ".-*#";
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    char ts[64];
    size_t off = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(ts + off, sizeof(ts) - off, "%03d", (int)(tv.tv_usec / 1000));
    if (cfg.syslog_enabled) {
        static const int prio[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};
        syslog(prio[level & 3], "%s", msg);
    }
    FILE *f = logfp ? logfp : stdout;
    pthread_mutex_lock(&log_lock);
    fprintf(f, "%d:M %s %c %s\n", (int)getpid(), ts, marks[level & 3], msg);
    fflush(f);
    pthread_mutex_unlock(&log_lock);
}

int log_fd(void) { return fileno(logfp ? logfp : stdout); }

void log_raw(int level, const char *text) {
    if (level < cfg.loglevel) return;
    FILE *f = logfp ? logfp : stdout;
    pthread_mutex_lock(&log_lock);
    fputs(text, f);
    fflush(f);
    pthread_mutex_unlock(&log_lock);
}
