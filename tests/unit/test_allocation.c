/* SPDX-License-Identifier: MIT */
/* Allocation discovery against fake environments: a fake squeue / qstat
 * first on PATH records every call, recorded sysfs / proc / cgroup trees
 * stand in for the node. */
#include <string.h>
#include <unistd.h>

#include "allocation.h"
#include "allocation_discover.h"
#include "allocation_json.h"
#include "codec.h"
#include "idset.h"
#include "testutil.h"

struct fake {
    char calls[64];
    char vars[24][4300];
    char *envp[25];
    int n;
    int aff[256];
    char sysfs[4300];
    struct allocation_env env;
    struct machine_parallel par;
};

static struct fake F;

static void fake_set (const char *fmt, const char *value)
{
    ck_assert_int_lt (F.n, 24);
    snprintf (F.vars[F.n], sizeof (F.vars[0]), fmt, value);
    F.envp[F.n] = F.vars[F.n];
    F.envp[++F.n] = NULL;
}

/* Root of a memory fixture's tree ("memory/nolimit", "proc"). */
static const char *tree (const char *fixture, const char *part)
{
    static char buf[4][4300];
    static int k;
    k = (k + 1) % 4;
    snprintf (buf[k], sizeof (buf[k]), "%s/%s", testdata (fixture), part);
    return buf[k];
}

static void setup (void)
{
    memset (&F, 0, sizeof (F));
    snprintf (F.calls, sizeof (F.calls), "/tmp/berth-calls-XXXXXX");
    int fd = mkstemp (F.calls);
    ck_assert_int_ge (fd, 0);
    close (fd);
    fake_set ("PATH=%s:/usr/bin:/bin", testdata ("fake-scheduler"));
    fake_set ("FAKE_CALLS=%s", F.calls);
    for (int i = 0; i < 256; i++)
        F.aff[i] = i;
    snprintf (F.sysfs, sizeof (F.sysfs), "%s", testdata ("sysfs/perlmutter"));
    F.env = (struct allocation_env){
        .envp = F.envp,
        .hostname = "nid000001",
        .user = "alice",
        .sysfs_root = F.sysfs,
        .affinity_ids = F.aff,
        .naffinity = 256,
        .query_timeout_s = 10,
    };
    F.env.proc_root = strdup (tree ("memory/nolimit", "proc"));
    F.env.cgroup_root = strdup (tree ("memory/nolimit", "cgroup"));
    F.par = (struct machine_parallel){
        .system = BERTH_SYSTEM_SLURM,
        .cores_per_node = 128,
        .gpus_per_node = 0,
        .memory_per_node = 200000,
        .login_cores = 4,
        .login_gpus = 0,
    };
}

static void teardown (void)
{
    unlink (F.calls);
    free ((char *) F.env.proc_root);
    free ((char *) F.env.cgroup_root);
}

static void use_memory (const char *fixture)
{
    free ((char *) F.env.proc_root);
    free ((char *) F.env.cgroup_root);
    F.env.proc_root = strdup (tree (fixture, "proc"));
    F.env.cgroup_root = strdup (tree (fixture, "cgroup"));
}

/* Lines of the calls file; line i (0-based) in *line when asked. */
static int ncalls (int i, char *line, size_t size)
{
    FILE *f = fopen (F.calls, "r");
    char buf[1024];
    int n = 0;
    ck_assert_ptr_nonnull (f);
    while (fgets (buf, sizeof (buf), f)) {
        if (n == i && line) {
            buf[strcspn (buf, "\n")] = '\0';
            snprintf (line, size, "%s", buf);
        }
        n++;
    }
    fclose (f);
    return n;
}

static const char *call (int i)
{
    static char line[1024];
    line[0] = '\0';
    ncalls (i, line, sizeof (line));
    return line;
}

static struct allocation *discover (void)
{
    struct allocation *a = NULL;
    berth_error_t err;
    ck_assert_msg (allocation_discover (&F.par, "pm-cpu", &F.env, &a, &err)
                       == 0, "discover failed: %s", err.text);
    return a;
}

static const char *discover_error (const char *code)
{
    static berth_error_t err;
    struct allocation *a = (struct allocation *) 1;
    ck_assert_int_eq (allocation_discover (&F.par, "pm-cpu", &F.env, &a, &err),
                      -1);
    ck_assert_ptr_eq (a, (struct allocation *) 1);
    ck_assert_str_eq (err.code, code);
    return err.text;
}

static const char *cores_text (const struct allocation_node *nd)
{
    static char buf[1024];
    idset_format (nd->core_ids, nd->ncores, buf, sizeof (buf));
    return buf;
}

static bool warned (const struct allocation *a, const char *text)
{
    for (int i = 0; i < a->nwarnings; i++)
        if (strstr (a->warnings[i], text))
            return true;
    return false;
}

