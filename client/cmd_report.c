/* SPDX-License-Identifier: MIT */
/* berth report: a run's timeline from berthd's events log, as text figures
 * and, on request, an SVG picture or an HTML page around it. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "report_events.h"
#include "report_svg.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth report EVENTS [--svg FILE | --html FILE | --json] [--cores]\n"
"            [--since WHEN] [--until WHEN] [--run N] [--label PATTERN]...\n"
"            [--allocation FILE] [--title TEXT]\n"
"Summarise a run from berthd's events log (events.jsonl in its state directory):\n"
"makespan, mean utilisation and longest wait, and draw its timeline: one row per\n"
"node (steps side by side stacked in lanes), each step a bar with its label, its\n"
"wait hatched before it, and the share of the node's cores held beneath.\n\n"
"  --svg FILE         write the timeline as SVG ('-': standard output)\n"
"  --html FILE        write it as an HTML page with the figures ('-': standard output)\n"
"  --json             the figures as JSON on standard output: makespan,\n"
"                     utilisation, per step its times, wait and cores, per label\n"
"                     family its steps, core-seconds and waits\n"
"  --cores            one row per core id instead of one per node\n"
"  --since WHEN, --until WHEN\n"
"                     only this window of the log: Unix seconds, an offset from\n"
"                     the log's start or end (+90, +5m, -1h30m) or a local time\n"
"                     (2026-12-01 21:05[:30])\n"
"  --run N            only the Nth batch of steps (-1 or 'last': the last); a\n"
"                     batch ends where nothing is held or waiting for 60 s\n"
"  --label PATTERN    only steps whose label matches the shell pattern (again:\n"
"                     any of them), e.g. --label 'ocean_*'\n"
"  --allocation FILE  `berth status --json` saved during the run: draws every node\n"
"                     and core of it; by default the allocation berthd logged when\n"
"                     it started (else only the nodes steps used)\n"
"  --title TEXT       the picture's title (default: the events file's name)\n"
"  -h, --help         this text\n");
}

enum { OPT_SVG = 256, OPT_HTML, OPT_CORES, OPT_ALLOCATION, OPT_TITLE, OPT_JSON, OPT_SINCE,
       OPT_UNTIL, OPT_RUN, OPT_LABEL };

static const struct option options[] = {
    { "svg", required_argument, NULL, OPT_SVG },
    { "html", required_argument, NULL, OPT_HTML },
    { "cores", no_argument, NULL, OPT_CORES },
    { "allocation", required_argument, NULL, OPT_ALLOCATION },
    { "title", required_argument, NULL, OPT_TITLE },
    { "json", no_argument, NULL, OPT_JSON },
    { "since", required_argument, NULL, OPT_SINCE },
    { "until", required_argument, NULL, OPT_UNTIL },
    { "run", required_argument, NULL, OPT_RUN },
    { "label", required_argument, NULL, OPT_LABEL },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static char *slurp (const char *path)
{
    FILE *f = strcmp (path, "-") ? fopen (path, "r") : stdin;
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 131072;
            char *b = realloc (buf, cap);
            if (!b) {
                free (buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = b;
        }
        n = fread (buf + len, 1, 65536, f);
        len += n;
    } while (n > 0);
    int bad = buf && ferror (f);
    if (f != stdin)
        fclose (f);
    if (bad) {
        free (buf);
        errno = EIO;
        return NULL;
    }
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* All of the picture or nothing: written beside the target, then renamed. */
static int write_out (const char *path, const char *text, size_t len)
{
    if (!strcmp (path, "-"))
        return fwrite (text, 1, len, stdout) == len && fflush (stdout) == 0 ? 0 : -1;
    size_t n = strlen (path) + 16;
    char *tmp = malloc (n);
    if (!tmp)
        return -1;
    snprintf (tmp, n, "%s.tmp%d", path, (int) getpid ());
    FILE *f = fopen (tmp, "w");
    int rc = f && fwrite (text, 1, len, f) == len ? 0 : -1;
    if (f && fclose (f) != 0)
        rc = -1;
    if (rc == 0 && rename (tmp, path) < 0)
        rc = -1;
    if (rc < 0) {
        int e = errno;
        unlink (tmp);
        errno = e;
    }
    free (tmp);
    return rc;
}

static int load_allocation (struct report_run *run, const char *path)
{
    json_error_t je;
    json_t *st = json_load_file (path, 0, &je);
    if (!st)
        return cli_fail (1, "report", "cannot read the allocation %s: %s (line %d)",
                         path, je.text, je.line);
    berth_error_t err;
    int rc = report_set_allocation (run, st, &err);
    json_decref (st);
    if (rc < 0)
        return cli_fail (1, "report", "%s: %s", path, err.text);
    return 0;
}

struct report_opts {
    const char *svg, *html, *allocation, *title, *since, *until, *batch;
    const char **labels;
    int nlabels;
    bool json;
    struct report_picture pic;
};

