/* log.c -- "pid:role dd Mon yyyy hh:mm:ss.mmm <level> message", as Redis. */
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
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
    FILE *f = logfp ? logfp : stdout;
    pthread_mutex_lock(&log_lock);
    fprintf(f, "%d:M %s %c %s\n", (int)getpid(), ts, marks[level & 3], msg);
    fflush(f);
    pthread_mutex_unlock(&log_lock);
}