static void slurm_job (const char *nodelist)
{
    fake_set ("SLURM_JOB_ID=%s", "4242");
    if (nodelist)
        fake_set ("SLURM_JOB_NODELIST=%s", nodelist);
}

/* ---- liveness --------------------------------------------------------- */

START_TEST (proof_by_slurmd_nodename_makes_no_call)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("SLURM_JOB_NUM_NODES=%s", "3");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("FAKE_MODE=%s", "down");
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_int_eq (a->system, BERTH_SYSTEM_SLURM);
    ck_assert_str_eq (a->job_id, "4242");
    ck_assert_str_eq (a->liveness, "local proof: SLURMD_NODENAME");
    ck_assert_int_eq (a->nnodes, 3);
    ck_assert_str_eq (a->nodes[2].name, "nid000003");
    ck_assert_int_eq (a->local_node, 0);
    ck_assert (a->mpi_allowed);
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq (cores_text (&a->nodes[i]), "0-127");
        ck_assert_int_eq (a->nodes[i].memory_configured_mb, 200000);
        ck_assert_int_eq (a->nodes[i].memory_credited_mb, 200000);
    }
    ck_assert_int_eq (a->nwarnings, 0);
    allocation_destroy (a);
}
END_TEST

START_TEST (proof_by_host_in_node_list_short_names)
{
    slurm_job ("nid000005,nid000001");
    fake_set ("FAKE_MODE=%s", "down");
    F.env.hostname = "nid000001.chn.perlmutter.nersc.gov";
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_str_eq (a->liveness, "local proof: host in node list");
    ck_assert_int_eq (a->local_node, 1);
    ck_assert_int_eq (a->nnodes, 2);
    allocation_destroy (a);
}
END_TEST

START_TEST (proof_by_cgroup_on_a_shared_host)
{
    /* The local test cluster: nodes node1..3 on host vm. */
    slurm_job ("node[1-3]");
    fake_set ("SLURMD_NODENAME=%s", "node2");
    fake_set ("FAKE_MODE=%s", "down");
    F.env.hostname = "vm";
    use_memory ("memory/v2-limit");
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_str_eq (a->liveness, "local proof: cgroup job_4242");
    ck_assert_int_eq (a->local_node, 1);
    allocation_destroy (a);
}
END_TEST

START_TEST (cgroup_of_another_job_is_no_proof)
{
    fake_set ("SLURM_JOB_ID=%s", "424");
    fake_set ("SLURM_JOB_NODELIST=%s", "node[1-3]");
    fake_set ("FAKE_MODE=%s", "live");
    F.env.hostname = "vm";
    use_memory ("memory/v2-limit");
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
    ck_assert_str_eq (call (0), "squeue --noheader -t all -j 424 -o %T");
    ck_assert_str_eq (a->liveness, "one query");
    allocation_destroy (a);
}
END_TEST

START_TEST (one_query_proves_a_remote_allocation)
{
    /* A salloc shell on a login node: nothing local, one query. */
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "live");
    F.env.hostname = "login01";
    F.env.naffinity = 2; /* this host's topology must not matter */
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
    ck_assert_str_eq (call (0), "squeue --noheader -t all -j 4242 -o %T");
    ck_assert_str_eq (a->liveness, "one query");
    ck_assert_int_eq (a->system, BERTH_SYSTEM_SLURM);
    ck_assert_int_eq (a->local_node, -1);
    ck_assert_int_eq (a->nnodes, 3);
    ck_assert_str_eq (cores_text (&a->nodes[1]), "0-127");
    ck_assert_int_eq (a->nodes[0].memory_credited_mb, 200000);
    ck_assert_int_eq (a->nwarnings, 0);
    allocation_destroy (a);
}
END_TEST

START_TEST (dead_job_one_call_then_login)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "dead");
    F.env.hostname = "login01";
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
    ck_assert_int_eq (a->system, BERTH_SYSTEM_LOGIN);
    ck_assert_ptr_null (a->job_id);
    ck_assert_str_eq (a->liveness, "none");
    ck_assert (!a->mpi_allowed);
    ck_assert_int_eq (a->nnodes, 1);
    ck_assert_str_eq (a->nodes[0].name, "login01");
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-3");
    ck_assert_int_eq (a->nodes[0].memory_configured_mb, -1);
    ck_assert_int_eq (a->nodes[0].memory_credited_mb, -1);
    ck_assert_int_eq (a->nwarnings, 1);
    ck_assert (warned (a, "Slurm job 4242 is COMPLETED (squeue), not running"));
    ck_assert (warned (a, "start a new allocation (salloc or sbatch) or unset "
                          "SLURM_JOB_ID; working as a login node"));
    allocation_destroy (a);
}
END_TEST

