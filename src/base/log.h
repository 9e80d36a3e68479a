/* log.h -- the server log, in Redis's line format. */
#ifndef GOBLIN_BASE_LOG_H
#define GOBLIN_BASE_LOG_H
enum { LOG_DEBUG_L = 0, LOG_VERBOSE_L = 1, LOG_NOTICE_L = 2, LOG_WARNING_L = 3 };
void log_open(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text as it is (no line prefix), at level, to the log file or standard
 * output (not syslog): the start-up logo. */
void log_raw(int level, const char *text);
/* The log's descriptor, for a signal handler's write(2) (crash.c). */
int log_fd(void);
#define log_debug(...) log_msg(LOG_DEBUG_L, __VA_ARGS__)
#define log_verbose(...) log_msg(LOG_VERBOSE_L, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE_L, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING_L, __VA_ARGS__)
#endif
