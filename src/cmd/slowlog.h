/* slowlog.h -- the slow log (SLOWLOG GET/LEN/RESET). */
#ifndef GOBLIN_CMD_SLOWLOG_H
#define GOBLIN_CMD_SLOWLOG_H
#include "session/client.h"
/* Logs argv[0..argc) (the command as c sent it) when it took long
 * enough; peer and name are c's ("?:0" and "" for a script's calls, as
 * Redis's script client has no connection and no name). */
void slowlog_maybe_add(const client *c, int argc, const garg *argv, long long duration_us);
void slowlog_reply(client *c, long count);
long slowlog_len(void);
void slowlog_reset(void);
#endif
