/* client_cmd.h -- the client-state helpers that CLIENT, HELLO and RESET
 * share (client_cmd.c), and the end of a client's life (cmd_client_gone in
 * command.h calls into here). */
#ifndef GOBLIN_CMD_CLIENT_CMD_H
#define GOBLIN_CMD_CLIENT_CMD_H
#include <stddef.h>

#include "session/client.h"

/* CLIENT SETNAME / HELLO SETNAME: n == 0 clears the name. */
void client_set_name(client *c, const char *p, size_t n);
/* RESET: back to a fresh connection's state (db 0, RESP2, no transaction,
 * no subscriptions, no name, default user, reply mode on). */
void client_reset_state(client *c);
#endif
