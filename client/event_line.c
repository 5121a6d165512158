/* SPDX-License-Identifier: MIT */
/* One event, one line: the time, the kind in a column, then what a person
 * asks of that kind (which lease, which step, how big, why). */
#include <string.h>
#include <time.h>

#include "event_line.h"

static const char *str (const json_t *o, const char *key, const char *none)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : none;
}

static void when (FILE *f, double t)
{
    char buf[32] = "?";
    time_t s = (time_t) t;
    struct tm tm;
    if (t >= 0 && localtime_r (&s, &tm))
        strftime (buf, sizeof (buf), "%Y-%m-%d %H:%M:%S", &tm);
    int ms = (int) ((t - (double) s) * 1000);
    fprintf (f, "%s.%03d", buf, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

static void placement (FILE *f, const json_t *p)
{
    const json_t *nodes = json_object_get (p, "nodes"), *cores = json_object_get (p, "cores");
    size_t n = json_array_size (nodes), i;
    long long ncores = 0;
    const json_t *c;
    json_array_foreach (cores, i, c)
        ncores += (long long) json_array_size (c);
    fprintf (f, "%lld core%s", ncores, ncores == 1 ? "" : "s");
    long long gpus = json_integer_value (json_object_get (p, "gpus"));
    if (gpus > 0)
        fprintf (f, ", %lld GPU%s", gpus, gpus == 1 ? "" : "s");
    if (n > 0) {
        const char *first = json_string_value (json_array_get (nodes, 0));
        fprintf (f, " on %s", first ? first : "?");
    }
    if (n > 1)
        fprintf (f, " (+%zu node%s)", n - 1, n == 2 ? "" : "s");
}

void event_line_print (FILE *f, const json_t *ev)
{
    const char *kind = str (ev, "event", "?");
    const char *label = str (ev, "label", NULL);
    when (f, json_number_value (json_object_get (ev, "time")));
    fprintf (f, " %-10s", kind);
    if (!strcmp (kind, "granted")) {
        fprintf (f, " %s %s: ", str (ev, "lease", "?"), label ? label : "(no label)");
        placement (f, json_object_get (ev, "placement"));
    } else if (!strcmp (kind, "released")) {
        fprintf (f, " %s %s (%s)", str (ev, "lease", "?"), label ? label : "(no label)",
                 str (ev, "reason", "released"));
    } else if (!strcmp (kind, "waited")) {
        json_int_t pos = json_integer_value (json_object_get (ev, "position"));
        const char *why = str (ev, "why", "");
        fprintf (f, " %s #%lld%s%s", label ? label : "(no label)", (long long) pos,
                 *why ? ": " : "", why);
    } else if (!strcmp (kind, "refused")) {
        const json_t *e = json_object_get (ev, "error");
        fprintf (f, " %s: %s: %s", label ? label : "(no label)", str (e, "code", "?"),
                 str (e, "message", ""));
    } else if (!strcmp (kind, "allocation")) {
        const json_t *nodes = json_object_get (ev, "nodes"), *n;
        size_t i;
        long long cores = 0, gpus = 0, count = 0;
        json_array_foreach (nodes, i, n) {      /* a node, or a run of them */
            json_int_t k = json_object_get (n, "names")
                               ? json_integer_value (json_object_get (n, "count")) : 1;
            count += k;
            cores += k * json_integer_value (json_object_get (n, "ncores"));
            gpus += k * json_integer_value (json_object_get (n, "gpus"));
        }
        fprintf (f, " berthd started: job %s on %s, %lld node%s, %lld cores, %lld GPUs",
                 str (ev, "job_id", "(none)"), str (ev, "machine", "?"), count,
                 count == 1 ? "" : "s", cores, gpus);
    } else
        fprintf (f, " (%zu members)", json_object_size (ev));
    fputc ('\n', f);
}
