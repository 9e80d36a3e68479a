/* crash.c -- the bug report a crash leaves in the log, as Redis 7.0's
 * sigsegvHandler does: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT the
 * handler writes "=== GOBLIN BUG REPORT START ===", the signal and its
 * code (the address for a bad access, the sender for a kill), the
 * instruction that crashed and a stack trace (glibc's backtrace), then
 * removes the pid file and raises the signal again with the default
 * action, so the exit status and any core dump are the kernel's.
 *
 * Everything the handler does is async-signal-safe or at least takes no
 * lock a crashed thread may hold: lines are formatted into a buffer on the
 * stack and written with write(2) to the log's descriptor; backtrace() is
 * primed at install time so that its first call does not load libgcc
 * inside the handler. crash-log-enabled no leaves the kernel's default
 * handling; use-exit-on-panic (hidden) makes a failed assertion exit with
 * status 1 after its report. Builds with a sanitizer keep the sanitizer's
 * own report. */
#include "base/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "base/process.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CRASH_SANITIZED 1
#else
#define CRASH_SANITIZED 0
#endif

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static int exit_on_panic;     /* use-exit-on-panic (hidden, a Redis test knob) */

/* One log line, in the log's format, written with write(2). */
static void crash_line(int fd, const char *fmt, ...) {
    char line[512];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm); /* localtime_r may take a lock */
    size_t n = (size_t)snprintf(line, sizeof(line), "%d:M ", (int)getpid());
    n += strftime(line + n, sizeof(line) - n, "%d %b %Y %H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03d # ", (int)(tv.tv_usec / 1000));
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    va_end(ap);
    n = m < 0 ? n : n + (size_t)m < sizeof(line) - 1 ? n + (size_t)m : sizeof(line) - 2;
    line[n++] = '\n';
    if (write(fd, line, n) < 0) { /* nothing left to tell it to */
    }
}

static void crash_text(int fd, const char *s) {
    if (write(fd, s, strlen(s)) < 0) {
    }
}

static void *crash_pc(void *secret) {
#if defined(__x86_64__)
    return (void *)((ucontext_t *)secret)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)((ucontext_t *)secret)->uc_mcontext.pc;
#else
    (void)secret;
    return NULL;
#endif
}

static void crash_handler(int sig, siginfo_t *info, void *secret) {
    int fd = log_fd();
    crash_text(fd, "\n\n=== GOBLIN BUG REPORT START: Cut & paste starting from here ===\n");
    crash_line(fd, "goblin-core %s (Redis %s compatible) crashed by signal: %d, si_code: %d", GOBLIN_VERSION,
               GOBLIN_REDIS_VERSION, sig, info->si_code);
    if (sig == SIGSEGV || sig == SIGBUS) crash_line(fd, "Accessing address: %p", info->si_addr);
    if (info->si_code == SI_USER && info->si_pid != -1)
        crash_line(fd, "Killed by PID: %ld, UID: %d", (long)info->si_pid, (int)info->si_uid);
    void *pc = crash_pc(secret);
    if (pc) crash_line(fd, "Crashed running the instruction at: %p", pc);
    crash_text(fd, "\n------ STACK TRACE ------\n");
    if (pc && pc != info->si_addr) {
        /* A call through a bad pointer would crash the unwinder too. */
        void *frames[64];
        int n = backtrace(frames, 64);
        backtrace_symbols_fd(frames, n, fd);
    } else {
        crash_text(fd, "(no stack trace: the crash was a call to an unmapped address)\n");
    }
    crash_text(fd, "\n=== GOBLIN BUG REPORT END. Make sure to include from START to END. ===\n\n");
    if (cfg.pidfile && cfg.pidfile[0]) unlink(cfg.pidfile);
    /* A failed assertion (abort() from the process itself) exits with 1
     * under use-exit-on-panic, as Redis's panics do: no core dump. */
    if (sig == SIGABRT && info->si_code != SI_USER && __atomic_load_n(&exit_on_panic, __ATOMIC_RELAXED)) _exit(1);
    /* SA_RESETHAND put the default action back: the signal ends the
     * process as it would have without this report. */
    raise(sig);
}


/* The handler on every crash signal (on), or the kernel's default. */
static void crash_set(int on) {
    if (CRASH_SANITIZED) return;
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    sigemptyset(&act.sa_mask);
    if (on) {
        void *prime[1];
        backtrace(prime, 1);
        act.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
        act.sa_sigaction = crash_handler;
    } else {
        act.sa_handler = SIG_DFL;
    }
    for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
        sigaction(crash_signals[i], &act, NULL);
}

/* crash-log-enabled, at start-up and at every CONFIG SET. */
static void crash_log_apply(const char *v) { crash_set(strcmp(v, "yes") == 0); }

void crash_config_register(void) {
    static const config_hook hook = {NULL, crash_log_apply};
    if (config_bind_int("use-exit-on-panic", &exit_on_panic) != 0 || config_register_hook("crash-log-enabled", &hook) != 0)
        abort(); /* the table lost a row */
}
