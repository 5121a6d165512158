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
#include "launcher.h"
#include "lease_text.h"
#include "ledger.h"
#include "machine.h"
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

    struct idmap *leases;         /* lease id -> struct lease */
    char socket_path[108];
    char state_dir[PATH_MAX];
    /* Where events go live, and who hears that the job's end is known (the
     * connection layer, set up by berthd.c). */
    void (*event_sink) (void *arg, const char *line, size_t len);
    void (*end_known) (void *arg);
    void *sink_arg;

    int events_fd, journal_fd;
    char journal_path[PATH_MAX + 32];
    off_t journal_size;           /* bytes of whole records */
    int journal_records;          /* records in the file */
    int journal_retry;            /* no compaction before this many records
                                     (after one failed) */
    bool journal_dirty;           /* a record could not be written: rewrite
                                     the journal before the next grant */
    unsigned long journal_compactions;
    json_t *journal_start;        /* its first record, for rewrites */
    struct evbuffer *events_buf;  /* events not yet in the log */
    struct event *events_ev;      /* writes them out soon */
    json_t *journal_live;         /* grant records to restore at start */
    json_t *journal_waits;        /* and wait records, as places */
    struct place *places;         /* places not yet taken back */
    int nplaces;
    uint64_t next_wait;           /* the next wait record's id */
    struct event *places_ev;      /* drops them after the reclaim grace */
    int *journal_lines;           /* and their line numbers */
    double journal_opened;        /* monotonic, for the restore time */
    struct event *compact_ev;
    off_t events_start;           /* where this run's events begin */

    double started;               /* wall clock */
    bool draining, stopping;
    int exit_code;
    struct event *drain_timer, *status_ev, *watchdog_ev, *poll_ev,
                 *sig_ev[4];
    int npolled;                  /* leases whose owner is polled */

    /* The job's end (jobend.c): learnt lazily, asked of the scheduler at
     * most once, off the loop. */
    double job_end;               /* Unix time; < 0: unknown */
    enum jobend_state job_end_state;
    struct deadline_source job_end_src;
    struct jobend_query *job_end_query;   /* while JOBEND_ASKING */
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
    struct client *holder;        /* holder of a connection-bound lease;
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

/* log.c: stderr, with syslog priority prefixes when journald reads it. */
void log_init (void);
void log_msg (int prio, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
int log_to_file (const char *path);   /* stderr goes there from now on */
void log_reopen (void);               /* SIGHUP: reopen that file */

/* event_loop.c */
void berthd_loop (struct berthd *d);   /* until the base is told to stop */

/* leases.c */
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
/* An orphaned lease bound to cl from now on (it ends when cl goes). */
void lease_rebind (struct berthd *d, struct client *cl, struct lease *ls);
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

/* journal.c: grants and releases, restored after a crash, compacted while
 * running. Build the ledgers (d->ledger, d->empty) as the journal left them;
 * then, once the event loop and the queue exist, restore the lease records.
 * journal_grant fails (nothing recorded) when the grant cannot be written;
 * journal_release fails when the release could not be recorded (the journal
 * is then rewritten before the next grant). */
int journal_open_ledger (struct berthd *d, berth_error_t *err);
int journal_restore_leases (struct berthd *d, berth_error_t *err);
int journal_grant (struct berthd *d, const struct lease *ls,
                   const struct lease_text *lt, const struct waiter *w,
                   const char *request, berth_error_t *err);
/* A request that waits in the queue (p->wait_id is set; not recorded when
 * the journal cannot be written: it then only loses its place in a
 * restart), and one that left it ungranted (p->wait_id cleared). */
void journal_wait (struct berthd *d, struct waiter *w);
void journal_unwait (struct berthd *d, struct waiter *w);
/* The place of c's process's earliest request that waited when berthd went
 * away, taken (0), or -1 when it has none. */
int journal_take_place (struct berthd *d, struct client *cl,
                        struct place *out);
/* time: the release's wall clock as json_real_text writes it */
int journal_release (struct berthd *d, uint64_t id, const char *time,
                     const char *reason, berth_error_t *err);
/* A restored lease reclaimed by another process than the one recorded: its
 * new holder, for the next restart. */
int journal_reclaim (struct berthd *d, const struct lease *ls,
                     berth_error_t *err);
void journal_close (struct berthd *d);

/* notify.c: systemd's notification protocol (harmless without it). */
void notify_ready (struct berthd *d);
void notify_status_soon (struct berthd *d);
void notify_stopping (struct berthd *d);
int notify_init (struct berthd *d);

#endif
