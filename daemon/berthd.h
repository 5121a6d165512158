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
#include "events.h"
#include "idmap.h"
#include "jobend.h"
#include "launcher.h"
#include "lease_text.h"
#include "ledger.h"
#include "log.h"
#include "machine.h"
#include "notify.h"
#include "render.h"
#include "step.h"
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
struct lease;
struct pending;

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

    struct idmap *leases;         /* lease id -> struct lease */
    struct conn *conns;           /* every open connection */
    int nconns, nwatchers;
    uint64_t next_conn;
    int npending;

    struct evconnlistener *listener;
    char socket_path[108];
    bool own_socket;              /* we bound it: remove it on exit */
    char state_dir[PATH_MAX];

    int journal_fd;
    char journal_path[PATH_MAX + 32];
    off_t journal_size;           /* bytes of whole records */
    int journal_records;          /* records in the file */
    int journal_retry;            /* no compaction before this many records
                                     (after one failed) */
    bool journal_dirty;           /* a record could not be written: rewrite
                                     the journal before the next grant */
    unsigned long journal_compactions;
    json_t *journal_start;        /* its first record, for rewrites */
    json_t *journal_live;         /* grant records to restore at start */
    json_t *journal_waits;        /* and wait records, as places */
    struct place *places;         /* places not yet taken back */
    int nplaces;
    uint64_t next_wait;           /* the next wait record's id */
    struct event *places_ev;      /* drops them after the reclaim grace */
    int *journal_lines;           /* and their line numbers */
    double journal_opened;        /* monotonic, for the restore time */
    struct event *compact_ev;

    double started;               /* wall clock */
    bool draining, stopping;
    int exit_code;
    struct event *drain_timer, *sched_ev, *poll_ev, *sig_ev[4];
    bool sched_busy;
    int npolled;                  /* leases whose owner is polled */
    int nhalfclosed;              /* connections whose client has shut down
                                     its sending side */
    struct event *hup_ev;         /* checks those once a second */

    /* The daemon's objects, each with its own header; what they must tell
     * the daemon goes through the callbacks berthd.c gives them. */
    struct events *events;        /* the events log (events.h) */
    struct jobend *jobend;        /* the job's end (jobend.h) */
    struct notify *notify;        /* systemd's notifications (notify.h) */
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
                                     (conn_await_end) and is served again */
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
    struct lease *leases;         /* its connection-bound leases */
    int nleases;
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

/* A request that waited when berthd went away, as the journal recorded it:
 * an acquire with "resume" from the same process takes its place back. */
struct place {
    uint64_t wait_id;
    double since;                 /* wall clock */
    pid_t pid;
    uint64_t start;               /* 0: unknown */
    uid_t uid;
};

struct lease {
    uint64_t id;
    char name[32];
    struct conn *conn;            /* holder of a connection-bound lease;
                                     NULL when detached or orphaned */
    bool detached, local;
    char *label;
    struct step_shape shape;
    enum ledger_layout layout;
    struct placement placement;
    struct launch launch;         /* argv NULL: no launch rendered */
    struct env_set_item *env;
    int nenv;
    pid_t peer_pid, owner_pid;
    uint64_t peer_start;          /* the holder's start time (pidstart.h);
                                     0: unknown */
    uid_t uid;
    double granted;               /* wall clock */
    double reclaim_by;            /* wall clock: a restored lease whose holder
                                     cannot be watched is freed then unless
                                     reclaimed; < 0: none */
    double expires;               /* wall clock; < 0: no ttl */
    struct event *ttl_ev, *owner_ev, *grace_ev;
    int pidfd;                    /* -1: none */
    pid_t watched;                /* the process whose exit ends the lease:
                                     its owner, or after a restart the holder
                                     of an orphaned lease; 0: none */
    json_t *request;              /* the id of the request it answered, so
                                     that one sent again after a restart
                                     whose reply the crash swallowed gets
                                     it (NULL: unknown) */
    uint64_t watched_start;       /* its start time, checked by the poll
                                     (a reused pid is a gone holder); 0: not
                                     checked */
    bool polled;                  /* watched is checked by the 1 s poll */
    struct lease *cprev, *cnext;  /* in conn->leases */
};

/* berthd.c */
struct timeval seconds_tv (double s);      /* for libevent timers */
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
/* Queue len bytes of file fd from off after what is queued (fd is taken
 * over): read from the file as it is sent, not held against the output
 * limit. -1 when it cannot be queued. */