START_TEST (no_record_is_not_live)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "empty");
    F.env.hostname = "login01";
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
    ck_assert_int_eq (a->system, BERTH_SYSTEM_LOGIN);
    ck_assert (warned (a, "Slurm job 4242 is gone (squeue lists nothing)"));
    allocation_destroy (a);
}
END_TEST

START_TEST (dead_job_refused_by_the_daemon)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "dead");
    F.env.hostname = "login01";
    F.env.refuse_stale = true;
    const char *msg = discover_error ("allocation_not_live");
    ck_assert_ptr_nonnull (strstr (msg, "Slurm job 4242 is COMPLETED"));
    ck_assert_ptr_null (strstr (msg, "login node"));
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
}
END_TEST

static int lookups;

static const char *lookup_bob (void)
{
    lookups++;
    return "bob";
}

/* The account database is asked only when a query names the user. */
START_TEST (account_looked_up_only_for_a_query)
{
    F.env.user = NULL;
    F.env.user_lookup = lookup_bob;
    lookups = 0;
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "purged");
    struct allocation *a = discover ();     /* this host is in the job */
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_int_eq (lookups, 0);
    allocation_destroy (a);
    F.env.hostname = "login01";
    a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 2);
    ck_assert_str_eq (call (1), "squeue --noheader -u bob -o %i");
    ck_assert_int_eq (lookups, 1);
    allocation_destroy (a);
}
END_TEST

START_TEST (purged_job_two_calls_then_login)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "purged");
    F.env.hostname = "login01";
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 2);
    ck_assert_str_eq (call (0), "squeue --noheader -t all -j 4242 -o %T");
    ck_assert_str_eq (call (1), "squeue --noheader -u alice -o %i");
    ck_assert_int_eq (a->system, BERTH_SYSTEM_LOGIN);
    ck_assert (warned (a, "Slurm job 4242 is not known to the scheduler"));
    ck_assert (warned (a, "Invalid job id specified"));
    allocation_destroy (a);

    F.env.refuse_stale = true;
    const char *msg = discover_error ("allocation_not_live");
    ck_assert_ptr_nonnull (strstr (msg, "4242 is not known"));
}
END_TEST

START_TEST (unreachable_scheduler_is_an_error)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "down");
    F.env.hostname = "login01";
    const char *msg = discover_error ("scheduler_unreachable");
    ck_assert_int_eq (ncalls (0, NULL, 0), 2);
    ck_assert_ptr_nonnull (strstr (msg, "cannot tell whether Slurm job 4242 "
                                   "is still running"));
    ck_assert_ptr_nonnull (strstr (msg, "Unable to contact slurm controller"));
    ck_assert_ptr_nonnull (strstr (msg, "unset SLURM_JOB_ID"));
}
END_TEST

START_TEST (hung_scheduler_times_out)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("FAKE_MODE=%s", "slow");
    F.env.hostname = "login01";
    F.env.query_timeout_s = 0.2;
    const char *msg = discover_error ("scheduler_unreachable");
    ck_assert_ptr_nonnull (strstr (msg, "did not finish within 0.2 s"));
    ck_assert_int_eq (ncalls (0, NULL, 0), 2);
}
END_TEST

START_TEST (no_squeue_at_all)
{
    F.vars[0][0] = '\0';
    snprintf (F.vars[0], sizeof (F.vars[0]), "PATH=/nonexistent");
    slurm_job ("nid[000001-000003]");
    F.env.hostname = "login01";
    const char *msg = discover_error ("scheduler_unreachable");
    ck_assert_ptr_nonnull (strstr (msg, "squeue not found on PATH"));
}
END_TEST

START_TEST (no_job_id_is_a_login_node)
{
    fake_set ("SLURM_JOB_NODELIST=%s", "nid000001");
    fake_set ("SLURM_JOB_ID=%s", ""); /* empty counts as unset */
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_int_eq (a->system, BERTH_SYSTEM_LOGIN);
    ck_assert_str_eq (a->nodes[0].name, "nid000001");
    ck_assert_int_eq (a->nwarnings, 0);
    allocation_destroy (a);
}
END_TEST

/* ---- Slurm resources -------------------------------------------------- */

START_TEST (node_count_variables)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("SLURM_JOB_NUM_NODES=%s", "three");
    fake_set ("SLURM_NNODES=%s", "2");
    struct allocation *a = discover ();
    ck_assert (warned (a, "SLURM_JOB_NUM_NODES='three' is not a node count; "
                          "ignoring it"));
    ck_assert (warned (a, "says 2 nodes but the node list names 3; using the "
                          "names"));
    ck_assert_int_eq (a->nnodes, 3);
    allocation_destroy (a);
}
END_TEST

