/* oomscore.h -- oom-score-adj and oom-score-adj-values, as Redis 7.0. */
#ifndef GOBLIN_BASE_OOMSCORE_H
#define GOBLIN_BASE_OOMSCORE_H

/* Before the configuration is read: the two directives' hooks. */
void oomscore_config_register(void);

/* After the configuration is read: the score of a primary, when asked. */
void oomscore_init(void);

/* The process became a replica (1) or a primary (0): its score follows. */
void oomscore_set_role(int replica);

/* In a forked child (no lock taken): the score of a background child. */
void oomscore_child(void);

#endif
