/* SPDX-License-Identifier: MIT */
/* Detecting what the installed launcher can do: running it once per process
 * (`srun --version`, `<launcher> --version`) and looking for taskset on
 * PATH; the text is parsed by launcher.c. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher_detect.h"
#include "run_command.h"

#define PROBE_TIMEOUT_MS 5000

/* `<exe> --version` through run_command (no shell, killed after the
 * timeout); stdout then stderr in out. -1 when it did not run or exit 0. */
static int probe_version (const char *exe, char *out, size_t size)
{
    const char *argv[] = { exe, "--version", NULL };
    struct run_output res;
    out[0] = '\0';
    if (run_command (argv, NULL, PROBE_TIMEOUT_MS / 1000.0, &res, NULL, NULL) < 0)
        return -1;
    snprintf (out, size, "%s%s", res.out, res.err);
    run_output_free (&res);
    return 0;
}

static bool on_path (const char *prog)
{
    char *full = run_command_find (prog, getenv ("PATH"));
    bool found = full != NULL;
    free (full);
    return found;
}

static void detect_slurm (struct launcher_caps *caps)
{
    char out[1024];
    int a, b, c;
    if (probe_version ("srun", out, sizeof (out)) < 0) {
        launcher_caps_none (caps, "no usable srun");
        return;
    }
    if (launcher_parse_srun_version (out, &a, &b, &c) < 0) {
        launcher_caps_none (caps, "srun version unparsable");
        return;
    }
    launcher_caps_from_slurm (a, b, c, caps);
}

/* `<first word of exe> --version`, as probe_version; -1 when exe has none. */
static int probe_launcher (const char *exe, char *out, size_t size)
{
    char word[256];
    size_t n = exe ? strcspn (exe, " ") : 0;
    out[0] = '\0';
    if (n == 0 || n >= sizeof (word))
        return -1;
    memcpy (word, exe, n);
    word[n] = '\0';
    return probe_version (word, out, size);
}

static void detect_pals (const char *exe, struct launcher_caps *caps)
{
    char out[2048];
    launcher_caps_none (caps, "not pals");
    if (probe_launcher (exe, out, sizeof (out)) == 0
        && launcher_output_is_pals (out)) {
        launcher_caps_none (caps, "pals");
        caps->pals = true;
        caps->placement = PLACEMENT_CPU_BINDING;
    }
}

/* taskset on PATH, and which MPI the machine's launcher is. */
static void detect_single_node (const char *exe, struct launcher_caps *caps)
{
    char out[2048];
    bool taskset = on_path ("taskset");
    enum mpi_flavour mpi = MPI_UNKNOWN;
    if (probe_launcher (exe, out, sizeof (out)) == 0)
        mpi = launcher_output_mpi (out);
    launcher_caps_none (caps, "");
    snprintf (caps->desc, sizeof (caps->desc), "%s%s%s",
              taskset ? "taskset" : "no taskset",
              mpi != MPI_UNKNOWN ? ", " : "",
              mpi != MPI_UNKNOWN ? mpi_flavour_name (mpi) : "");
    caps->taskset = taskset;
    caps->mpi = mpi;
    if (taskset)
        caps->placement = PLACEMENT_CPU_BINDING;
}

/* One detection per process and launcher; not thread-safe (callers detect
 * once at start-up). */
static struct {
    bool valid;
    enum berth_system system;
    char exe[256];
    struct launcher_caps caps;
} cache;

void launcher_detect_forget (void)
{
    cache.valid = false;
}

void launcher_detect (const struct machine *m, struct launcher_caps *caps)
{
    enum berth_system sys = m->par.system;
    const char *exe = m->par.parallel_executable ? m->par.parallel_executable : "";

    if (cache.valid && cache.system == sys && strcmp (cache.exe, exe) == 0) {
        *caps = cache.caps;
        return;
    }
    switch (sys) {
    case BERTH_SYSTEM_SLURM:
        detect_slurm (caps);
        break;
    case BERTH_SYSTEM_PBS:
        detect_pals (exe, caps);
        break;
    case BERTH_SYSTEM_SINGLE_NODE:
        detect_single_node (exe, caps);
        break;
    default:
        launcher_caps_none (caps, "login node");
        break;
    }
    cache.valid = true;
    cache.system = sys;
    snprintf (cache.exe, sizeof (cache.exe), "%s", exe);
    cache.caps = *caps;
}
