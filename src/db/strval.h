/* strval.h -- the one small interface behind which string values live.
 *
 * Every string command goes through these calls, so replacing the storage
 * (the head/tail object store) is local to strval.c. Canonical integers are
 * kept inline (ENC_INT); other values are a length-prefixed byte buffer. */
#ifndef GOBLIN_DB_STRVAL_H
#define GOBLIN_DB_STRVAL_H
#include <stddef.h>
#include <stdint.h>

#include "object.h"

#define STRVAL_EMBSTR_MAX 44  /* Redis reports values up to this size as embstr */

/* Set o to a string holding bytes p[0..n). 0 on success, -1 on no memory
 * or when the tail cannot be written (strval_io_error tells which).
 * o must not hold a value (freshly added or freed). */
int strval_set(gobj *o, const char *p, size_t n);
void strval_set_int(gobj *o, int64_t v);
/* Like strval_set but never integer-encoded: for values Redis keeps as
 * strings even when they look like integers (INCRBYFLOAT results). */
int strval_set_str(gobj *o, const char *p, size_t n);
/* Bytes of the value (not NUL-terminated: read them with *len): a
 * pointer into the object, into tmp (>= 21 bytes)
 * for integers, or into this thread's scratch for a compressed value (valid
 * until the command ends: strval_end_command). NULL when a large value's tail cannot be read (an SSD I/O
 * error, counted) or no memory is left for its contiguous view: the caller
 * replies STRVAL_READ_ERR and changes nothing. */
#define STRVAL_READ_ERR "ERR I/O error reading the value's tail from the SSD pool"
#define STRVAL_WRITE_ERR "ERR I/O error writing the value's tail to the SSD pool"
const char *strval_bytes(const gobj *o, char *tmp, size_t *len);
size_t strval_len(const gobj *o);
/* Integer value if the string is a canonical int64. */
int strval_get_int(const gobj *o, int64_t *v);
/* Writable bytes of exactly newlen >= current length, zero-filled past the
 * old end; the value becomes ENC_RAW. NULL on no memory or when a large
 * value's tail cannot be read (then the value is unchanged; strval_io_error
 * tells which). */
char *strval_resize(gobj *o, size_t newlen);
void strval_free(gobj *o);
/* Why the last strval_set/strval_set_str/strval_bytes/strval_resize/
 * strval_dup on this thread failed: STRVAL_READ_ERR or STRVAL_WRITE_ERR for a
 * tail I/O error, NULL for no memory (the caller answers OOM). */
const char *strval_io_error(void);
int strval_dup(gobj *dst, const gobj *src);
/* Bytes the value holds beyond its entry (an embedded one: 0). */
size_t strval_mem_usage(const gobj *o);

/* Values embedded in their key's entry (strval.c). strval_embed_size: the
 * room an entry needs to hold p[0..n) embedded, 0 when such a value is not
 * embedded (integers, values over the embedding limit or --ram-head). It
 * may compress p for strval_set_embedded, which must follow for the same
 * p and n on the same thread: o (the value of an entry made with that
 * room, holding nothing) becomes the value, written into room (which
 * db_add_room gave: it starts at o's u). */
size_t strval_embed_size(const char *p, size_t n);
void strval_set_embedded(gobj *o, void *room, const char *p, size_t n);
/* o is embedded and p[0..n) fits its room: it becomes the value there
 * (1). 0: nothing changed (store the value another way). */
int strval_set_in_place(gobj *o, const char *p, size_t n);
int strval_is_embedded(const gobj *o);
/* Before an embedded value leaves its entry: it moves to the arena. 0 ok
 * (or not embedded), -1 no memory (nothing changed). */
int strval_unembed(gobj *o);
/* An existing value (a loaded one) into a new entry: the room it needs
 * embedded (0: it stays where it is), and the move itself, once o is the
 * value of the entry made with that room (db_entry_set_value first). */
size_t strval_embed_size_of(const gobj *o);
void strval_embed(gobj *o, void *room);
/* Bytes of an embedded value's room, from o's u on (0: o is not
 * embedded). */
size_t strval_embedded_room(const gobj *o);

/* Large values (>= --ram-head) hand out a contiguous view (head + tail
 * copied together) from strval_bytes/strval_resize. strval_end_command()
 * folds the views this thread made back into head and tail and frees them;
 * the dispatcher calls it after the handler, while it still holds the
 * command's locks, once it has called strval_set_command_scoped(1).
 * Without it, a view lives until its value is changed or freed. */
void strval_set_command_scoped(int on);
void strval_end_command(void);
/* Fold one value's view now (caller holds its key). -1: tail write error,
 * the view is kept and still holds the value. Also releases this thread's
 * scratch of decompressed small values: the caller holds no other pointer
 * strval_bytes returned (RDB writers call it after every string). */
int strval_fold(gobj *o);
/* Streamed read of a large value whose tail is an SSD extent (GET): when
 * the value has no view and a stream can be opened, returns 1 with
 * head and headlen (valid while the caller holds the key), total (the value
 * length) and tail, an open stream of the remaining bytes that stays
 * valid after the key changes (its extent is pinned). 0: read it with
 * strval_bytes instead. Counts the GET like strval_bytes does. */
struct ssdtail_stream;
int strval_stream_open(const gobj *o, const char **head, size_t *headlen, size_t *total,
                       struct ssdtail_stream **tail);
/* A large value whose bytes are all in RAM (head slot + RAM tail or no
 * tail) and that has no view: 1 with both parts (valid while the caller
 * holds the key), counted as served like strval_bytes; 0 otherwise. Lets a
 * reply copy the value once instead of building a contiguous view. */
int strval_ram_parts(const gobj *o, const char **head, size_t *headlen, const char **tail, size_t *taillen);
/* A small value kept LZF-compressed: 1 with its compressed bytes (valid
 * while the caller holds the key) and lengths, 0 otherwise. The RDB writer
 * copies them as an RDB LZF string. strval_set_packed is the way back: like
 * strval_set(o, p, n), given also c[0..clen), an LZF form of the same
 * bytes (from an RDB file), which it keeps as is when that is how values
 * of this size are kept, instead of compressing again. */
int strval_lzf(const gobj *o, const char **c, size_t *clen, size_t *len);
int strval_set_packed(gobj *o, const char *p, size_t n, const char *c, size_t clen);
/* A failed tail read seen by a streamed reply (counted like the others). */
void strval_count_read_error(void);
/* The object store is (nearly) full where string values live: bit
 * STRVAL_PRESSURE_HEADS when no head slot is left (--memory and every
 * --sub-memory pool full), STRVAL_PRESSURE_SMALL when the small-object
 * pools (--small-memory, --small-sub-memory) have under 64 KiB left or no
 * place for the record of a value of `request` bytes.
 * strval_pressure_relieves(o, bits): freeing o would help. */
#define STRVAL_PRESSURE_HEADS 1
#define STRVAL_PRESSURE_SMALL 2
int strval_pressure(size_t request);
int strval_pressure_relieves(const gobj *o, int bits);
/* Tail I/O errors seen (reads that came back zero-filled, writes refused). */
void strval_stats(uint64_t *read_errors, uint64_t *write_errors);
#endif