/* The window and labels of the options, against the log's span. */
static int select_steps (struct report_run *run, const struct report_opts *o)
{
    struct report_filter f = { NAN, NAN, 0, o->labels, o->nlabels };
    berth_error_t err;
    if (o->since && report_parse_when (o->since, run->t0, run->t1, &f.since, &err) < 0)
        return cli_fail (2, "report", "--since: %s", err.text);
    if (o->until && report_parse_when (o->until, run->t0, run->t1, &f.until, &err) < 0)
        return cli_fail (2, "report", "--until: %s", err.text);
    if (o->batch) {
        char *end;
        long n = strtol (o->batch, &end, 10);
        if (!strcmp (o->batch, "last"))
            n = -1;
        else if (end == o->batch || *end || n == 0 || n < -1000000 || n > 1000000)
            return cli_fail (2, "report", "--run wants a batch number (1 the first, -1 or "
                             "'last' the last), got '%s'", o->batch);
        f.run = (int) n;
    }
    if (!o->since && !o->until && !o->batch && !o->nlabels)
        return 0;
    if (report_select (run, &f, &err) < 0)
        return cli_fail (1, "report", "%s", err.text);
    return 0;
}

static int report_events_file (const char *events, struct report_opts *o)
{
    char *text = slurp (events);
    if (!text)
        return cli_fail (1, "report", "cannot read the events log %s: %s", events,
                         strerror (errno));
    struct report_run run;
    berth_error_t err;
    int rc = report_parse (text, &run, &err);
    free (text);
    if (rc < 0)
        return cli_fail (1, "report", "%s: %s", events, err.text);
    if ((rc = select_steps (&run, o)) != 0) {
        report_run_free (&run);
        return rc;
    }
    const json_t *logged = report_log_allocation (&run);
    if (o->allocation && load_allocation (&run, o->allocation)) {
        report_run_free (&run);
        return 1;
    }
    if (!o->allocation && logged && report_add_allocation (&run, logged, &err) < 0) {
        report_run_free (&run);
        return cli_fail (1, "report", "%s: %s", events, err.text);
    }
    report_layout (&run);
    struct report_summary sum;
    report_summarise (&run, &sum);
    const char *slash = strrchr (events, '/');
    o->pic.title = o->title ? o->title : slash ? slash + 1 : events;
    const char *out = o->svg ? o->svg : o->html;
    rc = 0;
    if (o->json) {
        json_t *j = report_json (&run, &sum);
        if (!j)
            rc = cli_fail (1, "report", "out of memory writing the figures");
        else
            cli_print_json (j);
        json_decref (j);
    } else if (!out || strcmp (out, "-"))
        report_summary_print (stdout, &run, &sum);
    if (out && rc == 0) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream (&buf, &len);
        if (m) {
            (o->svg ? report_svg : report_html) (m, &run, &sum, &o->pic);
            fclose (m);
        }
        if (!m || !buf)
            rc = cli_fail (1, "report", "out of memory drawing the timeline");
        else if (write_out (out, buf, len) < 0)
            rc = cli_fail (1, "report", "cannot write %s: %s", out, strerror (errno));
        free (buf);
    }
    report_run_free (&run);
    return rc;
}

static int report_args (int argc, char **argv, struct report_opts *o)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "h", options)) != -1) {
        switch (c) {
        case OPT_SVG: o->svg = optarg; break;
        case OPT_HTML: o->html = optarg; break;
        case OPT_CORES: o->pic.cores = true; break;
        case OPT_ALLOCATION: o->allocation = optarg; break;
        case OPT_TITLE: o->title = optarg; break;
        case OPT_JSON: o->json = true; break;
        case OPT_SINCE: o->since = optarg; break;
        case OPT_UNTIL: o->until = optarg; break;
        case OPT_RUN: o->batch = optarg; break;
        case OPT_LABEL: o->labels[o->nlabels++] = optarg; break;
        case 'h':
            usage (stdout);
            return -1;
        default:
            return cli_bad_option ("report", argv);
        }
    }
    if (optind >= argc)
        return cli_fail (2, "report", "no events log given; berthd writes events.jsonl "
                         "in its state directory (berth status --json shows it as state_dir)");
    if (optind + 1 < argc)
        return cli_fail (2, "report", "unexpected argument '%s'", argv[optind + 1]);
    if (o->svg && o->html)
        return cli_fail (2, "report", "--svg and --html are two outputs; give one "
                         "(the HTML page holds the SVG)");
    if (o->json && ((o->svg && !strcmp (o->svg, "-")) || (o->html && !strcmp (o->html, "-"))))
        return cli_fail (2, "report", "--json writes to standard output; give --svg or "
                         "--html a file");
    return 0;
}

int cmd_report (int argc, char **argv)
{
    struct report_opts o = { 0 };
    o.labels = calloc ((size_t) argc + 1, sizeof (char *));
    if (!o.labels)
        return cli_fail (1, "report", "out of memory");
    int rc = report_args (argc, argv, &o);
    if (rc == 0)
        rc = report_events_file (argv[optind], &o);
    free (o.labels);
    return rc < 0 ? 0 : rc;
}