START_TEST (malformed_node_list_falls_back)
{
    slurm_job ("nid[000001-");
    fake_set ("SLURM_NODELIST=%s", "nid[000001-000002]");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    struct allocation *a = discover ();
    ck_assert (warned (a, "SLURM_JOB_NODELIST='nid[000001-' is not a host "
                          "list"));
    ck_assert_int_eq (a->nnodes, 2);
    ck_assert_str_eq (a->nodes[1].name, "nid000002");
    allocation_destroy (a);
}
END_TEST

START_TEST (count_without_names)
{
    slurm_job (NULL);
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("SLURM_NNODES=%s", "2");
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_int_eq (a->nnodes, 2);
    ck_assert_str_eq (a->nodes[1].name, "slurm-node-1");
    ck_assert_int_eq (a->local_node, 0);
    ck_assert (warned (a, "no usable SLURM_JOB_NODELIST or SLURM_NODELIST"));
    allocation_destroy (a);
}
END_TEST

START_TEST (squeue_node_count_as_last_resort)
{
    slurm_job (NULL);
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("FAKE_MODE=%s", "count");
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
    ck_assert_str_eq (call (0), "squeue --noheader -j 4242 -o %D");
    ck_assert_int_eq (a->nnodes, 4);
    allocation_destroy (a);

    teardown ();
    setup ();
    slurm_job (NULL);
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("FAKE_MODE=%s", "down");
    const char *msg = discover_error ("command_failed");
    ck_assert_ptr_nonnull (strstr (msg, "cannot tell how many nodes Slurm job "
                                   "4242 has"));

    teardown ();
    setup ();
    slurm_job (NULL);
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("FAKE_MODE=%s", "live"); /* prints RUNNING, not a count */
    msg = discover_error ("error");
    ck_assert_ptr_nonnull (strstr (msg, "printed 'RUNNING', not a count"));
}
END_TEST

START_TEST (cpus_per_node_below_config)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("SLURMD_NODENAME=%s", "nid000003");
    F.env.hostname = "nid000003";
    fake_set ("SLURM_JOB_CPUS_PER_NODE=%s", "64(x2),32");
    struct allocation *a = discover ();
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-63");
    ck_assert_str_eq (cores_text (&a->nodes[1]), "0-63");
    ck_assert_str_eq (cores_text (&a->nodes[2]), "0-31");
    ck_assert_int_eq (a->local_node, 2);
    ck_assert (warned (a, "SLURM_JOB_CPUS_PER_NODE=64(x2),32 gives fewer cores "
                          "than cores_per_node = 128 of machine pm-cpu on 3 "
                          "of 3 nodes"));
    allocation_destroy (a);
}
END_TEST

START_TEST (cpus_per_node_unusable)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        { "64(x2", "is not a list such as '64(x2),32'" },
        { "64,", "is not a list" },
        { "abc", "is not a list" },
        { "64(x4)", "describes 4 nodes, the allocation has 3" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        teardown ();
        setup ();
        slurm_job ("nid[000001-000003]");
        fake_set ("SLURMD_NODENAME=%s", "nid000001");
        fake_set ("SLURM_JOB_CPUS_PER_NODE=%s", cases[i].text);
        struct allocation *a = discover ();
        ck_assert_msg (warned (a, cases[i].want), "%s", cases[i].text);
        ck_assert_int_eq (a->nodes[0].ncores, 128);
        allocation_destroy (a);
    }
}
END_TEST

START_TEST (config_without_cores_takes_environment)
{
    F.par.cores_per_node = 0;
    slurm_job ("nid[000001-000002]");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    fake_set ("SLURM_JOB_CPUS_PER_NODE=%s", "16(x2)");
    struct allocation *a = discover ();
    ck_assert_int_eq (a->nodes[1].ncores, 16);
    ck_assert_int_eq (a->nwarnings, 0);
    allocation_destroy (a);
}
END_TEST

START_TEST (no_core_count_anywhere)
{
    F.par.cores_per_node = 0;
    slurm_job ("nid[000001-000002]");
    fake_set ("FAKE_MODE=%s", "live");
    F.env.hostname = "login01";
    const char *msg = discover_error ("error");
    ck_assert_ptr_nonnull (strstr (msg, "machine pm-cpu sets no cores_per_node "
                                   "and nothing tells the cores of node "
                                   "nid000001"));
}
END_TEST

/* ---- cores from this node's topology ---------------------------------- */

START_TEST (frontier_held_back_cores_apply_to_every_node)
{
    snprintf (F.sysfs, sizeof (F.sysfs), "%s", testdata ("sysfs/frontier"));
    int n = 0;
    for (int i = 0; i < 128; i++)
        if ((i % 64) % 8)
            F.aff[n++] = i;
    F.env.naffinity = n;
    F.par.cores_per_node = 56;
    slurm_job ("frontier[00001-00002]");
    fake_set ("SLURMD_NODENAME=%s", "frontier00001");
    F.env.hostname = "frontier00001";
    struct allocation *a = discover ();
    for (int i = 0; i < 2; i++)
        ck_assert_str_eq (cores_text (&a->nodes[i]),
                          "1-7,9-15,17-23,25-31,33-39,41-47,49-55,57-63");
    ck_assert_int_eq (a->nwarnings, 0);
    allocation_destroy (a);
}
END_TEST