int conn_send_file (struct conn *c, int fd, off_t off, size_t len);
/* A handler whose request needs the job's end calls this first and returns
 * when it says true: the end is being asked (the query started now if it
 * was not), and the request is served again once it is known
 * (server_resume_awaiting). False while draining: a drain waits for no
 * query. */
bool conn_await_end (struct conn *c);
/* Serve again the connections whose requests wait for the job's end (its
 * answer arrived, or berthd drains). */
void server_resume_awaiting (struct berthd *d);
/* The events sink (events_set_sink, arg d): each line to the connections
 * that watch. */
void server_event_line (void *arg, const char *line, size_t len);
void conn_kill (struct conn *c);          /* close soon, from the loop */
void server_flush_all (struct berthd *d);
void server_free_conns (struct berthd *d);   /* at exit */

/* event_loop.c */
void berthd_loop (struct berthd *d);   /* until the base is told to stop */

/* dispatch.c */
void dispatch_line (struct conn *c, const char *line, size_t len);
void dispatch_shutdown (struct berthd *d, bool force);

/* leases.c */
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
/* An orphaned lease bound to c from now on (it ends when c closes). */
void lease_rebind (struct berthd *d, struct conn *c, struct lease *ls);
/* The process is gone (kill says ESRCH). */
bool process_gone (pid_t pid);
struct lease *lease_lookup (struct berthd *d, const char *name);
/* End ls when process pid exits (pid <= 0: nothing to watch). 0: watched;
 * 1: pid is already gone; -1: out of resources. */
int lease_watch_pid (struct berthd *d, struct lease *ls, pid_t pid);
/* After a restart: hold an orphaned connection-bound lease for as long as
 * its holder (peer_pid, and peer_start when known) lives. 0: watched; 1:
 * the holder is gone (or its pid now names another process); 2: it cannot
 * be watched (no pid: another pid namespace's peer; no pidfd and no /proc
 * entry); -1: out of resources. */
int lease_watch_holder (struct berthd *d, struct lease *ls);
/* The start time of c's peer, read once (0: unknown). */
uint64_t conn_peer_start (struct conn *c);
void lease_unwatch (struct berthd *d, struct lease *ls);
int lease_arm_ttl (struct berthd *d, struct lease *ls);
/* A record of the ledger's lease ll (id, name, shape, layout), watching
 * nothing, with no expiry and no reclaim deadline; the grant and a restart
 * fill in the rest. NULL when out of memory. */
struct lease *lease_new (const struct ledger_lease *ll);
void lease_free (struct berthd *d, struct lease *ls);
/* The lease as the codec describes it (borrowed pointers; do not free). */
void lease_to_proto (const struct lease *ls, bool with_env,
                     struct proto_lease *out);
/* Build ls's BERTH_* variables unless it has them; -1 when out of memory
 * (ls unchanged). */
int lease_env (struct berthd *d, struct lease *ls, berth_error_t *err);
int leases_init (struct berthd *d, berth_error_t *err);

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

/* journal.c: grants and releases, restored after a crash, compacted while
 * running. Build the ledgers (d->ledger, d->empty) as the journal left them;
 * then, once the event loop and the queue exist, restore the lease records.
 * journal_grant fails (nothing recorded) when the grant cannot be written;
 * journal_release fails when the release could not be recorded (the journal
 * is then rewritten before the next grant). */
int journal_open_ledger (struct berthd *d, berth_error_t *err);
int journal_restore_leases (struct berthd *d, berth_error_t *err);
int journal_grant (struct berthd *d, const struct lease *ls,
                   const struct lease_text *lt, uint64_t wait,
                   const char *request, berth_error_t *err);
/* A request that waits in the queue (p->wait_id is set; not recorded when
 * the journal cannot be written: it then only loses its place in a
 * restart), and one that left it ungranted (p->wait_id cleared). */
void journal_wait (struct berthd *d, struct pending *p);
void journal_unwait (struct berthd *d, struct pending *p);
/* The place of c's process's earliest request that waited when berthd went
 * away, taken (0), or -1 when it has none. */
int journal_take_place (struct berthd *d, struct conn *c, struct place *out);
/* time: the release's wall clock as json_real_text writes it */
int journal_release (struct berthd *d, uint64_t id, const char *time,
                     const char *reason, berth_error_t *err);
/* A restored lease reclaimed by another process than the one recorded: its
 * new holder, for the next restart. */
int journal_reclaim (struct berthd *d, const struct lease *ls,
                     berth_error_t *err);
void journal_close (struct berthd *d);

#endif
