/* SPDX-License-Identifier: MIT */
/* The daemon object: berthd's configuration, the event loop, what start-up
 * learnt of the machine and the allocation, and the objects that own the
 * rest (each with its own header, included here for the daemon's files).
 * One daemon per process: the event loop owns everything; nothing here is
 * thread-safe. */
#ifndef BERTHD_H
#define BERTHD_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "allocation.h"
#include "clock.h"
#include "codec.h"
#include "launch_fit.h"
#include "deadline.h"
#include "error.h"
#include "events.h"
#include "idmap.h"
#include "jobend.h"
#include "journal.h"
#include "launcher.h"
#include "lease_book.h"
#include "lease_text.h"
#include "lease_watch.h"
#include "ledger.h"
#include "log.h"
#include "machine.h"
#include "notify.h"
#include "render.h"
#include "status_memo.h"
#include "step.h"
#include "timeval.h"
#include "waitqueue.h"

/* berthd's exit codes (berthd(8), EXIT STATUS). */
#define BERTHD_EXIT_OK 0
#define BERTHD_EXIT_RUNTIME 1
#define BERTHD_EXIT_USAGE 2
#define BERTHD_EXIT_NOT_LIVE 3
#define BERTHD_EXIT_UNREACHABLE 4

struct berthd_config {
    const char *machine;
    const char **configs;         /* NULL-terminated */
    const char *compiler;
    const char *const *machine_path; /* --machine-path dirs, NULL-terminated */
    const char *socket_path;      /* NULL: the default for the job */
    const char *state_dir;        /* NULL: beside the default socket */
    bool foreground, print_env;
    int max_connections;
    int max_leases_per_conn;      /* connection-bound leases one connection
                                     may hold */
    int starvation_overtakes;
    double starvation_seconds;
    double drain_timeout;         /* seconds a drain waits for leases */
    double reclaim_grace;         /* seconds a restored connection-bound lease
                                     waits for its holder */
    bool discard_journal;         /* --discard-journal */
    int journal_records;          /* compact the journal past this many
                                     records (and 4x the live leases) */
    double output_stall;          /* seconds a connection may keep more than
                                     CONN_OUTPUT_PAUSE unread before it is
                                     closed */
    size_t output_max;            /* bytes of unread output for all
                                     connections together (server.c) */
    size_t events_max;            /* the events log's size before it is
                                     rotated (events.c); 0: unbounded */
    enum deadline_policy deadline_policy;   /* a step that runs past the
                                               job's end: refuse or warn */
    int spin_us;                  /* poll this long after a read before
                                     sleeping (event_loop.c); 0: never */
};

struct client;
struct lease;
struct queue;
struct server;
struct waiter;

/* Descriptors kept back from --max-connections (berthd.c fit_connections):
 * berthd's own, and connections over the limit that may only release, ask
 * status and the like (server.c), so that the release that would free the
 * cores a full house waits for always gets in. */
#define BERTHD_OWN_FDS 32
#define BERTHD_RESERVE_CONNS 8

/* status's "failed": the latest steps whose holders said they failed */
#define BERTHD_RECENT_FAILED 8
struct recent_failure {
    char lease[24], label[PROTO_MAX_NAME + 1];
    double time;
    struct proto_outcome *outcome;
};

/* The daemon: its configuration, the loop, what start-up learnt of the
 * machine and allocation, and the objects that own everything else. */
struct berthd {
    struct berthd_config cfg;
    struct event_base *base;
    struct machine *machine;
    struct allocation *alloc;
    struct launcher_caps caps;
    enum ledger_layout layout;    /* for steps that are launched */
    struct ledger *ledger;
    struct ledger *empty;         /* never holds anything: "could this ever
                                     fit?" is asked of it */
    struct queue *queue;          /* requests that wait (queue.h) */
    struct server *server;        /* the socket and connections (server.h) */
    struct step_capacity capacity;
    const char *gpu_var;          /* visible-devices variable of the local
                                     node, NULL when it has no GPUs */

    struct lease_book *book;      /* the leases, and which client holds
                                     each (the holder key: struct client *) */
    struct lease_watch *watch;    /* their ttls, owners, restored holders */
    struct journal *journal;
    char socket_path[108];
    char state_dir[PATH_MAX];
    char socket_lock[108 + 8];    /* <socket>.lock: one berthd per socket */
    int socket_lock_fd;           /* valid while socket_locked */
    bool socket_locked;
    struct events *events;        /* the events log (events.h) */
    struct jobend *jobend;        /* the job's end (jobend.h) */
    struct notify *notify;        /* systemd's notifications (notify.h) */

    int connections;              /* open now: kept by the connection layer,
                                     read by status and notify */
    double started;               /* wall clock */
    struct status_memo status_memo[2];   /* the last large status reply,
                                            whole and queue_only */
    json_t *alloc_head;           /* the allocation's JSON but its nodes,
                                     built at the first brief status */
    uint64_t changes;             /* requests other than status served: in
                                     the memo's key */
    double restored_until;        /* monotonic: the end of the reclaim grace
                                     of the requests restored at start */
    bool draining, stopping;
    int exit_code;
    struct recent_failure failed[BERTHD_RECENT_FAILED];   /* a ring */
    uint64_t nfailed;             /* all of them since start */
    struct event *drain_timer, *sig_ev[4];
};

/* shutdown.c: a drain, and leaving the loop. */
void berthd_stop (struct berthd *d, int code);   /* leave the loop */
/* Once draining and no lease is left: stop. */
void berthd_check_drained (struct berthd *d);

/* event_loop.c */
void berthd_loop (struct berthd *d);   /* until the base is told to stop */

#endif