START_TEST (far_fewer_cores_numbered_from_zero)
{
    F.env.naffinity = 2; /* ids 0 and 1: two physical cores */
    slurm_job ("nid[000001-000002]");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    struct allocation *a = discover ();
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-127");
    ck_assert_str_eq (cores_text (&a->nodes[1]), "0-127");
    ck_assert_int_eq (a->nwarnings, 1);
    ck_assert (warned (a, "node nid000001: this process may use only 2 "
                          "physical cores, less than half"));
    allocation_destroy (a);
}
END_TEST

START_TEST (fewer_cores_used_with_warning)
{
    F.env.naffinity = 100; /* ids 0-99: 100 physical cores */
    slurm_job ("nid000001");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    struct allocation *a = discover ();
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-99");
    ck_assert (warned (a, "only 100 physical cores of cores_per_node = 128"));
    allocation_destroy (a);
}
END_TEST

/* ---- memory ----------------------------------------------------------- */

START_TEST (credited_memory_below_config)
{
    use_memory ("memory/v2-limit");
    slurm_job ("nid[000001-000002]");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    struct allocation *a = discover ();
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq (a->nodes[i].memory_configured_mb, 200000);
        ck_assert_int_eq (a->nodes[i].memory_credited_mb, 8192);
    }
    ck_assert (warned (a, "node nid000001 can give 8192 MB (cgroup limit 8192 "
                          "MB, MemAvailable 239633 MB), less than "
                          "memory_per_node = 200000 MB of machine pm-cpu; "
                          "accounting with 8192 MB per node"));
    allocation_destroy (a);
}
END_TEST

START_TEST (memory_unknown_stays_unknown)
{
    F.par.memory_per_node = -1;
    fake_set ("FAKE_MODE=%s", "live");
    slurm_job ("nid[000001-000002]");
    F.env.hostname = "login01"; /* not on a node: nothing measured */
    struct allocation *a = discover ();
    ck_assert_int_eq (a->nodes[0].memory_configured_mb, -1);
    ck_assert_int_eq (a->nodes[0].memory_credited_mb, -1);
    json_t *o = allocation_to_json (a);
    ck_assert (json_is_null (json_object_get (json_object_get (o, "totals"),
                                              "memory_configured_mb")));
    ck_assert (json_is_null (json_object_get (
        json_array_get (json_object_get (o, "nodes"), 1),
        "memory_credited_mb")));
    json_decref (o);
    allocation_destroy (a);
}
END_TEST

START_TEST (unreadable_memory_is_a_warning)
{
    use_memory ("memory/garbage");
    slurm_job ("nid000001");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    struct allocation *a = discover ();
    ck_assert_int_eq (a->nodes[0].memory_credited_mb, 200000);
    ck_assert (warned (a, "cannot read this node's memory ("));
    ck_assert (warned (a, "cannot read memory limit 'lots'"));
    allocation_destroy (a);
}
END_TEST

/* ---- PBS -------------------------------------------------------------- */

START_TEST (pbs_node_file)
{
    F.par.system = BERTH_SYSTEM_PBS;
    fake_set ("PBS_JOBID=%s", "8123.pbs01");
    fake_set ("PBS_NODEFILE=%s", testdata ("pbs_nodefile"));
    fake_set ("FAKE_MODE=%s", "down");
    F.env.hostname = "x1001c0s0b1n0.hostmgmt.cm";
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 0);
    ck_assert_int_eq (a->system, BERTH_SYSTEM_PBS);
    ck_assert_str_eq (a->job_id, "8123.pbs01");
    ck_assert_str_eq (a->liveness, "none");
    ck_assert_int_eq (a->nnodes, 3);
    ck_assert_str_eq (a->nodes[0].name, "x1001c0s0b0n0");
    ck_assert_str_eq (a->nodes[1].name, "x1001c0s0b1n0");
    ck_assert_str_eq (a->nodes[2].name, "x1002c0s0b0n0");
    ck_assert_int_eq (a->local_node, 1);
    ck_assert (a->mpi_allowed);
    allocation_destroy (a);
}
END_TEST

