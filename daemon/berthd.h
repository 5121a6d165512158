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

struct conn;
struct pending;
struct jobend_query;

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
    struct waitqueue *queue;
    struct step_capacity capacity;
    const char *gpu_var;          /* visible-devices variable of the local
                                     node, NULL when it has no GPUs */

    struct lease_book *book;      /* the leases, and which connection holds
                                     each (the holder key: struct conn *) */
    struct lease_watch *watch;    /* their ttls, owners, restored holders */
    struct journal *journal;
    struct conn *conns;           /* every open connection */
    int nconns, nwatchers;
    uint64_t next_conn;
    int npending;

    struct evconnlistener *listener;
    char socket_path[108];
    bool own_socket;              /* we bound it: remove it on exit */
    char state_dir[PATH_MAX];

    int events_fd;
    struct evbuffer *events_buf;  /* events not yet in the log */
    struct event *events_ev;      /* writes them out soon */
    off_t events_start;           /* where this run's events begin */

    double started;               /* wall clock */
    bool draining, stopping;
    int exit_code;
    struct event *drain_timer, *sched_ev, *status_ev, *watchdog_ev,
                 *sig_ev[4];
    bool sched_busy;
    int nhalfclosed;              /* connections whose client has shut down
                                     its sending side */
    struct event *hup_ev;         /* checks those once a second */

    /* The job's end (jobend.c): learnt lazily, asked of the scheduler at
     * most once, off the loop. */
    double job_end;               /* Unix time; < 0: unknown */
    enum jobend_state job_end_state;
    struct deadline_source job_end_src;
    struct jobend_query *job_end_query;   /* while JOBEND_ASKING */
};

/* A connection's life, in order; it only moves forward (server.c), and
 * any state may end in CONN_DEAD. */
enum conn_state {
    CONN_OPEN,                    /* requests read and served */
    CONN_CLOSING,                 /* read no more; linger once written */
    CONN_LINGERING,               /* written and shut for writing: discard
                                     input until the peer closes */
    CONN_DEAD,                    /* to be freed from the deferred event */
};

/* One client connection. */
struct conn {
    struct berthd *d;
    struct bufferevent *bev;      /* its replies (and the socket) */
    struct evbuffer *in;          /* request bytes read, not yet served */
    struct event *read_ev;        /* the socket readable: server.c reads it
                                     itself, not through the bufferevent */
    uint64_t serial;
    pid_t pid;
    uid_t uid;
    uint64_t start;               /* the peer's start time (pidstart.h), read
                                     at its first grant; 0: unknown */
    bool start_read;
    enum conn_state state;        /* where it is on its way to being freed */
    bool eof;                     /* the client sends no more (half-closed);
                                     stays set while it closes, for hup_cb and
                                     d->nhalfclosed */
    bool awaits_end;              /* its next request needs the job's end,
                                     being asked: it stays unread until then
                                     (jobend.c) and is served again */
    bool paused;                  /* unread output over CONN_OUTPUT_PAUSE:
                                     its requests wait unread (in any state) */
    bool processing;              /* conn_process is reading its lines (a
                                     guard against re-entry, not a state) */
    bool watching;                /* subscribed to events (dispatch.c) */
    struct event *stall_ev;       /* closes it if it stays paused */
    size_t stall_mark;            /* unsent bytes when last checked */
    size_t history_left;          /* bytes of the events log queued for it
                                     (on disk, not in memory) */
    struct evbuffer_cb_entry *drained;   /* counts history_left down */
    struct pending *pending;      /* the request this connection waits on */
    struct event *deferred;
    struct conn *prev, *next;
};

/* An acquire that is being served (waiting in the queue, or about to be
 * granted). */
struct pending {
    struct conn *conn;
    json_t *id;
    struct proto_acquire acq;
    struct step_shape shape;
    enum ledger_layout layout;
    uint64_t ticket;              /* 0 while not queued */
    struct event *timer;          /* its wait timeout */
    double added;                 /* monotonic */
    uint64_t wait_id;             /* its journaled wait record; 0: none */
    bool resumed;                 /* took back a place from before a restart */
    double since;                 /* wall clock: when it first arrived (before
                                     a restart, for a resumed one) */
};

