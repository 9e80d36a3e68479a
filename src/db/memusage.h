/* memusage.h -- the server's used and resident memory (see memusage.c). */
#ifndef GOBLIN_DB_MEMUSAGE_H
#define GOBLIN_DB_MEMUSAGE_H
#include <stdint.h>

uint64_t memusage_used(void);   /* what maxmemory compares against */
uint64_t memusage_rss(void);    /* VmRSS of the process */
#endif
