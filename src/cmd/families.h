/* families.h -- every command family registers its handlers here. */
#ifndef GOBLIN_CMD_FAMILIES_H
#define GOBLIN_CMD_FAMILIES_H
#include "cmd/command.h"

extern const cmd_handler connection_handlers[];  /* cmd/connection.c */
extern const cmd_handler client_handlers[];      /* cmd/client_cmd.c */
extern const cmd_handler keys_handlers[];        /* cmd/keys.c */
extern const cmd_handler string_handlers[];      /* cmd/t_string.c */
extern const cmd_handler bitops_handlers[];      /* cmd/bitops.c */
extern const cmd_handler admin_handlers[];       /* cmd/admin.c */
extern const cmd_handler info_handlers[];        /* cmd/info.c */

void families_register(void);
void families_shutdown(void);
#endif
