/* SPDX-License-Identifier: MIT */
/* libberth: the C client of berthd, the ledger of one batch allocation.
 *
 * A step process connects to berthd (the socket named by BERTH_SOCKET),
 * asks for a placement (a lease: nodes, core ids per node, GPUs, memory),
 * runs its work there, and releases it. The wire protocol is
 * protocol/PROTOCOL.md; this header is its stable C face.
 *
 *     berth_client_error_t err;
 *     berth_client_t *c = berth_connect (NULL, &err);          // $BERTH_SOCKET
 *     berth_request_t *r = berth_request_new ();
 *     berth_request_set_int (r, "cores", 4, &err);
 *     berth_request_set_string (r, "label", "analysis", &err);
 *     berth_lease_t *l = berth_acquire (c, r, &err);           // waits until it fits
 *     ... run on berth_lease_node (l, 0), berth_lease_cores (l, 0, &n) ...
 *     berth_release (c, berth_lease_id (l), &err);
 *     berth_lease_free (l); berth_request_free (r); berth_close (c);
 *
 * Conventions:
 * - Functions that can fail take a berth_client_error_t * last (may be NULL)
 *   and return -1 or NULL on failure, with err->code a stable code and
 *   err->message a sentence for people. A failed call has no other effect.
 * - Strings and arrays returned as `const` belong to the object they came
 *   from and live as long as it does. Returned `char *` are the caller's to
 *   free().
 * - A client is not thread-safe: use one per thread, or lock around calls.
 * - Unless a lease is detached, it belongs to the connection that acquired
 *   it: closing the client (or the process exiting) releases it.
 * - If berthd goes away (a crash, kill -9) and comes back on the same socket
 *   (systemd's Restart=on-failure, or started again on the same state
 *   directory), a call that finds the connection closed connects again,
 *   reclaims each lease the client holds by id, and sends its request again
 *   (a waiting acquire keeps its place in the queue): the caller sees only
 *   the reply. It keeps trying for up to 60 s from the loss (backoff from
 *   0.05 s to 1 s between tries); the variable BERTH_RECONNECT_S (seconds,
 *   0..86400; 0: never) or berth_set_reconnect changes that; a socket that
 *   stays missing for 1 s means berthd stopped on purpose, and the call
 *   fails then (closed). A shutdown is never sent again; events sent while
 *   berthd was away are lost.
 *
 * Link with `pkg-config --cflags --libs berth`. The ABI follows the soname
 * (libberth.so.0): functions are only added within it.
 */
#ifndef BERTH_BERTH_H
#define BERTH_BERTH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol version this library speaks (PROTOCOL.md "Versioning"). */
#define BERTH_PROTOCOL_VERSION 1

/* ---- errors ------------------------------------------------------------ */

typedef struct berth_client_error {
    char code[32];        /* stable, for programs: one of the codes below */
    char message[1024];   /* for people: what was wrong, with the figures */
} berth_client_error_t;

/* Codes berthd sends (PROTOCOL.md "Errors"). */
#define BERTH_ERR_INVALID_REQUEST "invalid_request"
#define BERTH_ERR_UNSATISFIABLE "unsatisfiable"
#define BERTH_ERR_TIMEOUT "timeout"
#define BERTH_ERR_NOT_FOUND "not_found"
#define BERTH_ERR_FORBIDDEN "forbidden"
#define BERTH_ERR_TOO_LARGE "too_large"
#define BERTH_ERR_SHUTTING_DOWN "shutting_down"
#define BERTH_ERR_UNSUPPORTED_VERSION "unsupported_version"
#define BERTH_ERR_BUSY "busy"
#define BERTH_ERR_INTERNAL "internal"
/* Codes of the client side. */
#define BERTH_ERR_CONNECT "connect"     /* no berthd at the socket, or no socket named */
#define BERTH_ERR_CLOSED "closed"       /* berthd closed the connection */
#define BERTH_ERR_PROTOCOL "protocol"   /* berthd sent something unreadable */
#define BERTH_ERR_USAGE "usage"         /* a bad argument to a libberth function */
#define BERTH_ERR_SYSTEM "system"       /* an I/O error or out of memory */
/* A code a newer berthd sends that this library does not know reads "error". */

/* ---- connections ------------------------------------------------------- */

typedef struct berth_client berth_client_t;

/* Connect to berthd at path; NULL means $BERTH_SOCKET, or when that is unset
 * the default socket of this job (as berthd chooses it). */
berth_client_t *berth_connect (const char *path, berth_client_error_t *err);

/* Close the connection: leases it holds that are not detached end, and a
 * request of it still waiting is dropped. NULL is allowed. */
void berth_close (berth_client_t *c);