START_TEST (pbs_qstat_fallback)
{
    static const struct {
        const char *file;
        int nodes;
    } cases[] = { { "nodect", 3 }, { "select", 2 }, { "nodes", 6 } };
    for (size_t i = 0; i < 3; i++) {
        teardown ();
        setup ();
        F.par.system = BERTH_SYSTEM_PBS;
        fake_set ("PBS_JOBID=%s", "8123.pbs01");
        fake_set ("FAKE_MODE=%s", "qstat");
        char path[300];
        snprintf (path, sizeof (path), "fake-scheduler/qstat-out/%s",
                  cases[i].file);
        fake_set ("FAKE_QSTAT=%s", testdata (path));
        struct allocation *a = discover ();
        ck_assert_int_eq (ncalls (0, NULL, 0), 1);
        ck_assert_str_eq (call (0), "qstat -f 8123.pbs01");
        ck_assert_int_eq (a->nnodes, cases[i].nodes);
        ck_assert_str_eq (a->nodes[0].name, "nid000001");
        ck_assert_int_eq (a->local_node, 0);
        ck_assert (warned (a, "has no PBS_NODEFILE"));
        allocation_destroy (a);
    }
}
END_TEST

START_TEST (pbs_errors)
{
    F.par.system = BERTH_SYSTEM_PBS;
    fake_set ("PBS_JOBID=%s", "8123.pbs01");
    fake_set ("FAKE_MODE=%s", "qstat");
    fake_set ("FAKE_QSTAT=%s", testdata ("fake-scheduler/qstat-out/nothing"));
    const char *msg = discover_error ("error");
    ck_assert_ptr_nonnull (strstr (msg, "cannot tell the nodes of PBS job "
                                   "8123.pbs01"));

    teardown ();
    setup ();
    F.par.system = BERTH_SYSTEM_PBS;
    fake_set ("PBS_JOBID=%s", "8123.pbs01");
    fake_set ("FAKE_MODE=%s", "down");
    msg = discover_error ("command_failed");
    ck_assert_ptr_nonnull (strstr (msg, "has no PBS_NODEFILE, and asking "
                                   "qstat failed: `qstat -f 8123.pbs01`"));

    teardown ();
    setup ();
    F.par.system = BERTH_SYSTEM_PBS;
    fake_set ("PBS_JOBID=%s", "8123.pbs01");
    fake_set ("PBS_NODEFILE=%s", "/nonexistent/nodefile");
    msg = discover_error ("error");
    ck_assert_ptr_nonnull (strstr (msg, "PBS_NODEFILE=/nonexistent/nodefile "
                                   "cannot be read"));
}
END_TEST

START_TEST (pbs_empty_node_file_asks_qstat)
{
    F.par.system = BERTH_SYSTEM_PBS;
    fake_set ("PBS_JOBID=%s", "8123.pbs01");
    fake_set ("PBS_NODEFILE=%s", "/dev/null");
    fake_set ("FAKE_MODE=%s", "qstat");
    fake_set ("FAKE_QSTAT=%s", testdata ("fake-scheduler/qstat-out/select"));
    struct allocation *a = discover ();
    ck_assert_int_eq (ncalls (0, NULL, 0), 1);
    ck_assert_int_eq (a->nnodes, 2);
    ck_assert_str_eq (a->nodes[1].name, "pbs-node-1");
    allocation_destroy (a);
}
END_TEST

START_TEST (pbs_without_job_is_login)
{
    F.par.system = BERTH_SYSTEM_PBS;
    struct allocation *a = discover ();
    ck_assert_int_eq (a->system, BERTH_SYSTEM_LOGIN);
    allocation_destroy (a);
}
END_TEST

/* ---- single node and login -------------------------------------------- */

START_TEST (single_node_cores_and_memory)
{
    F.par.system = BERTH_SYSTEM_SINGLE_NODE;
    F.par.cores_per_node = 0;
    F.par.memory_per_node = -1;
    F.par.gpus_per_node = 4;
    use_memory ("memory/v1-limit");
    F.env.hostname = "laptop.local";
    struct allocation *a = discover ();
    ck_assert_int_eq (a->nnodes, 1);
    ck_assert_str_eq (a->nodes[0].name, "laptop");
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-127");
    ck_assert_int_eq (a->nodes[0].gpus, 4);
    ck_assert_int_eq (a->nodes[0].memory_configured_mb, -1);
    ck_assert_int_eq (a->nodes[0].memory_credited_mb, 2048);
    ck_assert (a->mpi_allowed);
    ck_assert_str_eq (a->liveness, "none");
    ck_assert_int_eq (a->nwarnings, 0);
    allocation_destroy (a);

    F.par.cores_per_node = 8;
    a = discover ();
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-7");
    allocation_destroy (a);

    /* more configured than usable: what this process may use, no
     * renumbering */
    F.par.cores_per_node = 1000;
    F.env.naffinity = 3;
    a = discover ();
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-2");
    allocation_destroy (a);
}
END_TEST

