/* crash.h -- a bug report in the log when the server crashes (crash.c). */
#ifndef GOBLIN_BASE_CRASH_H
#define GOBLIN_BASE_CRASH_H
/* Install the handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT
 * (nothing with crash-log-enabled no, or in a sanitizer build). */
void crash_install(void);
/* The kernel's default handling again (CONFIG SET crash-log-enabled no). */
void crash_uninstall(void);
/* Binds crash-log-enabled: CONFIG SET installs or removes the handlers. */
void crash_config_register(void);
#endif