/* The connection's file descriptor, to poll for events after berth_watch.
 * Read it only through this library. It changes when the client reconnects
 * (and is -1 after a reconnect that failed): ask again after each call. */
int berth_fd (const berth_client_t *c);

/* Reconnect for up to seconds (0..86400; 0: never) after berthd went away,
 * instead of BERTH_RECONNECT_S or the default of 60. */
int berth_set_reconnect (berth_client_t *c, double seconds,
                         berth_client_error_t *err);

/* Wait at most seconds (0..86400; 0, the default: no bound) for the reply
 * to each request from now on; past that the call fails with
 * BERTH_ERR_TIMEOUT, naming berthd's pid where its lock says it, and the
 * request may still take effect. For a client that must go on whatever
 * berthd does (berth run returns its step's status). */
int berth_set_answer_wait (berth_client_t *c, double seconds,
                           berth_client_error_t *err);

/* For a client that holds leases while it waits for something else (berth
 * run waits for its step): call it when berth_fd polls readable. If berthd
 * closed the connection, reconnect and reclaim now, as a request would. 0:
 * connected (again, or still); -1 closed when berthd did not come back in
 * time (the leases are then berthd's to end when this process exits). */
int berth_check (berth_client_t *c, berth_client_error_t *err);

/* The socket path this client connected to. */
const char *berth_socket_path (const berth_client_t *c);

/* Ask which protocol version berthd speaks (optional: requests without it
 * use the current version). *version: the version now in use; *server (may
 * be NULL): berthd's name and release, the caller frees it. */
int berth_hello (berth_client_t *c, int *version, char **server,
                 berth_client_error_t *err);

/* ---- requests ---------------------------------------------------------- */

/* What one step asks for, built field by field. Field names and ranges are
 * those of the acquire request in PROTOCOL.md:
 *   integers: ntasks, min_tasks, cpus_per_task, min_cpus_per_task, cores,
 *             min_cores, gpus, min_gpus, gpus_per_task, min_gpus_per_task
 *             (deprecated), memory, min_memory (MB), priority, owner_pid
 *   booleans: may_span_nodes, local, wait (default true), detach, env
 *   strings:  label
 *   seconds:  timeout, ttl
 * An unknown field, a field of another type, or a value out of range is an
 * invalid_request error naming the field, and leaves the request as it was.
 * Whether the figures make sense together is berthd's to say. */
typedef struct berth_request berth_request_t;

berth_request_t *berth_request_new (void);
void berth_request_free (berth_request_t *r);

int berth_request_set_int (berth_request_t *r, const char *field,
                           long long value, berth_client_error_t *err);
int berth_request_set_bool (berth_request_t *r, const char *field, int value,
                            berth_client_error_t *err);
int berth_request_set_string (berth_request_t *r, const char *field,
                              const char *value, berth_client_error_t *err);
int berth_request_set_seconds (berth_request_t *r, const char *field,
                               double seconds, berth_client_error_t *err);
/* The program (NULL-terminated, at least one non-empty item): berthd then
 * renders its launch for the placement (berth_lease_launch). */
int berth_request_set_argv (berth_request_t *r, const char *const *argv,
                            berth_client_error_t *err);

/* ---- launches ---------------------------------------------------------- */

/* A rendered launch: the argv to exec (directly, never through a shell) and
 * the environment changes to make first: unset these names, then set these
 * values. */
typedef struct berth_launch berth_launch_t;

/* NULL-terminated; NULL when the lease was acquired without argv. */
const char *const *berth_launch_argv (const berth_launch_t *l);
int berth_launch_nunset (const berth_launch_t *l);
const char *berth_launch_unset (const berth_launch_t *l, int i);
int berth_launch_nset (const berth_launch_t *l);
const char *berth_launch_set_name (const berth_launch_t *l, int i);
const char *berth_launch_set_value (const berth_launch_t *l, int i);
/* Apply the environment changes to this process (for a child about to exec). */
int berth_launch_apply_env (const berth_launch_t *l, berth_client_error_t *err);
/* Only for launches from berth_render; a lease's launch goes with the lease. */
void berth_launch_free (berth_launch_t *l);

/* ---- leases ------------------------------------------------------------ */

typedef struct berth_lease berth_lease_t;

/* Ask for a placement. Blocks until berthd grants it or refuses it:
 * refusals are unsatisfiable (not even the empty allocation holds it),
 * timeout (the request's "timeout" passed), busy ("wait" false and it does
 * not fit now), shutting_down, invalid_request. A signal does not interrupt
 * the wait. */
berth_lease_t *berth_acquire (berth_client_t *c, const berth_request_t *r,
                              berth_client_error_t *err);

