/* slowlog.h -- the slow log (SLOWLOG GET/LEN/RESET). */
#ifndef GOBLIN_CMD_SLOWLOG_H
#define GOBLIN_CMD_SLOWLOG_H
#include "session/client.h"
void slowlog_maybe_add(client *c, long long duration_us);
void slowlog_reply(client *c, long count);
long slowlog_len(void);
void slowlog_reset(void);
#endif
