/* cmdmeta.h -- readers of the RESP3 metadata in command_meta.inc (see
 * cmdmeta.c): COMMAND's replies and the key specs both walk it. */
#ifndef GOBLIN_CMD_CMDMETA_H
#define GOBLIN_CMD_CMDMETA_H
#include <stddef.h>

/* Header of the value at p: its type byte, its count or length; returns
 * where the payload starts. */
const char *cmdmeta_hdr(const char *p, char *type, long long *n);
/* The value after the one at p. */
const char *cmdmeta_skip(const char *p);
/* A string value ('$' or '+') at p: sets *s and *len, returns the next. */
const char *cmdmeta_str(const char *p, const char **s, size_t *len);
/* Whether s[0..n) is the literal lit. */
int cmdmeta_eq(const char *s, size_t n, const char *lit);
#endif
