/* cluster.h -- Redis Cluster membership (Redis 7.0's cluster bus, nodes.conf
 * and redirections), for the rest of the server.
 *
 * The cluster state (nodes, slot owners, epochs) lives in cmd/cluster/ and
 * is guarded by one read-write lock: the bus thread and the CLUSTER
 * commands that change it write, the redirection check of every keyed
 * command reads. The bus's sockets belong to net/ (net/cbus.c), which
 * calls the cluster_bus_* entry points below on its own thread and is
 * reached back through the transport table it installs, so this room
 * names no socket. */
#ifndef GOBLIN_CMD_CLUSTER_CLUSTER_H
#define GOBLIN_CMD_CLUSTER_CLUSTER_H
#include <stddef.h>
#include <sys/types.h>

#include "session/client.h"

struct cmd_def;

/* cluster-enabled, read once at start-up. */
int cluster_enabled(void);
/* After config_load and before db_init_all: slot mode for the keyspace
 * when cluster-enabled. */
void cluster_preinit(void);
/* After the families are registered: load nodes.conf (or create a node and
 * write it). 0, or -1 with err set (start-up stops). */
int cluster_init(char *err, size_t errlen);
/* The bus port this node listens on (cluster-port, or port + 10000). */
int cluster_bus_port(void);

/* The redirection check of a command about to run (after ACL): 0 when it
 * runs here; 1 when c got -MOVED/-ASK/-CROSSSLOT/-TRYAGAIN/-CLUSTERDOWN
 * (and a transaction was flagged or, for EXEC, discarded). */
int cluster_redirect(client *c, const struct cmd_def *cmd);
/* A client blocked on key (BLPOP & co., write: a blocking command that
 * writes): 1 when it may not wait here any more -- the cluster failed, or
 * the key's slot is now served by another node and not being imported
 * here -- with the error replied (-CLUSTERDOWN, -MOVED); 0 otherwise. */
int cluster_blocked_redirect(client *c, const garg *key, int write);
/* A script's call (scriptVerifyClusterState): NULL when it may run, else
 * the error text (static). *slot carries the script's slot (-1: none yet):
 * the first key's slot is recorded there, and a key of another slot is
 * refused unless cross_slot_ok (allow-cross-slot-keys). */
const char *cluster_script_check(client *caller, const struct cmd_def *cmd, int argc, garg *argv, int *slot,
                                 int cross_slot_ok);
/* The slot of the keys a script or function declares (argv[2] numkeys,
 * keys from argv[3]), -1 when it declares none or cluster mode is off. */
int cluster_declared_slot(int argc, garg *argv);
/* Messages of PUBLISH (sharded 0) and SPUBLISH (1) for the other nodes. */
void cluster_propagate_publish(const char *ch, size_t chn, const char *msg, size_t msgn, int sharded);
/* The hook pub/sub installs to deliver what other nodes published. */
typedef void cluster_publish_fn(const char *ch, size_t chn, const char *msg, size_t msgn, int sharded);
void cluster_set_publish_hook(cluster_publish_fn *fn);
/* INFO's "# Cluster" section line and the cluster_connections count. */
int cluster_connections(void);
/* INFO's mem_cluster_links: the links and what waits in their send buffers. */
size_t cluster_links_memory(void);
/* This node is a cluster replica (or not in cluster mode): for callers
 * that need to know whether writes are accepted. */
int cluster_is_master(void);

/* ---- the transport (net/cbus.c) ----------------------------------------- */

typedef struct cluster_transport {
    /* Start a non-blocking connection to ip:port for link; a handle, or -1.
     * cluster_bus_connected reports the outcome. */
    int (*connect)(const char *ip, int port, void *link);
    /* Queue bytes on a handle (any thread). */
    void (*send)(int h, const void *p, size_t n);
    /* Close a handle (any thread): no callback follows for it. */
    void (*close)(int h);
    /* The local / peer address of a handle: 0, or -1. */
    int (*local_ip)(int h, char *buf, size_t n);
    int (*peer_ip)(int h, char *buf, size_t n, int *port);
    /* Bytes queued and not yet written. */
    size_t (*pending)(int h);
} cluster_transport;

void cluster_set_transport(const cluster_transport *t);
/* On the bus thread: */
void *cluster_bus_accepted(int h);
void cluster_bus_connected(void *link, int ok);
/* Length of the message starting at p (avail bytes there): 0 when more
 * bytes are needed to know, -1 for a bad header (close the link). */
ssize_t cluster_bus_frame_len(const unsigned char *p, size_t avail);
/* One whole message: 0, or -1 when the link was closed meanwhile. */
int cluster_bus_message(void *link, const unsigned char *p, size_t n);
void cluster_bus_closed(void *link);
/* Every 100 ms. */
void cluster_bus_tick(void);
#endif
