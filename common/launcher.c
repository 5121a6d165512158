/* SPDX-License-Identifier: MIT */
/* What the installed launcher can do, parsed from version text and
 * --launcher-version values. Running the launcher to learn it is
 * sys/launcher_detect.c. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"

const char *placement_support_name (enum placement_support s)
{
    switch (s) {
    case PLACEMENT_CPU_BINDING: return "CPU_BINDING";
    case PLACEMENT_SCHEDULER: return "SCHEDULER";
    default: return "NONE";
    }
}

const char *memcap_support_name (enum memcap_support s)
{
    return s == MEMCAP_ENFORCED ? "ENFORCED" : "NONE";
}

const char *mpi_flavour_name (enum mpi_flavour f)
{
    switch (f) {
    case MPI_OPENMPI: return "openmpi";
    case MPI_MPICH: return "mpich";
    default: return "unknown";
    }
}

void launcher_caps_none (struct launcher_caps *caps, const char *desc)
{
    memset (caps, 0, sizeof (*caps));
    caps->placement = PLACEMENT_NONE;
    caps->memcap = MEMCAP_NONE;
    caps->slurm_major = caps->slurm_minor = caps->slurm_micro = -1;
    snprintf (caps->desc, sizeof (caps->desc), "%s", desc);
}

void launcher_caps_from_slurm (int major, int minor, int micro,
                               struct launcher_caps *caps)
{
    if (major < 0 || minor < 0) {
        launcher_caps_none (caps, "no usable srun");
        return;
    }
    launcher_caps_none (caps, "");
    caps->slurm_major = major;
    caps->slurm_minor = minor;
    caps->slurm_micro = micro;
    if (micro >= 0)
        snprintf (caps->desc, sizeof (caps->desc), "slurm %d.%02d.%d", major, minor,
                  micro);
    else
        snprintf (caps->desc, sizeof (caps->desc), "slurm %d.%02d", major, minor);
    long v = major * 100L + minor;
    if (v < 2011)
        caps->placement = PLACEMENT_CPU_BINDING;    /* no --exact, no step --mem */
    else {
        caps->memcap = MEMCAP_ENFORCED;
        /* --exact arrived in 20.11.3; an unknown micro of 20.11 may predate it */
        caps->placement = v == 2011 && micro < 3 ? PLACEMENT_CPU_BINDING
                                                 : PLACEMENT_SCHEDULER;
    }
}

int launcher_parse_srun_version (const char *text, int *major, int *minor,
                                 int *micro)
{
    for (const char *p = text; p && *p; p++) {
        if (!isdigit ((unsigned char)*p) || (p > text && isdigit ((unsigned char)p[-1])))
            continue;
        char *end;
        long a = strtol (p, &end, 10);
        if (*end != '.' || !isdigit ((unsigned char)end[1]))
            continue;
        long b = strtol (end + 1, &end, 10), c = -1;
        if (*end == '.' && isdigit ((unsigned char)end[1]))
            c = strtol (end + 1, &end, 10);
        if (a > 9999 || b > 99 || c > 9999)
            return -1;
        *major = (int)a;
        *minor = (int)b;
        *micro = (int)c;
        return 0;
    }
    return -1;
}

bool launcher_output_is_pals (const char *text)
{
    static const char key[] = "mpiexec version ";
    for (const char *line = text; line && *line;) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp (p, key, sizeof (key) - 1) == 0
            && isdigit ((unsigned char)p[sizeof (key) - 1]))
            return true;
        line = strchr (line, '\n');
        if (line)
            line++;
    }
    return false;
}

enum mpi_flavour launcher_output_mpi (const char *text)
{
    /* Open MPI: "mpirun (Open MPI) 4.1.4"; MPICH's hydra: "HYDRA build
     * details:" (mpiexec.hydra, mpirun.mpich), or an "MPICH Version" line */
    if (!text)
        return MPI_UNKNOWN;
    if (strstr (text, "Open MPI") || strstr (text, "OpenRTE"))
        return MPI_OPENMPI;
    if (strstr (text, "HYDRA") || strstr (text, "MPICH"))
        return MPI_MPICH;
    return MPI_UNKNOWN;
}

