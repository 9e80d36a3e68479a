/* crash.h -- a bug report in the log when the server crashes (crash.c). */
#ifndef GOBLIN_BASE_CRASH_H
#define GOBLIN_BASE_CRASH_H
/* Binds crash-log-enabled and use-exit-on-panic: the handlers of SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL and SIGABRT are installed while crash-log-enabled
 * is yes (and never in a sanitizer build), from start-up on. */
void crash_config_register(void);
#endif