/* berthd.c (and seconds_tv: timeval.h) */
void berthd_stop (struct berthd *d, int code);   /* leave the loop */
void berthd_check_drained (struct berthd *d);

/* server.c. A connection whose unread output (replies, events) passes
 * CONN_OUTPUT_PAUSE is not served further until its client has read it
 * down; it is closed when it reads none of it for cfg.output_stall seconds,
 * or at once past CONN_OUTPUT_MAX. The events log a watcher asked to replay
 * is queued from its file and does not count. */
#define CONN_OUTPUT_PAUSE (1u << 20)
#define CONN_OUTPUT_MAX (64u << 20)
int server_listen (struct berthd *d, berth_error_t *err);
void server_close (struct berthd *d);
void conn_send (struct conn *c, json_t *msg);            /* steals msg */
/* A line already encoded (ending with a newline): stolen, freed here. */
void conn_send_line (struct conn *c, char *line, size_t len);
void conn_send_error (struct conn *c, json_t *id, const char *code,
                      const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
void conn_resume (struct conn *c);        /* read further requests soon */
void conn_kill (struct conn *c);          /* close soon, from the loop */
void server_flush_all (struct berthd *d);
void server_free_conns (struct berthd *d);   /* at exit */

/* event_loop.c */
void berthd_loop (struct berthd *d);   /* until the base is told to stop */

/* dispatch.c */
void dispatch_line (struct conn *c, const char *line, size_t len);
void dispatch_shutdown (struct berthd *d, bool force);

/* leases.c: the lease lifecycle on the book (lease_book.h), the watch
 * (lease_watch.h) and the journal (journal.h): grant, the environment, the
 * ways a lease ends, rebinding an orphaned one. */
void handle_acquire (struct conn *c, struct proto_request *req);
void handle_release (struct conn *c, struct proto_request *req);
void handle_reclaim (struct conn *c, struct proto_request *req);
void handle_placed (struct conn *c, struct proto_request *req);
/* A local step that the scheduler places (SCHEDULER mode): launched
 * through srun on berthd's node instead of bound by its client. */
bool lease_local_launched (const struct berthd *d, const struct lease *ls);
int lease_grant (struct berthd *d, struct pending *p, uint64_t lease_id,
                 berth_error_t *err);
void lease_end (struct berthd *d, struct lease *ls, const char *reason);
void lease_end_all (struct berthd *d, const char *reason);
void leases_conn_closed (struct conn *c);
/* An orphaned lease bound to c from now on (it ends when c closes); -1
 * when out of memory (nothing changed). */
int lease_rebind (struct berthd *d, struct conn *c, struct lease *ls,
                  berth_error_t *err);
/* The start time of c's peer, read once (0: unknown). */
uint64_t conn_peer_start (struct conn *c);
/* Build ls's BERTH_* variables unless it has them; -1 when out of memory
 * (ls unchanged). */
int lease_env (struct berthd *d, struct lease *ls, berth_error_t *err);
/* The book, the watch and the journal (before journal_open_ledger); freed
 * by leases_close. */
int leases_init (struct berthd *d, berth_error_t *err);
void leases_close (struct berthd *d);

/* queue.c */
void queue_submit (struct berthd *d, struct pending *p);
void queue_schedule_soon (struct berthd *d);
void queue_run (struct berthd *d);
void queue_conn_closed (struct conn *c);
void queue_refuse_all (struct berthd *d, const char *code, const char *msg);
void pending_reply_error (struct berthd *d, struct pending *p,
                          const berth_error_t *e);
void pending_free (struct pending *p);

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
bool jobend_wait (struct conn *c);
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
int events_history (struct berthd *d, struct conn *c);

/* notify.c: systemd's notification protocol (harmless without it). */
void notify_ready (struct berthd *d);
void notify_status_soon (struct berthd *d);
void notify_stopping (struct berthd *d);
int notify_init (struct berthd *d);

#endif