/* Exactly MAJOR.MINOR or MAJOR.MINOR.MICRO (micro -1 when absent). */
static int parse_version_exact (const char *v, int *major, int *minor, int *micro)
{
    long part[3] = { -1, -1, -1 };
    int n = 0;
    for (;;) {
        if (!isdigit ((unsigned char)*v) || n == 3)
            return -1;
        char *end;
        part[n++] = strtol (v, &end, 10);
        if (part[n - 1] > 9999)
            return -1;
        if (*end == '\0')
            break;
        if (*end != '.')
            return -1;
        v = end + 1;
    }
    if (n < 2)
        return -1;
    *major = (int)part[0];
    *minor = (int)part[1];
    *micro = (int)part[2];
    return 0;
}

int launcher_caps_parse (const char *spec, enum berth_system system,
                         struct launcher_caps *caps, berth_error_t *err)
{
    static const char *sys_names[] = { "slurm", "pbs", "single_node", "login" };
    const char *sys = (unsigned)system < 4 ? sys_names[system] : "unknown";
    const char *fits = system == BERTH_SYSTEM_SLURM ? "slurm:MAJOR.MINOR[.MICRO] or none"
                     : system == BERTH_SYSTEM_PBS ? "pals or none"
                     : system == BERTH_SYSTEM_SINGLE_NODE
                         ? "openmpi, mpich, taskset or none"
                     : "none";
    struct launcher_caps c;

    if (!spec)
        spec = "";
    if (strncmp (spec, "slurm:", 6) == 0) {
        int a, b, m;
        if (parse_version_exact (spec + 6, &a, &b, &m) < 0)
            return errprintf_code (err, "launcher",
                                   "launcher version \"%s\": expected slurm:MAJOR.MINOR"
                                   "[.MICRO], e.g. slurm:22.05 or slurm:20.11.2", spec);
        if (system != BERTH_SYSTEM_SLURM && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        launcher_caps_from_slurm (a, b, m, &c);
    }
    else if (strcmp (spec, "pals") == 0) {
        if (system != BERTH_SYSTEM_PBS && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        launcher_caps_none (&c, "pals");
        c.pals = true;
        c.placement = PLACEMENT_CPU_BINDING;
    }
    else if (strcmp (spec, "taskset") == 0) {
        if (system != BERTH_SYSTEM_SINGLE_NODE && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        launcher_caps_none (&c, "taskset");
        c.taskset = true;
        c.placement = PLACEMENT_CPU_BINDING;
    }
    else if (strcmp (spec, "openmpi") == 0 || strcmp (spec, "mpich") == 0) {
        if (system != BERTH_SYSTEM_SINGLE_NODE && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        bool ompi = spec[0] == 'o';
        launcher_caps_none (&c, ompi ? "taskset, openmpi" : "taskset, mpich");
        c.taskset = true;
        c.mpi = ompi ? MPI_OPENMPI : MPI_MPICH;
        c.placement = PLACEMENT_CPU_BINDING;
    }
    else if (strcmp (spec, "none") == 0)
        launcher_caps_none (&c, system == BERTH_SYSTEM_SLURM ? "no srun" : "none");
    else
        return errprintf_code (err, "launcher",
                               "launcher version \"%s\" is not known; for a %s machine "
                               "give %s", spec, sys, fits);
    if (system == BERTH_SYSTEM_LOGIN) {
        /* a login node launches nothing in parallel, whatever is installed */
        c.placement = PLACEMENT_NONE;
        c.memcap = MEMCAP_NONE;
    }
    *caps = c;
    return 0;
misfit:
    return errprintf_code (err, "launcher",
                           "launcher version \"%s\" does not fit a %s machine; give %s",
                           spec, sys, fits);
}