START_TEST (login_system)
{
    F.par.system = BERTH_SYSTEM_LOGIN;
    F.par.login_cores = 2;
    F.par.login_gpus = 1;
    struct allocation *a = discover ();
    ck_assert_int_eq (a->system, BERTH_SYSTEM_LOGIN);
    ck_assert (!a->mpi_allowed);
    ck_assert_str_eq (cores_text (&a->nodes[0]), "0-1");
    ck_assert_int_eq (a->nodes[0].gpus, 1);
    ck_assert_int_eq (a->nodes[0].memory_credited_mb, -1);
    json_t *o = allocation_to_json (a);
    ck_assert (json_is_false (json_object_get (o, "mpi_allowed")));
    ck_assert (json_is_null (json_object_get (o, "job_id")));
    json_decref (o);
    allocation_destroy (a);
}
END_TEST

START_TEST (no_usable_core_at_all)
{
    F.par.system = BERTH_SYSTEM_SINGLE_NODE;
    F.par.cores_per_node = 0;
    F.env.naffinity = 0;
    const char *msg = discover_error ("error");
    ck_assert_ptr_nonnull (strstr (msg, "node nid000001: no usable cores"));
}
END_TEST

START_TEST (unknown_system)
{
    F.par.system = (enum berth_system) 42;
    const char *msg = discover_error ("error");
    ck_assert_ptr_nonnull (strstr (msg, "machine pm-cpu: system 42 is not "
                                   "slurm, pbs, single_node or login"));
}
END_TEST

START_TEST (real_edges_default)
{
    /* NULL env: this process's own environment and host; this test runs
     * outside any job, or inside one with a local proof. */
    F.par.system = BERTH_SYSTEM_SINGLE_NODE;
    F.par.cores_per_node = 0;
    struct allocation *a = NULL;
    ck_assert_int_eq (allocation_discover (&F.par, NULL, NULL, &a, NULL), 0);
    ck_assert_int_ge (a->nodes[0].ncores, 1);
    ck_assert_int_gt (a->nodes[0].memory_credited_mb, 0);
    allocation_destroy (a);
}
END_TEST

/* ---- view ------------------------------------------------------------- */

/* The allocation event's nodes: runs of like nodes whose names follow one
 * another are one entry; the event decoded gives every node back, as
 * allocation_to_json lists them. */
