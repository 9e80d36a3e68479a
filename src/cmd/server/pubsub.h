/* pubsub.h -- Pub/Sub and keyspace notifications, as the rest of cmd/
 * reaches them (the commands themselves register through families.h). */
#ifndef GOBLIN_CMD_PUBSUB_H
#define GOBLIN_CMD_PUBSUB_H
#include <stddef.h>

#include "session/client.h"

/* A keyspace event of class type (NOTIFY_*) on key of db dbid, sent when
 * notify-keyspace-events enables it. */
void pubsub_notify(int type, const char *event, int dbid, const char *key, size_t klen);
/* Drop every subscription of c (it disconnects or is RESET). */
void pubsub_client_gone(client *c);
/* notify-keyspace-events: parse ("KEA" ...) to flags (-1 when invalid),
 * format flags back, and set the flags in force. */
int pubsub_parse_notify_flags(const char *s);
void pubsub_notify_flags_string(int f, char *buf);
void pubsub_set_notify_flags(int f);
#endif
