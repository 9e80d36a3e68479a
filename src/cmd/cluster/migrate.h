/* migrate.h -- MIGRATE's cache of links to target instances (migrate.c). */
#ifndef GOBLIN_CMD_CLUSTER_MIGRATE_H
#define GOBLIN_CMD_CLUSTER_MIGRATE_H

/* Close the cached links idle for more than 10 seconds (the cron, once a
 * second). */
void migrate_close_idle(void);
/* How many links are cached (INFO's migrate_cached_sockets). */
int migrate_cached_links(void);
#endif
