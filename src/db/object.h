/* object.h -- the value half of a key: type, encoding, access clock and a
 * payload word. Types and their numbering follow Redis's object types. */
#ifndef GOBLIN_DB_OBJECT_H
#define GOBLIN_DB_OBJECT_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 6, OBJ_NONE = 255 };
#define OBJ_NTYPES 7

enum {
    ENC_INT = 1,     /* string: int64 inline */
    ENC_EMBSTR = 2,  /* string: short bytes, reported as "embstr" */
    ENC_RAW = 3,     /* string: bytes, reported as "raw" */
    ENC_LISTPACK = 10,
    ENC_HASHTABLE = 11,
    ENC_INTSET = 12,
    ENC_SKIPLIST = 13,
    ENC_QUICKLIST = 14,
    ENC_STREAM = 15,
};

/* gobj.flags: a string lives in the room of its key's entry, after the
 * key (strval.c; only a key's entry has a room, db.h). */
#define OBJ_EMBEDDED 0x1000u
/* gobj.flags' low bits in a key's entry: the key's length (db.h). */
#define OBJ_KLEN 0x0fffu

typedef struct gobj {
    uint8_t type;
    uint8_t enc;
    uint16_t flags;    /* the container's: a key's entry keeps its own bits
                          here (db.h); values leave them alone but
                          OBJ_EMBEDDED */
    uint32_t lru;      /* seconds clock of last access, or LFU data */
    union {
        int64_t i;
        void *p;
    } u;
} gobj;

/* A gobj in a key's entry (db.h): its key's bytes follow the 8-byte
 * header when the value is in the room (OBJ_EMBEDDED), the value word u
 * otherwise; the room follows the key. */
#define OBJ_HDR_BYTES offsetof(gobj, u)
static inline const char *obj_key(const gobj *o) {
    return (const char *)o + OBJ_HDR_BYTES + ((o->flags & OBJ_EMBEDDED) ? 0 : sizeof(o->u));
}
static inline unsigned char *obj_room(const gobj *o) {
    return (unsigned char *)(uintptr_t)o + OBJ_HDR_BYTES + (o->flags & OBJ_KLEN);
}
/* The value of the entry whose gobj is o is about to be written into its
 * room: the key moves back over the value word (the room has an entry's
 * short key in front of it, never a long key's). */
static inline void obj_room_enter(gobj *o) {
    if (o->flags & OBJ_EMBEDDED) return;
    char *h = (char *)o + OBJ_HDR_BYTES;
    memmove(h, h + sizeof(o->u), o->flags & OBJ_KLEN);
    o->flags |= OBJ_EMBEDDED;
}
/* The value leaves its room (its bytes are no longer needed there): the
 * key moves on, over the room's start, and u is free to be written. */
static inline void obj_room_leave(gobj *o) {
    if (!(o->flags & OBJ_EMBEDDED)) return;
    char *h = (char *)o + OBJ_HDR_BYTES;
    memmove(h + sizeof(o->u), h, o->flags & OBJ_KLEN);
    o->flags &= (uint16_t)~OBJ_EMBEDDED;
}

/* Per-type hooks that data-type modules register (keeps db/ free of them). */
typedef struct obj_type_ops {
    void (*free)(gobj *o);
    int (*dup)(gobj *dst, const gobj *src);          /* 0 ok, -1 no memory */
    size_t (*mem_usage)(const gobj *o);
    size_t (*len)(const gobj *o);                    /* elements */
    /* Move up to groups groups of an index resize in flight; 1 while more
     * remain (db_note_resize: the cron finishes idle collections' resizes). */
    int (*rehash_step)(gobj *o, size_t groups);
} obj_type_ops;

void obj_register_type(int type, const obj_type_ops *ops);
void obj_free(gobj *o);
int obj_dup(gobj *dst, const gobj *src);
size_t obj_mem_usage(const gobj *o);
/* Elements of a collection (1 for a string or a type without the hook). */
size_t obj_len(const gobj *o);
/* obj_type_ops.rehash_step, or 0 for a type without one. */
int obj_rehash_step(gobj *o, size_t groups);
const char *obj_type_name(int type);
const char *obj_encoding_name(const gobj *o);
uint32_t obj_clock(void);
/* Access tracking in gobj.lru: LRU mode stores the seconds clock; LFU mode
 * (an LFU maxmemory policy) stores Redis's layout, 16 bits of minutes and
 * an 8-bit logarithmic counter, so OBJECT FREQ reads the same numbers. */
void obj_set_lfu_mode(int on);
/* Bind lfu-log-factor and lfu-decay-time; call before config_load(). */
void obj_config_register(void);
int obj_lfu_mode(void);
void obj_init_access(gobj *o);
void obj_touch(gobj *o);
/* While a fork child (BGSAVE, an AOF rewrite, a replica's full sync) runs,
 * lookups leave access times alone, as Redis's lookupKey does while it has
 * an active child: a write would copy the page the child shares. The code
 * that forks takes a hold (+1) once the child runs and drops it (-1) when
 * the child is reaped; holds nest. */
void obj_touch_hold(int delta);
/* RESTORE's IDLETIME / FREQ (-1: not given), as Redis's objectSetLRUOrLFU:
 * each applies only under its own kind of policy. */
void obj_set_access(gobj *o, long long idle_s, int freq);
/* LFU counter after decay (OBJECT FREQ). */
unsigned obj_lfu_freq(const gobj *o);
#endif
