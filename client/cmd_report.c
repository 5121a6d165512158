/* berth report: a run's timeline from berthd's events log, as text figures
 * and, on request, an SVG picture or an HTML page around it. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "report_events.h"
#include "report_svg.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth report EVENTS [--svg FILE | --html FILE] [--cores] [--allocation FILE]\n"
"            [--title TEXT]\n"
"Summarise a run from berthd's events log (events.jsonl in its state directory):\n"
"makespan, mean utilisation and longest wait, and draw its timeline: one row per\n"
"node (steps side by side stacked in lanes), each step a bar with its label, its\n"
"wait hatched before it, and the share of the node's cores held beneath.\n\n"
"  --svg FILE         write the timeline as SVG ('-': standard output)\n"
"  --html FILE        write it as an HTML page with the figures ('-': standard output)\n"
"  --cores            one row per core id instead of one per node\n"
"  --allocation FILE  `berth status --json` saved during the run: draws every node\n"
"                     and core of the allocation (else only those steps used)\n"
"  --title TEXT       the picture's title (default: the events file's name)\n"
"  -h, --help         this text\n");
}

enum { OPT_SVG = 256, OPT_HTML, OPT_CORES, OPT_ALLOCATION, OPT_TITLE };

static const struct option options[] = {
    { "svg", required_argument, NULL, OPT_SVG },
    { "html", required_argument, NULL, OPT_HTML },
    { "cores", no_argument, NULL, OPT_CORES },
    { "allocation", required_argument, NULL, OPT_ALLOCATION },
    { "title", required_argument, NULL, OPT_TITLE },
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

int cmd_report (int argc, char **argv)
{
    const char *svg = NULL, *html = NULL, *allocation = NULL, *title = NULL;
    struct report_picture pic = { false, NULL };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case OPT_SVG: svg = optarg; break;
        case OPT_HTML: html = optarg; break;
        case OPT_CORES: pic.cores = true; break;
        case OPT_ALLOCATION: allocation = optarg; break;
        case OPT_TITLE: title = optarg; break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            return cli_bad_option ("report", argv);
        }
    }
    if (optind >= argc)
        return cli_fail (2, "report", "no events log given; berthd writes events.jsonl "
                         "in its state directory (berth status --json shows it as state_dir)");
    if (optind + 1 < argc)
        return cli_fail (2, "report", "unexpected argument '%s'", argv[optind + 1]);
    if (svg && html)
        return cli_fail (2, "report", "--svg and --html are two outputs; give one "
                         "(the HTML page holds the SVG)");
    const char *events = argv[optind];
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
    if (allocation && load_allocation (&run, allocation)) {
        report_run_free (&run);
        return 1;
    }
    report_layout (&run);
    struct report_summary sum;
    report_summarise (&run, &sum);
    const char *slash = strrchr (events, '/');
    pic.title = title ? title : slash ? slash + 1 : events;
    const char *out = svg ? svg : html;
    rc = 0;
    if (!out || strcmp (out, "-"))
        report_summary_print (stdout, &run, &sum);
    if (out) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream (&buf, &len);
        if (m) {
            (svg ? report_svg : report_html) (m, &run, &sum, &pic);
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
