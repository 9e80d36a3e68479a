/* admin.c -- placeholder until the family lands. */
#include "cmd/families.h"

const cmd_handler admin_handlers[] = {{NULL, NULL, 0}};
