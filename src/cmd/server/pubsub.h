/* pubsub.h -- Pub/Sub and keyspace notifications, as the rest of cmd/
 * and start-up reach them (the commands themselves register through
 * families.h). */
#ifndef GOBLIN_CMD_PUBSUB_H
#define GOBLIN_CMD_PUBSUB_H
#include <stddef.h>

#include "session/client.h"

/* A keyspace event of class type (NOTIFY_*) on key of db dbid, sent when
 * notify-keyspace-events enables it. */
void pubsub_notify(int type, const char *event, int dbid, const char *key, size_t klen);
/* Drop every subscription of c (it disconnects or is RESET). */
void pubsub_client_gone(client *c);
/* Attach the notify-keyspace-events hook (check, normalise, follow) to the
 * configuration. Called before the config is read, so that a bad value in
 * the config file or a flag is refused where it is given. */
void pubsub_config_register(void);
/* INFO stats: channels with subscribers, distinct patterns, shard channels. */
void pubsub_counts(long *nchannels, long *npats, long *nshard);
#endif