/* End a lease by id. Unknown or already released: not_found, nothing
 * changes (also a lease berthd no longer had when this client reconnected
 * after a restart; a release that was in flight then counts as done);
 * another connection's lease that is not detached: forbidden. */
int berth_release (berth_client_t *c, const char *lease,
                   berth_client_error_t *err);

/* How a step ended, passed on with its release: berthd puts it into the
 * released event (berth report, berth status). */
typedef struct berth_outcome {
    int status;               /* as a shell reports it: 0..255; 127 not
                                 found, 126 not executable, 128+N signal N */
    int signal;               /* the signal that ended it, 0: none */
    const char *stopped;      /* NULL, or why berth stopped it: "signal",
                                 "time-limit", "timeout", "cancel" */
    const char *launch_error; /* NULL, or why the step never started */
    double wall_s, cpu_s;     /* < 0: not known */
    long long max_rss_kb;     /* < 0: not known */
} berth_outcome_t;

/* The outcome's fields all unknown, status 0. */
void berth_outcome_init (berth_outcome_t *o);
/* berth_release with the step's outcome (NULL: as berth_release). An
 * outcome out of range is usage, and nothing is released. */
int berth_release_outcome (berth_client_t *c, const char *lease,
                           const berth_outcome_t *o, berth_client_error_t *err);

/* From inside a local step that berthd had launched through the scheduler
 * (Slurm 20.11 and newer picks the CPUs of every step, local ones too):
 * tell berthd the core ids (and, ngpu_ids >= 0, the GPU indices) the step
 * really got, so that its lease shows them. Errors: not_found, forbidden (another user's lease),
 * invalid_request (not such a step, or not as many ids as it holds). */
int berth_placed (berth_client_t *c, const char *lease, const int *cores,
                  int ncores, const int *gpu_ids, int ngpu_ids,
                  berth_client_error_t *err);

void berth_lease_free (berth_lease_t *l);

const char *berth_lease_id (const berth_lease_t *l);        /* "L17" */
const char *berth_lease_label (const berth_lease_t *l);     /* NULL: none */
int berth_lease_nnodes (const berth_lease_t *l);
const char *berth_lease_node (const berth_lease_t *l, int i);
/* Core ids on node i, in the order tasks take them; *n their count. */
const int *berth_lease_cores (const berth_lease_t *l, int i, int *n);
int berth_lease_gpus (const berth_lease_t *l);               /* 0 included */
/* GPU indices, *n of them; NULL when berthd does not know them. */
const int *berth_lease_gpu_ids (const berth_lease_t *l, int *n);
long long berth_lease_memory_cap (const berth_lease_t *l);   /* MB; -1: none */
long long berth_lease_budget_mb (const berth_lease_t *l);    /* MB; -1: unknown */
int berth_lease_owner_pid (const berth_lease_t *l);          /* 0: not stated */
double berth_lease_granted (const berth_lease_t *l);         /* Unix s; < 0: not stated */
/* The rendered launch and environment delta (argv NULL without argv). */
const berth_launch_t *berth_lease_launch (const berth_lease_t *l);
/* The variables a step finds its share in: BERTH_LEASE, BERTH_NODES,
 * BERTH_CORES, BERTH_GPUS, BERTH_MEMORY_MB (left out when the machine has
 * no memory figure), as berthd sent them when the request asked "env", else
 * derived from the placement the same way; and whatever else berthd adds. */
int berth_lease_nenv (const berth_lease_t *l);
const char *berth_lease_env_name (const berth_lease_t *l, int i);
const char *berth_lease_env_value (const berth_lease_t *l, int i);
/* The lease as berthd described it: a JSON object, compact, caller frees. */
char *berth_lease_json (const berth_lease_t *l);
/* berthd's warning about the lease (such as a step that may outlast the
 * job), or NULL; valid while the lease is. */
const char *berth_lease_warning (const berth_lease_t *l);

/* ---- questions --------------------------------------------------------- */

/* The launch for a placement, holding nothing. placement_json is an object
 * as in a lease's "placement" ({"nodes": [...], "cores": [[...]], "gpus": N,
 * "gpu_ids": [...]}); "nodes" left out or [] with one core list: the
 * launcher's own node (no node names rendered); "gpu_ids" as one list per
 * node ([[0, 1], [2, 3]]) gives each node its own ids (refused, naming them,
 * where the launcher can set only one list). ntasks >= 1; cpus_per_task 0:
 * not given (no cpus-per-task flag rendered); memory_cap_mb < 0: none. */
berth_launch_t *berth_render (berth_client_t *c, const char *placement_json,
                              int ntasks, int cpus_per_task,
                              long long memory_cap_mb,
                              const char *const *argv,
                              berth_client_error_t *err);