START_TEST (node_runs_round_trip)
{
    slurm_job ("nid[000001-000004],nid000006,login1");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    F.par.gpus_per_node = 4;
    fake_set ("SLURM_JOB_CPUS_PER_NODE=%s", "128(x2),64,128(x3)");
    struct allocation *a = discover ();
    ck_assert_int_eq (a->nnodes, 6);
    json_t *runs = allocation_node_runs (a);
    char *text = json_dumps (runs, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq (text,
        "[{\"cores\":\"0-127\",\"count\":2,\"gpus\":4,\"names\":\"nid[000001-000002]\",\"ncores\":128},"
        "{\"cores\":\"0-63\",\"gpus\":4,\"name\":\"nid000003\",\"ncores\":64},"
        "{\"cores\":\"0-127\",\"gpus\":4,\"name\":\"nid000004\",\"ncores\":128},"
        "{\"cores\":\"0-127\",\"gpus\":4,\"name\":\"nid000006\",\"ncores\":128},"
        "{\"cores\":\"0-127\",\"gpus\":4,\"name\":\"login1\",\"ncores\":128}]");
    free (text);

    json_t *line = proto_event_allocation (5, "4242", "pm-cpu", runs);
    struct proto_event ev;
    berth_error_t e;
    ck_assert_int_eq (proto_decode_event (line, &ev, &e), 0);
    json_t *view = allocation_to_json (a), *n;
    json_t *nodes = json_object_get (view, "nodes");
    size_t i;
    ck_assert_int_eq (json_array_size (ev.nodes), json_array_size (nodes));
    json_array_foreach (nodes, i, n) {
        json_t *want = json_pack ("{s:O s:O s:O s:O}", "name", json_object_get (n, "name"),
                                  "cores", json_object_get (n, "cores"), "ncores",
                                  json_object_get (n, "ncores"), "gpus",
                                  json_object_get (n, "gpus"));
        ck_assert (json_equal (want, json_array_get (ev.nodes, i)));
        json_decref (want);
    }
    proto_event_free (&ev);
    json_decref (view);
    json_decref (line);
    allocation_destroy (a);
}
END_TEST

START_TEST (json_view)
{
    slurm_job ("nid[000001-000003]");
    fake_set ("SLURMD_NODENAME=%s", "nid000001");
    F.par.gpus_per_node = 4;
    fake_set ("SLURM_JOB_CPUS_PER_NODE=%s", "128(x2),64");
    struct allocation *a = discover ();
    json_t *o = allocation_to_json (a);
    const char *machine, *system, *job, *liveness, *local, *nodelist, *name,
        *cores;
    json_t *nodes, *warnings;
    int ncores, gpus, tn, tc, tg, mpi;
    json_int_t cfg, cred, tcfg, tcred;
    ck_assert_int_eq (json_unpack (o, "{s:s s:s s:s s:s s:s s:s s:o s:{s:i s:i "
                                   "s:i s:I s:I} s:b s:o !}",
                                   "machine", &machine, "system", &system,
                                   "job_id", &job, "liveness", &liveness,
                                   "local_node", &local, "nodelist", &nodelist,
                                   "nodes", &nodes, "totals", "nodes", &tn,
                                   "cores", &tc, "gpus", &tg,
                                   "memory_configured_mb", &tcfg,
                                   "memory_credited_mb", &tcred,
                                   "mpi_allowed", &mpi, "warnings", &warnings),
                      0);
    ck_assert_str_eq (machine, "pm-cpu");
    ck_assert_str_eq (system, "slurm");
    ck_assert_str_eq (job, "4242");
    ck_assert_str_eq (liveness, "local proof: SLURMD_NODENAME");
    ck_assert_str_eq (local, "nid000001");
    ck_assert_str_eq (nodelist, "nid[000001-000003]");
    ck_assert_int_eq (tn, 3);
    ck_assert_int_eq (tc, 320);
    ck_assert_int_eq (tg, 12);
    ck_assert_int_eq (tcfg, 600000);
    ck_assert_int_eq (tcred, 600000);
    ck_assert (mpi);
    ck_assert_int_eq (json_array_size (nodes), 3);
    ck_assert_int_eq (json_array_size (warnings), 1);
    ck_assert_int_eq (json_unpack (json_array_get (nodes, 2),
                                   "{s:s s:s s:i s:i s:I s:I !}", "name", &name,
                                   "cores", &cores, "ncores", &ncores, "gpus",
                                   &gpus, "memory_configured_mb", &cfg,
                                   "memory_credited_mb", &cred),
                      0);
    ck_assert_str_eq (name, "nid000003");
    ck_assert_str_eq (cores, "0-63");
    ck_assert_int_eq (ncores, 64);
    ck_assert_int_eq (gpus, 4);
    ck_assert_int_eq (cfg, 200000);
    json_decref (o);
    allocation_destroy (a);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("allocation");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, proof_by_slurmd_nodename_makes_no_call);
    tcase_add_test (tc, proof_by_host_in_node_list_short_names);
    tcase_add_test (tc, proof_by_cgroup_on_a_shared_host);
    tcase_add_test (tc, cgroup_of_another_job_is_no_proof);
    tcase_add_test (tc, one_query_proves_a_remote_allocation);
    tcase_add_test (tc, dead_job_one_call_then_login);
    tcase_add_test (tc, no_record_is_not_live);
    tcase_add_test (tc, dead_job_refused_by_the_daemon);
    tcase_add_test (tc, purged_job_two_calls_then_login);
    tcase_add_test (tc, account_looked_up_only_for_a_query);
    tcase_add_test (tc, unreachable_scheduler_is_an_error);
    tcase_add_test (tc, hung_scheduler_times_out);
    tcase_add_test (tc, no_squeue_at_all);
    tcase_add_test (tc, no_job_id_is_a_login_node);
    tcase_add_test (tc, node_count_variables);
    tcase_add_test (tc, malformed_node_list_falls_back);
    tcase_add_test (tc, count_without_names);
    tcase_add_test (tc, squeue_node_count_as_last_resort);
    tcase_add_test (tc, cpus_per_node_below_config);
    tcase_add_test (tc, cpus_per_node_unusable);
    tcase_add_test (tc, config_without_cores_takes_environment);
    tcase_add_test (tc, no_core_count_anywhere);
    tcase_add_test (tc, frontier_held_back_cores_apply_to_every_node);
    tcase_add_test (tc, far_fewer_cores_numbered_from_zero);
    tcase_add_test (tc, fewer_cores_used_with_warning);
    tcase_add_test (tc, credited_memory_below_config);
    tcase_add_test (tc, memory_unknown_stays_unknown);
    tcase_add_test (tc, unreadable_memory_is_a_warning);
    tcase_add_test (tc, pbs_node_file);
    tcase_add_test (tc, pbs_qstat_fallback);
    tcase_add_test (tc, pbs_errors);
    tcase_add_test (tc, pbs_empty_node_file_asks_qstat);
    tcase_add_test (tc, pbs_without_job_is_login);
    tcase_add_test (tc, single_node_cores_and_memory);
    tcase_add_test (tc, login_system);
    tcase_add_test (tc, no_usable_core_at_all);
    tcase_add_test (tc, unknown_system);
    tcase_add_test (tc, real_edges_default);
    tcase_add_test (tc, json_view);
    tcase_add_test (tc, node_runs_round_trip);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
