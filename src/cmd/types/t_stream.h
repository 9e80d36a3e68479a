/* t_stream.h -- what the two stream command files share (t_stream.c: the
 * entries and XREAD/XREADGROUP; t_stream_cg.c: consumer groups and XINFO):
 * ID parsing and replies, the range reply with its group delivery, the
 * consumer lookups with their side effects, and the change bookkeeping. */
#ifndef GOBLIN_CMD_TYPES_T_STREAM_H
#define GOBLIN_CMD_TYPES_T_STREAM_H
#include <stddef.h>
#include <stdint.h>

#include "cmd/command.h"
#include "ds/stream.h"

/* The stream of an entry known to hold one. */
static inline gstream *xs_of(dbentry *e) { return e->val.u.p; }

/* Redis's streamGenericParseIDOrReply: "-" and "+" (refused when strict),
 * "ms" (seq = missing_seq) or "ms-seq"; with seq_given non-NULL, "ms-*"
 * is accepted (*seq_given 0) too. -1 after replying the error. */
int xs_parse_id(client *c, const garg *a, stream_id *id, uint64_t missing_seq, int strict, int *seq_given);
/* Without a reply: 0 ok, -1 invalid. */
int xs_parse_id_quiet(const garg *a, stream_id *id, int strict);
/* "ms-seq" into buf (>= 42 bytes); returns its length. */
size_t xs_id_fmt(char *buf, const stream_id *id);
void xs_reply_id(client *c, const stream_id *id);
/* A stream entry as a two-element array: ID, then fields and values. */
void xs_reply_entry_fields(client *c, stream_iter *it, size_t nfields);

/* Delivery options of xs_reply_range. */
enum { XS_NOACK = 1, XS_HISTORY = 2 };
/* Redis's streamReplyWithRange: the entries in [start, end] (end NULL:
 * open), at most count (0: all), as an array. With a group, each entry
 * past the group's last ID advances it (entries_read as Redis computes
 * it) and, unless NOACK, becomes pending for consumer, propagated as
 * XCLAIM (key, groupname); NOACK propagates XGROUP SETID at the end.
 * XS_HISTORY replies the consumer's own PEL instead. */
size_t xs_reply_range(client *c, gstream *s, const stream_id *start, const stream_id *end, size_t count, int rev,
                      stream_group *g, stream_consumer *cons, int flags, const garg *key, const garg *groupname);

/* Consumer lookup refreshing seen_time (SLC_DEFAULT); creation counting a
 * change and notifying xgroup-createconsumer (SCC_DEFAULT). */
stream_consumer *xs_consumer_lookup(stream_group *g, const garg *name, int refresh);
stream_consumer *xs_consumer_create(client *c, gdb *db, const garg *key, stream_group *g, const garg *name);

/* A change Redis counts in server.dirty without signalModifiedKey: the
 * dirty counter and the write stream, not WATCH. */
void xs_dirty(uint64_t n);
/* The client must obey (primary link, AOF loading): no LIMIT defaults. */
int xs_must_obey(const client *c);

/* "-NOGROUP No such key 'k' or consumer group 'g'" and its variants. */
void xs_reply_nogroup(client *c, const garg *key, const garg *group, const char *tail);

/* Propagation records. */
void xs_prop_xclaim(client *c, const garg *key, const garg *groupname, stream_group *g, const stream_nack *na);
void xs_prop_setid(client *c, const garg *key, const garg *groupname, stream_group *g);
void xs_prop_createconsumer(client *c, const garg *key, const garg *groupname, const stream_consumer *cons);

extern const cmd_handler stream_cg_handlers[];
#endif