/* What a lease's placement offers (lease NULL: the whole allocation), as a
 * JSON object (the reply without "id" and "ok"); caller frees. */
char *berth_resources (berth_client_t *c, const char *lease,
                       berth_client_error_t *err);

/* The ledger, leases and queue as a JSON object (the reply without "id" and
 * "ok"; PROTOCOL.md "status"); caller frees. */
char *berth_status (berth_client_t *c, berth_client_error_t *err);

/* berth_status with flags: BERTH_STATUS_TIME_LEFT finds the allocation's end
 * even where that costs berthd one scheduler query (once per daemon); a
 * plain status reports the end only when it is already known. */
#define BERTH_STATUS_TIME_LEFT 1
/* BERTH_STATUS_QUEUE_ONLY: the queue and the daemon members only; the
 * allocation is {} and the leases [] (cheap to ask often). */
#define BERTH_STATUS_QUEUE_ONLY 2
/* BERTH_STATUS_BRIEF: a person's view, cheap on a big job: allocation.totals
 * sums the whole job and daemon.leases and daemon.waiting count it, while
 * allocation.nodes holds the BERTH_STATUS_BRIEF_ROWS busiest nodes (every
 * node when the job has no more), leases the oldest that many and queue its
 * first that many; the reply says "brief". Not with QUEUE_ONLY. A berthd
 * older than this answers BERTH_ERR_INVALID_REQUEST. */
#define BERTH_STATUS_BRIEF 4
#define BERTH_STATUS_BRIEF_ROWS 50
char *berth_status_ex (berth_client_t *c, int flags, berth_client_error_t *err);
/* The queue entries of process pid's waiting requests only, with the daemon
 * member (its "waiting" counts the whole queue): what a progress poll needs,
 * at a cost that does not grow with the queue's JSON. A berthd older than
 * this answers BERTH_ERR_INVALID_REQUEST. */
char *berth_status_of_pid (berth_client_t *c, int pid, berth_client_error_t *err);

/* ---- events ------------------------------------------------------------ */

typedef struct berth_event berth_event_t;

enum berth_event_kind {
    BERTH_EVENT_GRANTED,     /* a lease was handed out */
    BERTH_EVENT_WAITED,      /* a request joined the queue */
    BERTH_EVENT_RELEASED,    /* a lease ended */
    BERTH_EVENT_REFUSED,     /* a request was refused */
    BERTH_EVENT_ALLOCATION,  /* berthd started serving an allocation (its
                              * nodes: berth_event_json) */
};

/* Subscribe this connection to events; history: first replay those logged
 * since berthd started. Other requests may still be made on it. */
int berth_watch (berth_client_t *c, int history, berth_client_error_t *err);

/* The next event: 1 and *ev set (free it with berth_event_free); 0 when
 * none came within timeout seconds (< 0: wait for ever); -1 on error
 * (closed when berthd went away). */
int berth_next_event (berth_client_t *c, double timeout, berth_event_t **ev,
                      berth_client_error_t *err);

void berth_event_free (berth_event_t *ev);
enum berth_event_kind berth_event_kind (const berth_event_t *ev);
const char *berth_event_name (const berth_event_t *ev);   /* "granted", ... */
double berth_event_time (const berth_event_t *ev);        /* Unix seconds */
/* granted: the lease; other kinds: NULL. */
const berth_lease_t *berth_event_lease (const berth_event_t *ev);
/* granted, released: the lease id; others: NULL. */
const char *berth_event_lease_id (const berth_event_t *ev);
const char *berth_event_label (const berth_event_t *ev);  /* NULL: none */
int berth_event_position (const berth_event_t *ev);       /* waited: 1 = next */
/* waited: why it waits; released: the reason ("released", "disconnected",
 * "expired", "owner_exited", "forced"); others: NULL. */
const char *berth_event_why (const berth_event_t *ev);
/* refused: the error; other kinds: NULL. */
const char *berth_event_error_code (const berth_event_t *ev);
const char *berth_event_error_message (const berth_event_t *ev);
/* The event as berthd sent it, compact JSON; caller frees. */
char *berth_event_json (const berth_event_t *ev);

/* ---- stopping berthd --------------------------------------------------- */

enum berth_shutdown_mode {
    BERTH_SHUTDOWN_DRAIN,    /* refuse new grants, let leases end, then exit */
    BERTH_SHUTDOWN_FORCE,    /* end every lease now and exit */
};

/* Ask berthd to stop. wait < 0: return once it has begun; else also wait
 * up to wait seconds for berthd to finish (it closes this connection and
 * removes its socket): timeout when it has not by then. */
int berth_shutdown (berth_client_t *c, enum berth_shutdown_mode mode,
                    double wait, berth_client_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
