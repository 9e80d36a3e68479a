/* unit_main.c -- runner of the C unit tests (framework in unit.h).
 *
 * Tests are collected by constructors, sorted by file then line, and run
 * one after another in this process. A failing CHECK longjmps back here;
 * the test is counted failed and the run continues (state it leaked is the
 * price of continuing, the exit status says fail). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"

typedef struct unit_test {
    const char *suite, *name, *file;
    unit_fn *fn;
    int line;
} unit_test;

static unit_test *unit_tests;
static int unit_ntests, unit_cap;
static jmp_buf unit_jmp;
static int unit_in_test;
static void (*unit_cleanups[8])(void);
static int unit_ncleanups;

void unit_cleanup(void (*fn)(void)) {
    if (unit_ncleanups == 8) unit_fail(__FILE__, __LINE__, "more than 8 cleanups");
    unit_cleanups[unit_ncleanups++] = fn;
}

static void unit_run_cleanups(void) {
    while (unit_ncleanups > 0) unit_cleanups[--unit_ncleanups]();
}

void unit_register(const char *suite, const char *name, const char *file, int line, unit_fn *fn) {
    if (unit_ntests == unit_cap) {
        unit_cap = unit_cap ? unit_cap * 2 : 64;
        unit_tests = realloc(unit_tests, (size_t)unit_cap * sizeof(*unit_tests));
        if (!unit_tests) abort();
    }
    unit_tests[unit_ntests] = (unit_test){suite, name, file, fn, line};
    unit_ntests++;
}

void unit_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    if (!unit_in_test) abort();
    longjmp(unit_jmp, 1);
}

void unit_log(const char *fmt, ...) {
    va_list ap;
    fputs("    # ", stdout);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

double unit_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNIT_DEFAULT_SCALE 0.5
#else
#define UNIT_DEFAULT_SCALE 1.0
#endif

double unit_scale(void) {
    static double scale = -1;
    if (scale < 0) {
        const char *e = getenv("UNIT_SCALE");
        scale = e ? atof(e) : UNIT_DEFAULT_SCALE;
        if (scale < 0.01) scale = 0.01;
    }
    return scale;
}

uint64_t unit_scaled(uint64_t n, uint64_t min) {
    uint64_t v = (uint64_t)((double)n * unit_scale());
    return v < min ? min : v;
}

static int unit_cmp(const void *x, const void *y) {
    const unit_test *a = x, *b = y;
    int c = strcmp(a->file, b->file);
    return c ? c : a->line - b->line;
}

static int unit_selected(const unit_test *t, int argc, char **argv) {
    if (argc < 2) return 1;
    char full[256];
    snprintf(full, sizeof(full), "%s.%s", t->suite, t->name);
    for (int i = 1; i < argc; i++)
        if (strstr(full, argv[i])) return 1;
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    qsort(unit_tests, (size_t)unit_ntests, sizeof(*unit_tests), unit_cmp);
    int passed = 0, failed = 0;
    double t_all = unit_now();
    printf("unit tests (scale %.2f)\n", unit_scale());
    for (int i = 0; i < unit_ntests; i++) {
        /* volatile: read after a longjmp back into this frame */
        volatile unit_test *t = &unit_tests[i];
        if (!unit_selected((const unit_test *)t, argc, argv)) continue;
        printf("  %s.%s\n", t->suite, t->name);
        volatile double t0 = unit_now();
        unit_in_test = 1;
        if (setjmp(unit_jmp) == 0) {
            t->fn();
            unit_in_test = 0;
            unit_run_cleanups();
            printf("  ok   %s.%s (%.0f ms)\n", t->suite, t->name, (unit_now() - t0) * 1e3);
            passed++;
        } else {
            unit_in_test = 0;
            unit_run_cleanups();
            printf("  FAIL %s.%s (%.0f ms)\n", t->suite, t->name, (unit_now() - t0) * 1e3);
            failed++;
        }
    }
    printf("total %.1f s\n", unit_now() - t_all);
    printf("%d passed, %d failed\n", passed, failed);
    free(unit_tests);
    return failed ? 1 : 0;
}
