/* pubsub.h -- what start-up calls of Pub/Sub beyond its family init. */
#ifndef GOBLIN_CMD_PUBSUB_H
#define GOBLIN_CMD_PUBSUB_H

/* Attach the notify-keyspace-events hook (check, normalise, follow) to the
 * configuration. Called before the config is read, so that a bad value in
 * the config file or a flag is refused where it is given. */
void pubsub_config_register(void);
#endif
