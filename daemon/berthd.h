/* SPDX-License-Identifier: MIT */
/* berthd's state and the functions its files share. One daemon per process:
 * the event loop owns everything below; nothing here is thread-safe. */
#ifndef BERTHD_H
#define BERTHD_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "allocation.h"
#include "clock.h"
#include "codec.h"
#include "launch_fit.h"
#include "deadline.h"
#include "error.h"
#include "idmap.h"
#include "journal.h"
#include "launcher.h"
#include "lease_book.h"
#include "lease_text.h"
#include "lease_watch.h"
#include "ledger.h"
#include "log.h"
#include "machine.h"
#include "render.h"
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
    int journal_records;          /* compact the journal past this many
                                     records (and 4x the live leases) */
    double output_stall;          /* seconds a connection may keep more than
                                     CONN_OUTPUT_PAUSE unread before it is
                                     closed */
    enum deadline_policy deadline_policy;   /* a step that runs past the
                                               job's end: refuse or warn */
    int spin_us;                  /* poll this long after a read before
                                     sleeping (event_loop.c); 0: never */
};

struct client;
struct lease;
struct jobend_query;
struct queue;
struct server;
struct waiter;

/* What berthd knows of the job's end (jobend.c). */
enum jobend_state { JOBEND_UNASKED, JOBEND_ASKING, JOBEND_KNOWN };

struct berthd {
    struct berthd_config cfg;
    struct event_base *base;
    unsigned long reads;          /* reads from clients so far */
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
    /* Where events go live, and who hears that the job's end is known (the
     * connection layer, set up by berthd.c). */
    void (*event_sink) (void *arg, const char *line, size_t len);
    void (*end_known) (void *arg);
    void *sink_arg;

    int events_fd;
    struct evbuffer *events_buf;  /* events not yet in the log */
    struct event *events_ev;      /* writes them out soon */
    off_t events_start;           /* where this run's events begin */

    double started;               /* wall clock */
    bool draining, stopping;
    int exit_code;
    struct event *drain_timer, *status_ev, *watchdog_ev, *sig_ev[4];

    /* The job's end (jobend.c): learnt lazily, asked of the scheduler at
     * most once, off the loop. */
    double job_end;               /* Unix time; < 0: unknown */
    enum jobend_state job_end_state;
    struct deadline_source job_end_src;
    struct jobend_query *job_end_query;   /* while JOBEND_ASKING */
};

/* berthd.c (and seconds_tv: timeval.h) */
void berthd_stop (struct berthd *d, int code);   /* leave the loop */
void berthd_check_drained (struct berthd *d);

/* event_loop.c */
void berthd_loop (struct berthd *d);   /* until the base is told to stop */

/* leases.c: the lease lifecycle on the book (lease_book.h), the watch
 * (lease_watch.h) and the journal (journal.h): grant, the environment, the
 * ways a lease ends, rebinding an orphaned one. */
/* A local step that the scheduler places (SCHEDULER mode): launched
 * through srun on berthd's node instead of bound by its client. */
bool lease_local_launched (const struct berthd *d, const struct lease *ls);
/* Record the ledger's grant lease_id for w: its lease, launch, journal
 * record and event; the reply line in *reply (NULL when it cannot be
 * encoded). -1: refused (the ledger's grant is given back). */
int lease_grant (struct berthd *d, struct waiter *w, uint64_t lease_id,
                 char **reply, size_t *reply_len, berth_error_t *err);
void lease_end (struct berthd *d, struct lease *ls, const char *reason);
void lease_end_all (struct berthd *d, const char *reason);
/* Its client went away: its connection-bound leases end. */
void leases_client_gone (struct berthd *d, struct client *cl);
/* An orphaned lease bound to cl from now on (it ends when cl goes); -1
 * when out of memory (nothing changed). */
int lease_rebind (struct berthd *d, struct client *cl, struct lease *ls,
                  berth_error_t *err);
/* Build ls's BERTH_* variables unless it has them; -1 when out of memory
 * (ls unchanged). */
int lease_env (struct berthd *d, struct lease *ls, berth_error_t *err);
/* The book, the watch and the journal (before journal_open_ledger); freed
 * by leases_close. */
int leases_init (struct berthd *d, berth_error_t *err);
void leases_close (struct berthd *d);

/* status.c */
json_t *status_allocation (struct berthd *d);
json_t *status_leases (struct berthd *d);
json_t *status_queue (struct berthd *d);
json_t *status_daemon (struct berthd *d);
json_t *resources_lease (struct berthd *d, const struct lease *ls);
json_t *resources_allocation (struct berthd *d);

/* jobend.c: the allocation's end, for status and for requests that state
 * a duration. A handler whose request needs the end calls jobend_wait
 * first and returns when it says true: the end is being asked (the query
 * started now if it was not), and the request is served again once it is
 * known. */
bool jobend_ready (struct berthd *d);
double jobend_get (struct berthd *d);       /* < 0: unknown (or not yet) */
/* 0: the request may go on (warn gets a warning when the policy is warn and
 * it runs past the end, else ""); -1: refused (err: unsatisfiable). */
int jobend_admit (struct berthd *d, const struct proto_acquire *a, char *warn,
                  size_t size, berth_error_t *err);
/* job_end, time_left_s, job_end_source, deadline_policy members. */
int jobend_status (struct berthd *d, json_t *allocation);   /* what is known */
/* A drain waits for no query: requests waiting for the end are served
 * again now (refused, or answered with what is known). */
void jobend_drain (struct berthd *d);
void jobend_close (struct berthd *d);   /* at exit (a query left running) */

/* events.c */
int events_open (struct berthd *d, berth_error_t *err);
void events_reopen (struct berthd *d);
void events_close (struct berthd *d);
void events_flush (struct berthd *d);     /* the log up to date, now */
void events_emit (struct berthd *d, json_t *ev);          /* steals ev */
void events_allocation (struct berthd *d);   /* the "allocation" event */
void events_emit_line (struct berthd *d, char *line, size_t len); /* steals */
/* The range of the log this run wrote (flushed first): fd is new. */
int events_history (struct berthd *d, int *fd, off_t *offset, size_t *len);

/* notify.c: systemd's notification protocol (harmless without it). */
void notify_ready (struct berthd *d);
void notify_status_soon (struct berthd *d);
void notify_stopping (struct berthd *d);
int notify_init (struct berthd *d);

#endif
