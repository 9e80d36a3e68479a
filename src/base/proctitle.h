/* proctitle.h -- the process title ps shows, as Redis 7.0's set-proc-title
 * and proc-title-template. */
#ifndef GOBLIN_BASE_PROCTITLE_H
#define GOBLIN_BASE_PROCTITLE_H
#include <stddef.h>

/* Before the configuration is read: proc-title-template's check and apply. */
void proctitle_config_register(void);

/* Once, from main after the configuration is read and before any thread
 * starts (it moves the environment): takes over the memory of argv and
 * the environment for the title and, with set-proc-title yes, sets it. */
void proctitle_init(int argc, char **argv);

/* The template expanded with title ({title}), trimmed of spaces, into out:
 * 0, or -1 for a malformed template or an unknown variable. */
int proctitle_expand(const char *tmpl, const char *title, char *out, size_t outlen);

/* Set the title from the template; title NULL: the program as started
 * (a forked child names itself). No-op before proctitle_init or with
 * set-proc-title no. */
void proctitle_set(const char *title);

#endif
